//! The pins through Ballista's plan codecs: a plan encoded by one process
//! and decoded by another carries the contracts' bundle hashes; with the
//! same contract on both sides the query runs as in process, with a
//! changed one it is refused, naming the contract, both hashes and the
//! process that refused it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{JsonReadOptions, SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use runtime::ContractSet;

const TRANSFER: &str = "acme.payments.transfer";
const RECORD: &str = "named_struct('amount', amount, 'currency', currency, 'daily_total', daily_total, \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

/// The example transfer contract, its text passed through `edit`.
fn contracts(edit: impl Fn(String) -> String) -> Arc<ContractSet> {
    let dir = tempfile::tempdir().expect("a folder");
    let text = std::fs::read_to_string(root().join("examples/contracts/acme.payments.transfer.yaml"))
        .expect("the example");
    std::fs::write(dir.path().join("transfer.yaml"), edit(text)).expect("written");
    let engine = runtime::Engine::builder().build();
    let mut compile = |path: &Path, text: &str| {
        let compiled = frontend::compile_file(&path.display().to_string(), text);
        compiled.bundle.ok_or_else(|| compiled.diagnostics.render(false))
    };
    Arc::new(ContractSet::load(&engine, &[dir.path().to_path_buf()], &mut compile).expect("loads"))
}

/// A session of `contracts` with `transfers`, the example records.
async fn session(contracts: &Arc<ContractSet>) -> SessionContext {
    let state =
        datafusion_rulec::sql::session_state(contracts, SessionConfig::new().with_target_partitions(1))
            .expect("a state");
    let ctx = datafusion_rulec::sql::context(state);
    let records = root().join("cli/tests/data/records.ndjson");
    let options = JsonReadOptions::default().file_extension(".ndjson");
    ctx.register_json("transfers", records.to_str().expect("UTF-8"), options).await.expect("records");
    ctx
}

fn query() -> String {
    format!(
        "SELECT rulec_decision('{TRANSFER}', 'batch', {RECORD}) AS decision, \
         rulec('{TRANSFER}', 'batch', {RECORD})['reasons'] AS reasons FROM transfers"
    )
}

/// The query planned by a client over `planned`, sent through the
/// codecs to a process over `held`, and run there.
async fn sent(
    planned: &Arc<ContractSet>,
    held: &Arc<ContractSet>,
) -> datafusion::error::Result<Vec<RecordBatch>> {
    let client = session(planned).await;
    let plan = client.sql(&query()).await?.into_unoptimized_plan();
    let (client_codec, _) = ballista_rulec::codecs(planned, "the client");
    let bytes = logical_plan_to_bytes_with_extension_codec(
        &plan,
        client_codec.as_ref() as &dyn LogicalExtensionCodec,
    )?;
    let executor = session(held).await;
    let (executor_codec, _) = ballista_rulec::codecs(held, "executor 127.0.0.1:50051");
    let plan =
        logical_plan_from_bytes_with_extension_codec(&bytes, &executor.task_ctx(), executor_codec.as_ref())?;
    executor.execute_logical_plan(plan).await?.collect().await
}

#[tokio::test]
async fn same_revision_runs_as_in_process() {
    let set = contracts(|text| text);
    let expected = session(&set).await.sql(&query()).await.unwrap().collect().await.unwrap();
    // Another process's own copy of the same contract: the same hash.
    let other = contracts(|text| text);
    let got = sent(&set, &other).await.expect("runs");
    assert_eq!(
        pretty_format_batches(&got).unwrap().to_string(),
        pretty_format_batches(&expected).unwrap().to_string()
    );
}

#[tokio::test]
async fn another_revision_is_refused_naming_both_hashes() {
    let planned = contracts(|text| text);
    let held = contracts(|text| text.replacen("version: 1.0.0", "version: 1.0.1", 1));
    let (old, new) = (planned.get(TRANSFER).unwrap().hash(), held.get(TRANSFER).unwrap().hash());
    assert_ne!(old, new);
    let error = sent(&planned, &held).await.expect_err("refused").to_string();
    let expected = format!(
        "contract `{TRANSFER}`: the query was planned against {old} but executor 127.0.0.1:50051 holds {new}"
    );
    assert!(error.contains(&expected), "{error}");
}

#[test]
fn pins_round_trip() {
    let set = contracts(|text| text);
    let hashes: std::collections::BTreeMap<String, String> =
        set.contracts().iter().map(|c| (c.name().to_string(), c.hash().to_string())).collect();
    let mut buf = Vec::new();
    ballista_rulec::codec::encode_pins(&hashes, &mut buf);
    assert_eq!(ballista_rulec::codec::decode_pins(&buf), Some(hashes.clone()));
    assert_eq!(ballista_rulec::codec::decode_pins(b"something else"), None);
    // A function decoded from a plan sends on the pins it was decoded with.
    let other = contracts(|text| text.replacen("version: 1.0.0", "version: 2.0.0", 1));
    let (codec, _) = ballista_rulec::codecs(&other, "scheduler 127.0.0.1:50050");
    let decoded = codec.try_decode_udf("rulec", &buf).expect("decoded");
    let mut again = Vec::new();
    codec.try_encode_udf(&decoded, &mut again).expect("encoded");
    assert_eq!(again, buf);
    // Other functions are Ballista's: nothing written.
    let mut none = Vec::new();
    let upper = datafusion::functions::string::upper();
    codec.try_encode_udf(&upper, &mut none).expect("encoded");
    assert!(none.is_empty());
}
