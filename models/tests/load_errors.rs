//! Every way a model is refused at load, as a table: each case's bytes
//! and declaration, and the message (one snapshot of them all). Damaged
//! bytes (every prefix of a model, bytes flipped) are refused or loaded,
//! never a panic.

use ir::ModelOutput::{self, Probability, Value};
use models::Tract;
use models::testing::{self, Dim, Float};
use prost::Message;
use runtime::model::ModelRuntime;

/// A model that must not load.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    features: u32,
    output: ModelOutput,
}

fn case(name: &'static str, bytes: Vec<u8>, features: u32, output: ModelOutput) -> Case {
    Case { name, bytes, features, output }
}

const WEIGHTS: [f32; 4] = [0.5, -1.0, 0.25, 2.0];

fn cases() -> Vec<Case> {
    let logistic = testing::logistic(&WEIGHTS, 0.1);
    let no_graph = tract_onnx::pb::ModelProto { ir_version: 8, ..Default::default() }.encode_to_vec();
    vec![
        case("empty file", Vec::new(), 4, Probability),
        case("text", b"features,output\n1,2\n".to_vec(), 4, Probability),
        case("truncated", logistic[..logistic.len() / 2].to_vec(), 4, Probability),
        case("protobuf without a graph", no_graph, 4, Probability),
        case("wrong feature width", logistic.clone(), 3, Probability),
        case("two inputs", testing::two_inputs(4), 4, Value),
        case("int64 input", testing::int64_input(4), 4, Probability),
        case("int64 output", testing::int64_output(&WEIGHTS, 0.1), 4, Value),
        case(
            "input of rank 1",
            testing::logistic_with_input(&[Dim::Fixed(4)], &WEIGHTS, 0.1),
            4,
            Probability,
        ),
        case(
            "input of rank 3",
            testing::logistic_with_input(&[Dim::Batch, Dim::Fixed(1), Dim::Fixed(4)], &WEIGHTS, 0.1),
            4,
            Probability,
        ),
        case(
            "symbolic feature dimension",
            testing::logistic_with_input(&[Dim::Batch, Dim::Batch], &WEIGHTS, 0.1),
            4,
            Probability,
        ),
        case("a graph for one row", testing::reshaped_to_one_row(&WEIGHTS, 0.1), 4, Probability),
        case("three classes", testing::three_classes(&[[1.0, 0.0, -1.0]; 4]), 4, Probability),
        case("classifier read as a value", testing::logistic_two_class(&WEIGHTS, 0.1), 4, Value),
        case("one output for the batch", testing::batch_total(4), 4, Value),
        case("zipmap", testing::zipmap_classifier(&WEIGHTS, 0.1), 4, Probability),
        case("tree regressor", testing::tree_regressor(), 1, Value),
        case("external weights", testing::external_weights(4), 4, Probability),
        case("output nothing computes", testing::dangling_output(4), 4, Probability),
        case("f64 gemm", testing::gemm(Float::F64, &[1.0, 2.0], 0.5), 2, Value),
        case("a row that costs too much", testing::expanded(4, 4000), 4, Value),
    ]
}

#[test]
fn the_cost_bound_lets_a_cheap_expansion_load() {
    // 4 · 10² values a row: loads, and scores each row's mean.
    let model = testing::declaration("wide", testing::expanded(4, 10), 4, Value);
    let loaded = Tract::new().load_model(&model).expect("a cheap model loads");
    let scores = runtime::model::LoadedModel::score(&loaded, &[1.0, 2.0, 3.0, 6.0], 1).expect("scored");
    assert_eq!(scores, [3.0]);
}

#[test]
fn every_refusal_says_what_does_not_fit() {
    let tract = Tract::new();
    let mut shown = String::new();
    for case in cases() {
        let model = testing::declaration("fraud", case.bytes, case.features, case.output);
        match tract.load(&model) {
            Ok(loaded) => panic!("{}: loaded {loaded:?}", case.name),
            Err(message) => shown.push_str(&format!("{}:\n  {message}\n", case.name)),
        }
    }
    insta::assert_snapshot!(shown);
}

/// Every prefix of a model, and the model with bytes flipped, load or
/// are refused: none panics (a panic would fail the test).
#[test]
fn damaged_bytes_never_panic() {
    let tract = Tract::new();
    let bytes = testing::logistic_two_class(&WEIGHTS, 0.1);
    let load = |bytes: Vec<u8>| {
        let _ = tract.load(&testing::declaration("fraud", bytes, 4, Probability));
    };
    for length in 0..bytes.len() {
        load(bytes[..length].to_vec());
    }
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..300 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut flipped = bytes.clone();
        let at = (state % bytes.len() as u64) as usize;
        flipped[at] ^= 1 << (state >> 61);
        load(flipped);
    }
}
