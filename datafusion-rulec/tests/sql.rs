//! The functions in a DataFusion session over the example contracts and
//! records (`cli/tests/data/records.ndjson`, read by DataFusion's own
//! NDJSON reader): every call that cannot be planned is refused while
//! planning with a message naming what is wrong (one snapshot of them
//! all), the calls that plan give the batch engine's results, and a
//! result read field by field is evaluated once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::prelude::{SessionConfig, SessionContext};
use runtime::ContractSet;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

fn contracts() -> Arc<ContractSet> {
    let engine = runtime::Engine::builder()
        .jit(runtime::Jit::On)
        .native(Arc::new(backend::Jit::new()))
        .models(Arc::new(models::Tract::new()))
        .build();
    let mut compile = |path: &Path, text: &str| {
        let compiled = frontend::compile_file(&path.display().to_string(), text);
        compiled.bundle.ok_or_else(|| compiled.diagnostics.render(false))
    };
    let set = ContractSet::load(&engine, &[root().join("examples/contracts")], &mut compile).expect("loads");
    Arc::new(set)
}

/// A session with the functions and `transfers`, the example records.
async fn session() -> SessionContext {
    let contracts = contracts();
    let state =
        datafusion_rulec::sql::session_state(&contracts, SessionConfig::new().with_target_partitions(2))
            .expect("a state");
    let ctx = datafusion_rulec::sql::context(state);
    let records = root().join("cli/tests/data/records.ndjson");
    let options = datafusion::prelude::JsonReadOptions::default().file_extension(".ndjson");
    ctx.register_json("transfers", records.to_str().expect("UTF-8"), options).await.expect("records");
    ctx
}

const RECORD: &str = "named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)";

/// Calls that do not plan, by what is wrong with them.
fn refused() -> Vec<(&'static str, String)> {
    let transfer = |channel: &str, record: &str| {
        format!("SELECT rulec('acme.payments.transfer', {channel}, {record}) FROM transfers")
    };
    vec![
        ("a required field missing", transfer("'batch'", "named_struct('currency', currency)")),
        (
            "a field of the wrong type",
            transfer("'batch'", &RECORD.replace("'amount', amount", "'amount', amount = '1'")),
        ),
        (
            "a float where the contract has a decimal",
            transfer("'batch'", &RECORD.replace("'amount', amount", "'amount', CAST(amount AS DOUBLE)")),
        ),
        (
            "a nested field of the wrong type",
            transfer("'batch'", &RECORD.replace("'source', source", "'source', named_struct('account', 1)")),
        ),
        ("a record that is not a struct", transfer("'batch'", "amount")),
        ("no channel for a contract with channels", transfer("NULL", RECORD)),
        ("an unknown channel", transfer("'kiosk'", RECORD)),
        ("a channel that is not a literal", transfer("currency", RECORD)),
        (
            "an unknown contract",
            format!("SELECT rulec_decision('acme.payments.transfr', 'batch', {RECORD}) FROM transfers"),
        ),
        (
            "a contract that is not a literal",
            format!("SELECT rulec(currency, 'batch', {RECORD}) FROM transfers"),
        ),
        (
            "a contract with windows",
            "SELECT rulec('acme.payments.velocity', NULL, named_struct('amount', amount)) FROM transfers"
                .into(),
        ),
    ]
}

#[tokio::test]
async fn calls_that_do_not_fit_are_refused_while_planning_naming_what_is_wrong() {
    let ctx = session().await;
    let mut shown = String::new();
    for (what, query) in refused() {
        // Planning alone (no row is read) finds each one.
        let error = match ctx.sql(&query).await {
            Ok(frame) => match frame.into_optimized_plan() {
                Ok(_) => panic!("{what}: planned: {query}"),
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        shown.push_str(&format!("{what}:\n  {query}\n  {error}\n\n"));
    }
    insta::assert_snapshot!(shown);
}

/// The rows of `query`.
async fn rows(ctx: &SessionContext, query: &str) -> Vec<RecordBatch> {
    ctx.sql(query).await.expect("plans").collect().await.expect("runs")
}

#[tokio::test]
async fn the_decision_is_the_results_decision_and_a_null_record_has_a_null_result() {
    let ctx = session().await;
    let query = format!(
        "SELECT rulec_decision('acme.payments.transfer', 'batch', {RECORD}) AS d, \
         rulec('acme.payments.transfer', 'batch', {RECORD})['decision'] AS r, \
         rulec('acme.payments.transfer', 'batch', CASE WHEN currency = 'EUR' THEN {RECORD} END) AS only_eur, \
         currency FROM transfers"
    );
    let batches = rows(&ctx, &query).await;
    let mut seen = 0;
    for batch in &batches {
        let decisions = batch.column(0).as_string::<i32>();
        let results =
            datafusion::arrow::compute::cast(batch.column(1), &datafusion::arrow::datatypes::DataType::Utf8)
                .expect("a string");
        let results = results.as_string::<i32>();
        let only_eur = batch.column(2).as_struct();
        let currencies =
            datafusion::arrow::compute::cast(batch.column(3), &datafusion::arrow::datatypes::DataType::Utf8)
                .expect("a string");
        for row in 0..batch.num_rows() {
            seen += 1;
            assert_eq!(decisions.is_valid(row), results.is_valid(row), "row {row}");
            if decisions.is_valid(row) {
                assert_eq!(decisions.value(row), results.value(row), "row {row}");
            }
            let eur = currencies.as_string::<i32>().value(row) == "EUR";
            assert_eq!(only_eur.is_valid(row), eur, "row {row}: a result only for a record");
        }
    }
    assert_eq!(seen, 7);
    // Both decisions appear among the examples.
    let counted = rows(
        &ctx,
        &format!(
            "SELECT rulec_decision('acme.payments.transfer', 'batch', {RECORD}) AS d, count(*) AS n \
             FROM transfers GROUP BY d ORDER BY d"
        ),
    )
    .await;
    let decisions: Vec<String> = counted
        .iter()
        .flat_map(|b| {
            let d = b.column(0).as_string::<i32>().clone();
            (0..b.num_rows()).map(move |r| if d.is_valid(r) { d.value(r).to_string() } else { "null".into() })
        })
        .collect();
    assert!(
        decisions.contains(&"allow".to_string()) && decisions.contains(&"deny".to_string()),
        "{decisions:?}"
    );
}

#[tokio::test]
async fn reading_several_fields_of_one_result_evaluates_the_contract_once() {
    let ctx = session().await;
    let query = format!(
        "EXPLAIN SELECT r['decision'] AS decision, r['reasons'] AS reasons, r['errors'] AS errors \
         FROM (SELECT rulec('acme.payments.transfer', 'batch', {RECORD}) AS r FROM transfers)"
    );
    let plans = datafusion::arrow::util::pretty::pretty_format_batches(&rows(&ctx, &query).await)
        .expect("printable")
        .to_string();
    let physical = plans.split("physical_plan").nth(1).expect("a physical plan");
    assert_eq!(physical.matches("rulec(").count(), 1, "{plans}");
}
