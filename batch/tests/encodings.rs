//! Every Arrow encoding of the same records gives the NDJSON path's
//! results, byte for byte: random records, written as NDJSON lines and as
//! an Arrow batch whose columns each take a random encoding of those
//! Arrow writers produce (large and view strings, dictionaries with any
//! key and string type, run-end encoding, large lists and list views,
//! dictionaries inside lists and structs, nulls, a batch sliced out of a
//! larger one), both evaluated by the same job.
//!
//! The contract reads most fields and never reads `unread` (a list of
//! strings: a column the column reader checks and does not lay out).
//! `PROPTEST_CASES` sets the number of batches (CI: the default 256, each
//! of up to 40 records).

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, TimeUnit};
use batch::output::Output;
use batch::source::Chunk;
use batch::{Job, OutputFormat, Settings};
use proptest::prelude::*;
use runtime::result::Parts;
use serde_json::{Value, json};

const CONTRACT: &str = r#"
contract: t.encodings
version: 1.0.0
decision: deny-overrides
default: allow
input:
  amount: decimal
  count: int
  ratio: float?
  currency: { enum: [EUR, USD, GBP] }
  name: string
  note: string?
  flag: bool?
  at: timestamp
  wait: duration?
  party:
    country: string
    level: int?
  tags: list<string>
  scores: list<int>
  unread: list<string>?
  items: 'list<{ sku: string, qty: int }>'
rules:
  - id: big
    when: amount > 100
    deny: "Amount {amount} {currency} for {name} from {party.country} at level {party.level ?? 0}, at {at}."
  - id: tagged
    when: any(tags, t => t == "x")
    finding: { code: TAGGED, severity: low, message: "Tags {tags} of {name}." }
  - id: scored
    when: sum(scores, s => s) > 10
    deny: "Scores of {name}: {sum(scores, s => s)}; count {count}; {len(scores)} of them."
  - id: noted
    when: has(note)
    finding: { code: NOTED, severity: low, message: "Note {note ?? ''}, flag {flag ?? false}, ratio {ratio ?? 0.5}." }
  - id: waited
    when: (wait ?? duration("0s")) > duration("1m")
    deny: "Waited too long, {count}."
  - id: bulk
    when: count(items, i => i.qty > 2) > 0 || any(items, i => i.sku == "A")
    deny: "{count(items, i => i.qty > 2)} bulk items of {len(items)}: {items[0].sku}."
"#;

/// A record's JSON; optional fields sometimes absent, required ones
/// rarely (an invalid record), an enum value rarely outside its set.
fn record() -> impl Strategy<Value = Value> {
    let text = || prop::sample::select(vec!["", "x", "y", "zz", "Ä", "long text with spaces", "A", "B"]);
    let maybe = |weight: u32| prop::bool::weighted(f64::from(weight) / 100.0);
    (
        (-50_000i64..50_000, -1000i64..1000, maybe(70), -1e6f64..1e6, 0usize..4, text(), maybe(50), text()),
        (maybe(60), any::<bool>(), 0i64..2_000_000_000, maybe(60), 0u32..200, maybe(95), text(), maybe(70)),
        (0i64..5, prop::collection::vec(text(), 0..4), prop::collection::vec(-5i64..10, 0..5)),
        (maybe(70), prop::collection::vec(text(), 0..6), prop::collection::vec((text(), 0i64..5), 0..3)),
        maybe(97),
    )
        .prop_map(|(a, b, c, d, valid)| {
            let (cents, count, has_ratio, ratio, currency, name, has_note, note) = a;
            let (has_flag, flag, seconds, has_wait, wait, has_at, country, has_level) = b;
            let (level, tags, scores) = c;
            let (has_unread, unread, items) = d;
            let currency = ["EUR", "USD", "GBP", "JPY"][if currency == 3 && valid { 0 } else { currency }];
            let mut r = json!({
                "amount": format!("{}.{:02}", cents / 100, (cents % 100).abs()),
                "count": count,
                "currency": currency,
                "name": name,
                "party": if has_level { json!({"country": country, "level": level}) } else { json!({"country": country}) },
                "tags": tags,
                "scores": scores,
                "items": items.iter().map(|(sku, qty)| json!({"sku": sku, "qty": qty})).collect::<Vec<_>>(),
            });
            let object = r.as_object_mut().expect("an object");
            if cents < 0 && cents > -100 {
                object.insert("amount".into(), json!(format!("-0.{:02}", -cents)));
            }
            if has_ratio {
                object.insert("ratio".into(), json!(ratio));
            }
            if has_note {
                object.insert("note".into(), json!(note));
            }
            if has_flag {
                object.insert("flag".into(), json!(flag));
            }
            if has_at || !valid {
                object.insert("at".into(), json!(ir::time::format_timestamp(seconds * 1_000_000_000)));
            }
            if has_wait {
                object.insert("wait".into(), json!(format!("{wait}s")));
            }
            if has_unread {
                object.insert("unread".into(), json!(unread));
            }
            r
        })
}

/// The columns as arrow-json reads the records: the plain encoding.
fn plain_schema() -> Schema {
    let item =
        Fields::from(vec![Field::new("sku", DataType::Utf8, true), Field::new("qty", DataType::Int64, true)]);
    let party = Fields::from(vec![
        Field::new("country", DataType::Utf8, true),
        Field::new("level", DataType::Int64, true),
    ]);
    let list = |data: DataType| DataType::List(Arc::new(Field::new("item", data, true)));
    Schema::new(vec![
        Field::new("amount", DataType::Decimal128(18, 2), true),
        Field::new("count", DataType::Int64, true),
        Field::new("ratio", DataType::Float64, true),
        Field::new("currency", DataType::Utf8, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("note", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("at", DataType::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())), true),
        Field::new("wait", DataType::Utf8, true),
        Field::new("party", DataType::Struct(party), true),
        Field::new("tags", list(DataType::Utf8), true),
        Field::new("scores", list(DataType::Int64), true),
        Field::new("unread", list(DataType::Utf8), true),
        Field::new("items", list(DataType::Struct(item)), true),
    ])
}

/// The encodings a column of `data` may take, the plain one first.
fn encodings(data: &DataType) -> Vec<DataType> {
    let dictionary = |key: DataType, values: DataType| DataType::Dictionary(Box::new(key), Box::new(values));
    let run_ends = |values: DataType| {
        DataType::RunEndEncoded(
            Arc::new(Field::new("run_ends", DataType::Int32, false)),
            Arc::new(Field::new("values", values, true)),
        )
    };
    match data {
        DataType::Utf8 => vec![
            DataType::Utf8,
            DataType::LargeUtf8,
            DataType::Utf8View,
            dictionary(DataType::Int8, DataType::Utf8),
            dictionary(DataType::Int32, DataType::Utf8),
            dictionary(DataType::UInt32, DataType::Utf8View),
            dictionary(DataType::Int16, DataType::LargeUtf8),
            run_ends(DataType::Utf8),
        ],
        DataType::Int64 => {
            vec![DataType::Int64, dictionary(DataType::Int32, DataType::Int64), run_ends(DataType::Int64)]
        }
        DataType::Decimal128(..) => vec![
            data.clone(),
            DataType::Decimal128(38, 2),
            dictionary(DataType::Int32, data.clone()),
            run_ends(data.clone()),
        ],
        DataType::Boolean => vec![data.clone(), run_ends(data.clone())],
        DataType::Float64 | DataType::Timestamp(..) => {
            vec![data.clone(), dictionary(DataType::Int16, data.clone()), run_ends(data.clone())]
        }
        DataType::List(child) => {
            let children = encodings(child.data_type());
            let mut lists = Vec::new();
            for (k, element) in children.iter().enumerate() {
                let child: FieldRef = Arc::new(child.as_ref().clone().with_data_type(element.clone()));
                lists.push(match k % 4 {
                    0 => DataType::List(child),
                    1 => DataType::LargeList(child),
                    2 => DataType::ListView(child),
                    _ => DataType::LargeListView(child),
                });
            }
            lists
        }
        DataType::Struct(fields) => {
            // Each field in each of its encodings, the others plain.
            let mut structs = vec![data.clone()];
            for (i, field) in fields.iter().enumerate() {
                for encoding in encodings(field.data_type()).into_iter().skip(1) {
                    let mut changed: Vec<FieldRef> = fields.iter().cloned().collect();
                    changed[i] = Arc::new(field.as_ref().clone().with_data_type(encoding));
                    structs.push(DataType::Struct(Fields::from(changed)));
                }
            }
            structs
        }
        _ => vec![data.clone()],
    }
}

/// The records as one plain batch, `skip` junk rows before them (so the
/// batch given to the job is a slice with an offset).
fn plain_batch(records: &[Value], skip: usize) -> RecordBatch {
    let junk =
        json!({"name": "junk", "tags": ["j", "u", "n", "k"], "unread": vec!["x"; 9], "amount": "999.99"});
    let mut text = String::new();
    for record in std::iter::repeat_n(&junk, skip).chain(records) {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    let mut reader = arrow_json::ReaderBuilder::new(Arc::new(plain_schema()))
        .with_batch_size(records.len() + skip + 1)
        .build(text.as_bytes())
        .expect("a reader");
    let batch = reader.next().expect("a batch").expect("records read");
    batch.slice(skip, records.len())
}

/// `batch` with its columns in the encodings `picks` chooses.
fn encoded(batch: &RecordBatch, picks: &[usize]) -> RecordBatch {
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for ((field, column), pick) in batch.schema().fields().iter().zip(batch.columns()).zip(picks) {
        let choices = encodings(field.data_type());
        let data = &choices[pick % choices.len()];
        let column =
            arrow_cast::cast(column, data).unwrap_or_else(|e| panic!("{} as {data}: {e}", field.name()));
        fields.push(field.as_ref().clone().with_data_type(data.clone()));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("an encoded batch")
}

fn job(schema: Option<&arrow_schema::SchemaRef>) -> Job {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let contract = engine.load(frontend::compile(CONTRACT).expect("the contract compiles")).expect("loads");
    let settings = Settings {
        channel: None,
        parts: Parts::ALL,
        keep: Vec::new(),
        output: OutputFormat::Ndjson,
        limit: None,
    };
    Job::new(contract, &settings, schema).expect("a job")
}

fn results(job: &Job, chunk: Chunk) -> String {
    let evaluated = job.evaluate(&chunk).expect("evaluated");
    let Output::Lines(lines) = evaluated.output else { panic!("NDJSON results") };
    String::from_utf8(lines).expect("UTF-8")
}

/// `record` with each of the batch's columns it lacks as `null`: what an
/// Arrow row holds (a column is there for every row; an absent value is a
/// null, which a required field reports as "got null").
fn nulls_written(record: &Value) -> Value {
    let mut record = record.clone();
    let object = record.as_object_mut().expect("an object");
    for field in plain_schema().fields() {
        object.entry(field.name().as_str()).or_insert(Value::Null);
    }
    record
}

fn check(records: &[Value], skip: usize, picks: &[usize]) -> Result<(), TestCaseError> {
    let lines: String = records.iter().map(|r| format!("{}\n", nulls_written(r))).collect();
    let expected = results(&job(None), Chunk::Lines(lines.into_bytes()));
    let batch = encoded(&plain_batch(records, skip), picks);
    let got = results(&job(Some(&batch.schema())), Chunk::Batch(batch.clone()));
    for ((want, got), record) in expected.lines().zip(got.lines()).zip(records) {
        prop_assert_eq!(got, want, "record {}\nschema {:?}", record, batch.schema());
    }
    prop_assert_eq!(got.lines().count(), records.len());
    Ok(())
}

proptest! {
    #[test]
    fn every_encoding_gives_the_ndjson_results(
        records in prop::collection::vec(record(), 1..40),
        skip in 0usize..3,
        picks in prop::collection::vec(0usize..64, 14),
    ) {
        check(&records, skip, &picks)?;
    }
}

/// The defect that made this test: a dictionary-encoded list the contract
/// never reads, longer than the batch, wrote its elements over other
/// records' first slot.
#[test]
fn an_unread_list_of_dictionary_strings_touches_no_other_record() {
    let records: Vec<Value> = (0..3)
        .map(|i| {
            json!({"amount": format!("{}.00", 50 + i * 40), "count": 1, "currency": "EUR", "name": "n",
                "at": "2026-01-01T00:00:00Z", "party": {"country": "DE"}, "tags": [], "scores": [],
                "items": [], "unread": ["a", "b", "c", "d", "e", "f", "g"]})
        })
        .collect();
    // `unread` (column 12) as a list of `Dictionary(Int32, Utf8)`.
    let mut picks = vec![0; 14];
    picks[12] = 4;
    check(&records, 1, &picks).expect("the NDJSON results");
}
