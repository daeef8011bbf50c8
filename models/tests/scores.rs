//! Scores against values computed by hand in the test, as a table of
//! models: each case's bytes, declaration and the formula its scores must
//! follow; every case's rows score the same bits alone, in chunks and in
//! one batch of 1,000; and `score`'s own errors.

use std::sync::Arc;

use ir::ModelOutput::{self, Probability, Value};
use models::Tract;
use models::testing::{self, Dim, Float, Mlp, Stump};
use runtime::model::{LoadedModel, ModelRuntime};

/// The score of a row, computed in f64 from a model's parameters.
type Formula = Box<dyn Fn(&[f64]) -> f64>;

/// A model and what its scores must be.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    features: usize,
    output: ModelOutput,
    expected: Formula,
    /// How far a score may be from `expected`, relative to it (or
    /// absolute below 1): f32 arithmetic (inputs rounded to f32, products
    /// and sums in f32, tract's sigmoid) is measured within 1.5e-7 here,
    /// and allowed about 16 f32 epsilons.
    tolerance: f64,
}

const F32_TOLERANCE: f64 = 2e-6;
const F64_TOLERANCE: f64 = 1e-12;

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn dot(weights: &[f32], x: &[f64]) -> f64 {
    weights.iter().zip(x).map(|(&w, &x)| f64::from(w) * x).sum()
}

fn logistic_by_hand(weights: &'static [f32], bias: f32) -> Formula {
    Box::new(move |x| sigmoid(dot(weights, x) + f64::from(bias)))
}

const WEIGHTS: &[f32] = &[0.8, -1.5, 0.25, 2.0];
const BIAS: f32 = -0.3;
const LINEAR: &[f64] = &[3.5, -0.125, 7.0, 0.001, -2.0];

fn mlp() -> Mlp {
    Mlp {
        hidden: (0..3).map(|i| (0..5).map(|j| ((i * 5 + j) as f32 * 0.7).sin()).collect()).collect(),
        hidden_bias: (0..5).map(|j| (j as f32 * 0.3).cos() - 0.5).collect(),
        output: (0..5).map(|j| 1.0 - j as f32 * 0.4).collect(),
        output_bias: 0.2,
    }
}

fn mlp_by_hand(mlp: Mlp) -> Formula {
    Box::new(move |x| {
        let hidden = (0..mlp.hidden_bias.len()).map(|unit| {
            let column: Vec<f32> = mlp.hidden.iter().map(|row| row[unit]).collect();
            (dot(&column, x) + f64::from(mlp.hidden_bias[unit])).max(0.0)
        });
        let z: f64 = hidden.zip(&mlp.output).map(|(h, &w)| h * f64::from(w)).sum();
        sigmoid(z + f64::from(mlp.output_bias))
    })
}

const STUMPS: &[Stump] = &[
    Stump { feature: 0, threshold: 0.5, if_true: 0.25, if_false: 0.75 },
    Stump { feature: 2, threshold: -1.0, if_true: 0.125, if_false: 0.5 },
    Stump { feature: 1, threshold: 0.0, if_true: 1.0, if_false: 0.0 },
];

fn forest_by_hand(x: &[f64]) -> f64 {
    let leaf = |s: &Stump| if x[s.feature] as f32 <= s.threshold { s.if_true } else { s.if_false };
    STUMPS.iter().map(|s| f64::from(leaf(s))).sum::<f64>() / STUMPS.len() as f64
}

fn cases() -> Vec<Case> {
    let f32_case = |name, bytes, features, output, expected| Case {
        name,
        bytes,
        features,
        output,
        expected,
        tolerance: F32_TOLERANCE,
    };
    let linear64 = |x: &[f64]| LINEAR.iter().zip(x).map(|(w, x)| w * x).sum::<f64>() + 0.5;
    let linear32 = |x: &[f64]| {
        let weights: Vec<f32> = LINEAR.iter().map(|&w| w as f32).collect();
        dot(&weights, x) + 0.5
    };
    vec![
        f32_case(
            "logistic",
            testing::logistic(WEIGHTS, BIAS),
            4,
            Probability,
            logistic_by_hand(WEIGHTS, BIAS),
        ),
        f32_case(
            "logistic of a fixed batch of one",
            testing::logistic_with_input(&[Dim::Fixed(1), Dim::Fixed(4)], WEIGHTS, BIAS),
            4,
            Probability,
            logistic_by_hand(WEIGHTS, BIAS),
        ),
        f32_case(
            "two classes: label, then [n, 2] probabilities",
            testing::logistic_two_class(WEIGHTS, BIAS),
            4,
            Probability,
            logistic_by_hand(WEIGHTS, BIAS),
        ),
        f32_case(
            "two fitting outputs: the first is read",
            testing::logit_then_probability(WEIGHTS, BIAS),
            4,
            Probability,
            Box::new(|x| dot(WEIGHTS, x) + f64::from(BIAS)),
        ),
        f32_case("a [n, 1] probability read as a value", testing::logistic(WEIGHTS, BIAS), 4, Value, {
            logistic_by_hand(WEIGHTS, BIAS)
        }),
        f32_case("linear f32", testing::linear(Float::F32, LINEAR, 0.5), 5, Value, Box::new(linear32)),
        Case {
            name: "linear f64",
            bytes: testing::linear(Float::F64, LINEAR, 0.5),
            features: 5,
            output: Value,
            expected: Box::new(linear64),
            tolerance: F64_TOLERANCE,
        },
        f32_case("linear by Gemm", testing::gemm(Float::F32, LINEAR, 0.5), 5, Value, Box::new(linear32)),
        f32_case("linear, a [n] output", testing::linear_flat(WEIGHTS, BIAS), 4, Value, {
            Box::new(|x| dot(WEIGHTS, x) + f64::from(BIAS))
        }),
        f32_case("mlp", mlp().bytes(), 3, Probability, mlp_by_hand(mlp())),
        f32_case(
            "tree ensemble",
            testing::tree_classifier(3, STUMPS),
            3,
            Probability,
            Box::new(forest_by_hand),
        ),
    ]
}

fn load(case: &Case) -> Arc<dyn LoadedModel> {
    let declared = testing::declaration("model", case.bytes.clone(), case.features as u32, case.output);
    Tract::new().load(&declared).unwrap_or_else(|e| panic!("{}: {e}", case.name))
}

/// `case`'s scores of `x` (rows of its features) are its formula's.
fn check(case: &Case, model: &dyn LoadedModel, x: &[f64]) {
    let count = x.len() / case.features;
    let scores = model.score(x, count).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(scores.len(), count, "{}: a score per row", case.name);
    for (row, score) in x.chunks(case.features).zip(scores) {
        let expected = (case.expected)(row);
        assert!(
            (score - expected).abs() <= case.tolerance * expected.abs().max(1.0),
            "{}: row {row:?} scored {score}, by hand {expected}",
            case.name
        );
    }
}

#[test]
fn scores_are_the_formulas() {
    for case in cases() {
        check(&case, &*load(&case), &testing::rows(500, case.features));
    }
}

/// The batch engine scores chunks, the server one record at a time: a
/// row's score must be the same bits either way.
#[test]
fn a_row_scores_the_same_bits_alone_and_in_any_batch() {
    for case in cases() {
        let model = load(&case);
        let x = testing::rows(1000, case.features);
        let batch = model.score(&x, 1000).unwrap();
        for (i, row) in x.chunks(case.features).enumerate() {
            let alone = model.score(row, 1).unwrap();
            assert_eq!(alone[0].to_bits(), batch[i].to_bits(), "{}: row {i} alone", case.name);
        }
        for chunk in [2, 3, 7, 64, 333] {
            let scores: Vec<f64> = x
                .chunks(chunk * case.features)
                .flat_map(|c| model.score(c, c.len() / case.features).unwrap())
                .collect();
            let bits = |s: &[f64]| s.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&scores), bits(&batch), "{}: in chunks of {chunk}", case.name);
        }
    }
}

#[test]
fn no_rows_score_nothing() {
    let model = load(&cases()[0]);
    assert_eq!(model.score(&[], 0), Ok(Vec::new()));
}

#[test]
fn a_wrong_number_of_values_is_an_error() {
    let model = load(&cases()[0]);
    let shown: Vec<String> = [(7, 2), (8, 1), (0, 1), (4, usize::MAX)]
        .into_iter()
        .map(|(values, count)| model.score(&vec![0.5; values], count).unwrap_err())
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
}

/// A loaded model is shared by the threads that score with it.
#[test]
fn threads_share_a_loaded_model() {
    let case = &cases()[0];
    let model = load(case);
    let x = testing::rows(64, case.features);
    let alone = model.score(&x, 64).unwrap();
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..4).map(|_| scope.spawn(|| model.score(&x, 64).unwrap())).collect();
        for run in runs {
            assert_eq!(run.join().unwrap(), alone);
        }
    });
}
