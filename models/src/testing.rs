//! ONNX model bytes built in Rust, for tests and examples (not for
//! production use): the models a contract may declare (logistic
//! regressions, a linear regressor, a small MLP, a tree ensemble) and the
//! broken ones its load errors are tested with.
//!
//! Every model takes a float tensor `[n, features]` with a symbolic batch
//! dimension `n` (unless a function says otherwise), as scikit-learn
//! exports do with `FloatTensorType([None, features])`. The functions
//! panic on inconsistent arguments (weights of different lengths): they
//! are for tests.

use prost::Message;
use tract_onnx::pb;
use tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::tensor_shape_proto::dimension;

/// The name of the batch dimension of every model here.
pub const BATCH: &str = "n";

/// The default ONNX operator set the models are written for.
const OPSET: i64 = 17;

/// A float element type of a model's tensors.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Float {
    F32,
    F64,
}

impl Float {
    fn data_type(self) -> DataType {
        match self {
            Float::F32 => DataType::Float,
            Float::F64 => DataType::Double,
        }
    }
}

/// One dimension of a declared tensor shape.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dim {
    /// The symbolic batch dimension, [`BATCH`].
    Batch,
    /// A fixed size.
    Fixed(i64),
}

/// `sigmoid(x · weights + bias)` as a `[n, 1]` output `probability`
/// (MatMul, Add, Sigmoid).
pub fn logistic(weights: &[f32], bias: f32) -> Vec<u8> {
    logistic_with_input(&[Dim::Batch, Dim::Fixed(width(weights))], weights, bias)
}

/// [`logistic`] with the input shape declared as `input` (a fixed batch
/// of one, say, or a shape that does not fit).
pub fn logistic_with_input(input: &[Dim], weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, input);
    let z = logit(&mut graph, "x", weights, bias);
    graph.node("Sigmoid", &[&z], &["probability"], vec![]);
    graph.output("probability", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// The two-class form of [`logistic`], as scikit-learn exports a
/// classifier without ZipMap: a `label` output (int64 `[n]`, the argmax)
/// first, then `probabilities` (`[n, 2]`: `[1 - p, p]`, by Sub and
/// Concat).
pub fn logistic_two_class(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = two_class_probabilities(weights, bias);
    graph.node("ArgMax", &["probabilities"], &["label"], vec![int("axis", 1), int("keepdims", 0)]);
    graph.output("label", DataType::Int64, &[Dim::Batch]);
    graph.output("probabilities", DataType::Float, &[Dim::Batch, Dim::Fixed(2)]);
    graph.bytes()
}

/// [`logistic`] with two `[n, 1]` outputs: `logit` (`x · weights +
/// bias`) first, then `probability`. Both fit `probability`, so it reads
/// the first: the logit (the rule for several outputs is by order, not by
/// name).
pub fn logit_then_probability(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(width(weights))]);
    let z = logit(&mut graph, "x", weights, bias);
    graph.node("Identity", &[&z], &["logit"], vec![]);
    graph.node("Sigmoid", &[&z], &["probability"], vec![]);
    graph.output("logit", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.output("probability", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// `x · weights + bias` as a `[n, 1]` output `value` (MatMul, Add), in
/// `float` throughout (input, weights and output).
pub fn linear(float: Float, weights: &[f64], bias: f64) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", float.data_type(), &[Dim::Batch, Dim::Fixed(width(weights))]);
    let z = affine(&mut graph, "x", float, weights, bias);
    graph.node("Identity", &[&z], &["value"], vec![]);
    graph.output("value", float.data_type(), &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// [`linear`] by one Gemm node (as scikit-learn exports linear models).
/// tract 0.23 runs it in f32 only: in f64 its bias scale is an f32
/// constant, and optimising fails.
pub fn gemm(float: Float, weights: &[f64], bias: f64) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", float.data_type(), &[Dim::Batch, Dim::Fixed(width(weights))]);
    graph.constant("w", float, &[width(weights), 1], weights);
    graph.constant("b", float, &[1], &[bias]);
    graph.node("Gemm", &["x", "w", "b"], &["value"], vec![]);
    graph.output("value", float.data_type(), &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// [`linear`] in f32 with a `[n]` output (Gemm, then Squeeze of axis 1).
pub fn linear_flat(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(width(weights))]);
    let weights: Vec<f64> = weights.iter().map(|&w| f64::from(w)).collect();
    graph.constant("w", Float::F32, &[width(&weights), 1], &weights);
    graph.constant("b", Float::F32, &[1], &[f64::from(bias)]);
    graph.node("Gemm", &["x", "w", "b"], &["column"], vec![]);
    graph.int64s("axes", &[1]);
    graph.node("Squeeze", &["column", "axes"], &["value"], vec![]);
    graph.output("value", DataType::Float, &[Dim::Batch]);
    graph.bytes()
}

/// A multi-layer perceptron with one hidden layer:
/// `sigmoid(relu(x · hidden + hidden_bias) · output + output_bias)`.
#[derive(Clone, PartialEq, Debug)]
pub struct Mlp {
    /// `features` rows of `hidden` weights each.
    pub hidden: Vec<Vec<f32>>,
    pub hidden_bias: Vec<f32>,
    /// One weight per hidden unit.
    pub output: Vec<f32>,
    pub output_bias: f32,
}

impl Mlp {
    /// The model (MatMul, Add, Relu, MatMul, Add, Sigmoid), its output
    /// `probability` `[n, 1]`.
    pub fn bytes(&self) -> Vec<u8> {
        let features = width(&self.hidden);
        let units = width(&self.hidden_bias);
        assert!(self.hidden.iter().all(|row| width(row) == units), "every hidden row has a weight per unit");
        let mut graph = Graph::default();
        graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features)]);
        let hidden: Vec<f64> = self.hidden.iter().flatten().map(|&w| f64::from(w)).collect();
        graph.constant("w1", Float::F32, &[features, units], &hidden);
        graph.constant("b1", Float::F32, &[units], &widen(&self.hidden_bias));
        graph.node("MatMul", &["x", "w1"], &["hidden_product"], vec![]);
        graph.node("Add", &["hidden_product", "b1"], &["hidden_sum"], vec![]);
        graph.node("Relu", &["hidden_sum"], &["h"], vec![]);
        let z = logit(&mut graph, "h", &self.output, self.output_bias);
        graph.node("Sigmoid", &[&z], &["probability"], vec![]);
        graph.output("probability", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
        graph.bytes()
    }
}

/// A tree of depth one: `x[feature] <= threshold` leads to a leaf whose
/// class-1 probability is `if_true`, else to one with `if_false`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Stump {
    pub feature: usize,
    pub threshold: f32,
    pub if_true: f32,
    pub if_false: f32,
}

/// An `ai.onnx.ml` TreeEnsembleClassifier of `stumps` over `features`
/// inputs, as a random forest is exported: each leaf holds both classes'
/// weights divided by the number of trees (so the probabilities are the
/// trees' mean), `post_transform` NONE, no ZipMap. Outputs: `label`
/// (int64 `[n]`), then `probabilities` (`[n, 2]`).
pub fn tree_classifier(features: usize, stumps: &[Stump]) -> Vec<u8> {
    assert!(!stumps.is_empty() && stumps.iter().all(|s| s.feature < features), "stumps over the features");
    let mut nodes = TreeNodes::default();
    let share = 1.0 / stumps.len() as f32;
    for (tree, stump) in (0i64..).zip(stumps) {
        nodes.branch(tree, 0, stump.feature as i64, stump.threshold, 1, 2);
        nodes.leaf(tree, 1, stump.if_true * share, share);
        nodes.leaf(tree, 2, stump.if_false * share, share);
    }
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.ml_node("TreeEnsembleClassifier", &["x"], &["label", "probabilities"], nodes.attributes());
    graph.output("label", DataType::Int64, &[Dim::Batch]);
    graph.output("probabilities", DataType::Float, &[Dim::Batch, Dim::Fixed(2)]);
    graph.bytes()
}

/// An `ai.onnx.ml` TreeEnsembleRegressor (one stump over feature 0),
/// which tract does not run.
pub fn tree_regressor() -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    let attributes = vec![
        ints("nodes_treeids", &[0, 0, 0]),
        ints("nodes_nodeids", &[0, 1, 2]),
        ints("nodes_featureids", &[0, 0, 0]),
        floats("nodes_values", &[0.5, 0.0, 0.0]),
        strings("nodes_modes", &["BRANCH_LEQ", "LEAF", "LEAF"]),
        ints("nodes_truenodeids", &[1, 0, 0]),
        ints("nodes_falsenodeids", &[2, 0, 0]),
        ints("target_treeids", &[0, 0]),
        ints("target_nodeids", &[1, 2]),
        ints("target_ids", &[0, 0]),
        floats("target_weights", &[1.0, 2.0]),
        int("n_targets", 1),
    ];
    graph.ml_node("TreeEnsembleRegressor", &["x"], &["value"], attributes);
    graph.output("value", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// A classifier exported with ZipMap on: [`logistic_two_class`]'s
/// probabilities turned into a sequence of maps, which tract does not run.
pub fn zipmap_classifier(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = two_class_probabilities(weights, bias);
    graph.ml_node(
        "ZipMap",
        &["probabilities"],
        &["output_probability"],
        vec![ints("classlabels_int64s", &[0, 1])],
    );
    graph.output_untyped("output_probability");
    graph.bytes()
}

/// Broken: two inputs `a` and `b` of `[n, features]`, added.
pub fn two_inputs(features: usize) -> Vec<u8> {
    let mut graph = Graph::default();
    let shape = [Dim::Batch, Dim::Fixed(features as i64)];
    graph.input("a", DataType::Float, &shape);
    graph.input("b", DataType::Float, &shape);
    graph.node("Add", &["a", "b"], &["sum"], vec![]);
    graph.output("sum", DataType::Float, &shape);
    graph.bytes()
}

/// Broken: an int64 input `[n, features]`, cast to float and summed.
pub fn int64_input(features: usize) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Int64, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.node("Cast", &["x"], &["xf"], vec![int("to", DataType::Float as i64)]);
    let z = logit(&mut graph, "xf", &vec![1.0; features], 0.0);
    graph.node("Sigmoid", &[&z], &["probability"], vec![]);
    graph.output("probability", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// Broken: [`logistic`]'s logit cast to an int64 `[n, 1]` output
/// `class` (a model that gives a label, not a score).
pub fn int64_output(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(width(weights))]);
    let z = logit(&mut graph, "x", weights, bias);
    graph.node("Cast", &[&z], &["class"], vec![int("to", DataType::Int64 as i64)]);
    graph.output("class", DataType::Int64, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// Broken for `probability`: three classes, a softmax over `features`
/// inputs times `weights` (`features` rows of three), output `[n, 3]`.
pub fn three_classes(weights: &[[f32; 3]]) -> Vec<u8> {
    let features = width(weights);
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features)]);
    let flat: Vec<f64> = weights.iter().flatten().map(|&w| f64::from(w)).collect();
    graph.constant("w", Float::F32, &[features, 3], &flat);
    graph.node("MatMul", &["x", "w"], &["logits"], vec![]);
    graph.node("Softmax", &["logits"], &["probabilities"], vec![int("axis", 1)]);
    graph.output("probabilities", DataType::Float, &[Dim::Batch, Dim::Fixed(3)]);
    graph.bytes()
}

/// Broken: [`logistic`] for a batch of exactly one row, fixed by the
/// graph itself (a Reshape of the input to `[1, features]`), not only by
/// its declared input shape.
pub fn reshaped_to_one_row(weights: &[f32], bias: f32) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Fixed(1), Dim::Fixed(width(weights))]);
    graph.int64s("one_row", &[1, width(weights)]);
    graph.node("Reshape", &["x", "one_row"], &["row"], vec![]);
    let z = logit(&mut graph, "row", weights, bias);
    graph.node("Sigmoid", &[&z], &["probability"], vec![]);
    graph.output("probability", DataType::Float, &[Dim::Fixed(1), Dim::Fixed(1)]);
    graph.bytes()
}

/// Hostile: valid, but each row's features are broadcast to `[side, side,
/// n, features]` (Expand) and averaged back to `[n]` (ReduceMean), so a row
/// writes `side² · features` values.
pub fn expanded(features: usize, side: i64) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.int64s("shape", &[side, side, 1, 1]);
    graph.node("Expand", &["x", "shape"], &["wide"], vec![]);
    graph.node("ReduceMean", &["wide"], &["value"], vec![ints("axes", &[0, 1, 3]), int("keepdims", 0)]);
    graph.output("value", DataType::Float, &[Dim::Batch]);
    graph.bytes()
}

/// Broken: one output for the whole batch, the sum of every row's
/// features (ReduceSum over both axes, `[1, 1]`).
pub fn batch_total(features: usize) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.node("ReduceSum", &["x"], &["total"], vec![int("keepdims", 1)]);
    graph.output("total", DataType::Float, &[Dim::Fixed(1), Dim::Fixed(1)]);
    graph.bytes()
}

/// Broken: [`logistic`] whose weights are kept in an external file
/// (`weights.bin`), as large models are saved.
pub fn external_weights(features: usize) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.initializers.push(pb::TensorProto {
        name: "w".into(),
        dims: vec![features as i64, 1],
        data_type: DataType::Float as i32,
        data_location: Some(pb::tensor_proto::DataLocation::External as i32),
        external_data: vec![pb::StringStringEntryProto {
            key: "location".into(),
            value: "weights.bin".into(),
        }],
        ..Default::default()
    });
    graph.node("MatMul", &["x", "w"], &["z"], vec![]);
    graph.node("Sigmoid", &["z"], &["probability"], vec![]);
    graph.output("probability", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// Broken: a graph whose output names a tensor that nothing computes.
pub fn dangling_output(features: usize) -> Vec<u8> {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(features as i64)]);
    graph.node("Sigmoid", &["x"], &["y"], vec![]);
    graph.output("nowhere", DataType::Float, &[Dim::Batch, Dim::Fixed(1)]);
    graph.bytes()
}

/// Wires `x · weights + bias` in f32 into `graph`; returns the name of
/// the `[n, 1]` result.
/// A graph from input `x` to `probabilities` (`[n, 2]`: `[1 - p, p]` of
/// a logistic regression, by Sub and Concat), its outputs still to add.
fn two_class_probabilities(weights: &[f32], bias: f32) -> Graph {
    let mut graph = Graph::default();
    graph.input("x", DataType::Float, &[Dim::Batch, Dim::Fixed(width(weights))]);
    let z = logit(&mut graph, "x", weights, bias);
    graph.node("Sigmoid", &[&z], &["p"], vec![]);
    graph.constant("one", Float::F32, &[1], &[1.0]);
    graph.node("Sub", &["one", "p"], &["one_minus_p"], vec![]);
    graph.node("Concat", &["one_minus_p", "p"], &["probabilities"], vec![int("axis", 1)]);
    graph
}

/// `rows` rows of `features` values in [-3, 3), row-major, the same on
/// every run (an xorshift sequence): inputs for tests and benchmarks.
pub fn rows(rows: usize, features: usize) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..rows * features)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
        })
        .collect()
}

fn logit(graph: &mut Graph, x: &str, weights: &[f32], bias: f32) -> String {
    affine(graph, x, Float::F32, &widen(weights), f64::from(bias))
}

/// Wires `x · weights + bias` (MatMul, Add) in `float` into `graph`;
/// returns the name of the `[n, 1]` result.
fn affine(graph: &mut Graph, x: &str, float: Float, weights: &[f64], bias: f64) -> String {
    let w = format!("{x}_weights");
    let b = format!("{x}_bias");
    graph.constant(&w, float, &[width(weights), 1], weights);
    graph.constant(&b, float, &[1], &[bias]);
    let product = format!("{x}_product");
    let z = format!("{x}_logit");
    graph.node("MatMul", &[x, &w], &[&product], vec![]);
    graph.node("Add", &[&product, &b], &[&z], vec![]);
    z
}

/// The nodes and leaves of a TreeEnsembleClassifier, attribute by
/// attribute.
#[derive(Default)]
struct TreeNodes {
    tree_ids: Vec<i64>,
    node_ids: Vec<i64>,
    feature_ids: Vec<i64>,
    values: Vec<f32>,
    modes: Vec<&'static str>,
    true_ids: Vec<i64>,
    false_ids: Vec<i64>,
    class_tree_ids: Vec<i64>,
    class_node_ids: Vec<i64>,
    class_ids: Vec<i64>,
    class_weights: Vec<f32>,
}

impl TreeNodes {
    fn branch(&mut self, tree: i64, node: i64, feature: i64, threshold: f32, if_true: i64, if_false: i64) {
        self.node(tree, node, feature, threshold, "BRANCH_LEQ", if_true, if_false);
    }

    /// A leaf whose class-1 weight is `class_1` and whose two weights sum
    /// to `total`.
    fn leaf(&mut self, tree: i64, node: i64, class_1: f32, total: f32) {
        self.node(tree, node, 0, 0.0, "LEAF", 0, 0);
        for (class, weight) in [(0, total - class_1), (1, class_1)] {
            self.class_tree_ids.push(tree);
            self.class_node_ids.push(node);
            self.class_ids.push(class);
            self.class_weights.push(weight);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        tree: i64,
        node: i64,
        feature: i64,
        value: f32,
        mode: &'static str,
        if_true: i64,
        if_false: i64,
    ) {
        self.tree_ids.push(tree);
        self.node_ids.push(node);
        self.feature_ids.push(feature);
        self.values.push(value);
        self.modes.push(mode);
        self.true_ids.push(if_true);
        self.false_ids.push(if_false);
    }

    fn attributes(&self) -> Vec<pb::AttributeProto> {
        vec![
            ints("nodes_treeids", &self.tree_ids),
            ints("nodes_nodeids", &self.node_ids),
            ints("nodes_featureids", &self.feature_ids),
            floats("nodes_values", &self.values),
            strings("nodes_modes", &self.modes),
            ints("nodes_truenodeids", &self.true_ids),
            ints("nodes_falsenodeids", &self.false_ids),
            ints("class_treeids", &self.class_tree_ids),
            ints("class_nodeids", &self.class_node_ids),
            ints("class_ids", &self.class_ids),
            floats("class_weights", &self.class_weights),
            ints("classlabels_int64s", &[0, 1]),
            string("post_transform", "NONE"),
        ]
    }
}

/// A graph being built, encoded by [`Graph::bytes`].
#[derive(Default)]
struct Graph {
    inputs: Vec<pb::ValueInfoProto>,
    outputs: Vec<pb::ValueInfoProto>,
    initializers: Vec<pb::TensorProto>,
    nodes: Vec<pb::NodeProto>,
    uses_ml: bool,
}

impl Graph {
    fn input(&mut self, name: &str, data_type: DataType, shape: &[Dim]) {
        self.inputs.push(value_info(name, data_type, shape));
    }

    fn output(&mut self, name: &str, data_type: DataType, shape: &[Dim]) {
        self.outputs.push(value_info(name, data_type, shape));
    }

    /// An output declared without a type (ZipMap's sequence of maps is
    /// not a tensor; these models declare no type for it).
    fn output_untyped(&mut self, name: &str) {
        self.outputs.push(pb::ValueInfoProto { name: name.into(), ..Default::default() });
    }

    fn constant(&mut self, name: &str, float: Float, dims: &[i64], values: &[f64]) {
        let mut tensor = pb::TensorProto {
            name: name.into(),
            dims: dims.to_vec(),
            data_type: float.data_type() as i32,
            ..Default::default()
        };
        match float {
            Float::F32 => tensor.float_data = values.iter().map(|&v| v as f32).collect(),
            Float::F64 => tensor.double_data = values.to_vec(),
        }
        self.initializers.push(tensor);
    }

    fn int64s(&mut self, name: &str, values: &[i64]) {
        self.initializers.push(pb::TensorProto {
            name: name.into(),
            dims: vec![values.len() as i64],
            data_type: DataType::Int64 as i32,
            int64_data: values.to_vec(),
            ..Default::default()
        });
    }

    fn node(&mut self, op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<pb::AttributeProto>) {
        self.push_node("", op, inputs, outputs, attribute);
    }

    /// A node of the `ai.onnx.ml` domain.
    fn ml_node(&mut self, op: &str, inputs: &[&str], outputs: &[&str], attribute: Vec<pb::AttributeProto>) {
        self.uses_ml = true;
        self.push_node("ai.onnx.ml", op, inputs, outputs, attribute);
    }

    fn push_node(
        &mut self,
        domain: &str,
        op: &str,
        inputs: &[&str],
        outputs: &[&str],
        attribute: Vec<pb::AttributeProto>,
    ) {
        self.nodes.push(pb::NodeProto {
            name: format!("{op}_{}", self.nodes.len()),
            op_type: op.into(),
            domain: domain.into(),
            input: inputs.iter().map(|&i| i.into()).collect(),
            output: outputs.iter().map(|&o| o.into()).collect(),
            attribute,
            ..Default::default()
        });
    }

    fn bytes(self) -> Vec<u8> {
        let mut opset_import = vec![pb::OperatorSetIdProto { domain: String::new(), version: OPSET }];
        if self.uses_ml {
            opset_import.push(pb::OperatorSetIdProto { domain: "ai.onnx.ml".into(), version: 3 });
        }
        pb::ModelProto {
            ir_version: 8,
            producer_name: "rulec models::testing".into(),
            opset_import,
            graph: Some(pb::GraphProto {
                name: "model".into(),
                node: self.nodes,
                initializer: self.initializers,
                input: self.inputs,
                output: self.outputs,
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec()
    }
}

fn value_info(name: &str, data_type: DataType, shape: &[Dim]) -> pb::ValueInfoProto {
    let dim = shape
        .iter()
        .map(|d| pb::tensor_shape_proto::Dimension {
            value: Some(match d {
                Dim::Batch => dimension::Value::DimParam(BATCH.into()),
                Dim::Fixed(size) => dimension::Value::DimValue(*size),
            }),
            ..Default::default()
        })
        .collect();
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: data_type as i32,
                shape: Some(pb::TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn attribute(name: &str, kind: AttributeType) -> pb::AttributeProto {
    pb::AttributeProto { name: name.into(), r#type: kind as i32, ..Default::default() }
}

fn int(name: &str, value: i64) -> pb::AttributeProto {
    pb::AttributeProto { i: value, ..attribute(name, AttributeType::Int) }
}

fn ints(name: &str, values: &[i64]) -> pb::AttributeProto {
    pb::AttributeProto { ints: values.to_vec(), ..attribute(name, AttributeType::Ints) }
}

fn floats(name: &str, values: &[f32]) -> pb::AttributeProto {
    pb::AttributeProto { floats: values.to_vec(), ..attribute(name, AttributeType::Floats) }
}

fn string(name: &str, value: &str) -> pb::AttributeProto {
    pb::AttributeProto { s: value.as_bytes().to_vec(), ..attribute(name, AttributeType::String) }
}

fn strings(name: &str, values: &[&str]) -> pb::AttributeProto {
    pb::AttributeProto {
        strings: values.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..attribute(name, AttributeType::Strings)
    }
}

fn widen(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

/// A length as an ONNX dimension.
fn width<T>(values: &[T]) -> i64 {
    i64::try_from(values.len()).expect("a small model")
}

/// A contract's declaration of `bytes`: the model `name` of `features`
/// inputs read as `output`.
pub fn declaration(name: &str, bytes: Vec<u8>, features: u32, output: ir::ModelOutput) -> ir::Model {
    ir::Model {
        name: name.into(),
        features,
        output,
        sha256: ir::digest::sha256_of(&bytes),
        bytes: bytes.into(),
    }
}

/// The model files committed in the repository (the conformance cases'
/// and the examples'), by path from the workspace root, with the bytes
/// each must hold: `cargo xtask write-models` writes them, and
/// `models/tests/committed.rs` checks that the files are these bytes.
pub fn committed() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        // sigmoid(0.5 a - 0.25 b + c - 1)
        ("conformance/cases/models_score/models/risk.onnx", logistic(&[0.5, -0.25, 1.0], -1.0)),
        // 2 a + 0.5 b + 10, in f64
        ("conformance/cases/models_score/models/limit.onnx", linear(Float::F64, &[2.0, 0.5], 10.0)),
        // sigmoid(0.0004 amount_eur + 0.5 transfers + 0.8 countries + 3 emulator_similarity - 8)
        ("examples/contracts/models/fraud.onnx", logistic(&[0.0004, 0.5, 0.8, 3.0], -8.0)),
    ]
}
