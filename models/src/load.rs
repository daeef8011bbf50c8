//! A model's bytes to a [`TractModel`]: decoded, checked against its
//! declaration (`shape.rs`), typed and simplified once for a symbolic
//! batch of `n` rows, so one loaded model scores any number of rows, its
//! kernel-dependent operations replaced by fixed-order ones
//! (`fixed.rs`: the same score on every CPU).
//!
//! Refused before tract sees the graph, each with its own message: an
//! empty file, bytes that are not an ONNX protobuf, a model without a
//! graph, operators tract does not run (ZipMap, TreeEnsembleRegressor:
//! named, with how to export without them), weights in external files (a
//! bundle is the only thing a runtime needs), and an output that no node
//! computes. tract is given no model folder, so it reads no file even
//! for a tensor this check does not see (in a subgraph).

use std::collections::HashSet;

use prost::Message;
use tract_onnx::pb::tensor_proto::DataLocation;
use tract_onnx::pb::{GraphProto, ModelProto};
use tract_onnx::prelude::*;

use crate::TractModel;
use crate::{cost, shape};

/// The name of the symbolic batch dimension, as messages show it.
const BATCH: &str = "n";

/// Loads `declared`'s bytes, or says what does not fit.
pub(crate) fn load(onnx: &tract_onnx::Onnx, declared: &ir::Model) -> Result<TractModel, String> {
    let features = declared.features as usize;
    let proto = decode(&declared.bytes)?;
    let graph = graph_of(&proto)?;
    refuse_unsupported_operators(onnx, graph)?;
    refuse_external_data(graph)?;
    refuse_outputs_nothing_computes(graph)?;
    let model = onnx.model_for_proto_model(&proto).map_err(|e| format!("tract cannot read it: {e:#}"))?;
    let float = shape::check_input(&model, features)?;
    let symbol = model.symbols.sym(BATCH);
    let batch = symbol.to_dim();
    let rows = InferenceFact::dt_shape(float.datum_type(), tvec![batch.clone(), features.to_dim()]);
    let mut typed = model
        .with_input_fact(0, rows)
        .and_then(|model| model.into_typed())
        .map_err(|e| format!("it cannot take a batch of rows [n, {features}] (tract: {e:#})"))?;
    let reading = shape::choose_output(&typed, &batch, declared.output)?;
    cost::check(&typed, &symbol)?;
    let chosen = typed.output_outlets().map_err(|e| e.to_string())?[reading.output];
    let mut decluttered = typed
        .select_output_outlets(&[chosen])
        .and_then(|()| typed.into_decluttered())
        .map_err(|e| format!("tract cannot simplify it: {e:#}"))?;
    crate::fixed::fix(&mut decluttered);
    let plan = decluttered.into_runnable().map_err(|e| format!("tract cannot plan it: {e:#}"))?;
    Ok(TractModel::new(plan, float, features, reading))
}

/// The ONNX protobuf in `bytes`.
fn decode(bytes: &[u8]) -> Result<ModelProto, String> {
    if bytes.is_empty() {
        return Err("the file is empty; it is not an ONNX model".to_string());
    }
    ModelProto::decode(bytes).map_err(|e| format!("it is not an ONNX model ({e})"))
}

/// The model's graph, if it has one with something in it (any protobuf
/// without unknown wire types decodes as an empty model).
fn graph_of(proto: &ModelProto) -> Result<&GraphProto, String> {
    match &proto.graph {
        Some(graph) if !graph.node.is_empty() || !graph.output.is_empty() => Ok(graph),
        _ => Err("it is not an ONNX model: it holds no graph".to_string()),
    }
}

/// Refuses a graph using operators tract has no implementation of, by
/// name (tract would only fail when typing it).
fn refuse_unsupported_operators(onnx: &tract_onnx::Onnx, graph: &GraphProto) -> Result<(), String> {
    let mut missing: Vec<&str> = graph
        .node
        .iter()
        .map(|node| node.op_type.as_str())
        .filter(|op| !onnx.op_register.0.contains_key(*op))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    match missing.as_slice() {
        [] => Ok(()),
        ["ZipMap"] => Err("it ends in ZipMap, which tract does not run: export the classifier \
                           without it (skl2onnx: options={type(model): {'zipmap': False}})"
            .to_string()),
        [one] => Err(format!("it uses {one}, an operator tract does not run")),
        many => Err(format!("it uses operators tract does not run: {}", many.join(", "))),
    }
}

/// Refuses weights kept in external files, naming the first.
fn refuse_external_data(graph: &GraphProto) -> Result<(), String> {
    let external = graph
        .initializer
        .iter()
        .chain(graph.node.iter().flat_map(|node| node.attribute.iter().filter_map(|a| a.t.as_ref())))
        .find(|tensor| tensor.data_location == Some(DataLocation::External as i32));
    match external {
        None => Ok(()),
        Some(tensor) => {
            let file = tensor.external_data.iter().find(|e| e.key == "location").map_or("", |e| &e.value);
            Err(format!(
                "it keeps weights in an external file (`{file}`); a model's weights must be inside its .onnx file"
            ))
        }
    }
}

/// Refuses a graph output that is no input, weight or node output.
fn refuse_outputs_nothing_computes(graph: &GraphProto) -> Result<(), String> {
    let computed: HashSet<&str> = graph
        .input
        .iter()
        .map(|i| i.name.as_str())
        .chain(graph.initializer.iter().map(|t| t.name.as_str()))
        .chain(graph.node.iter().flat_map(|node| node.output.iter().map(String::as_str)))
        .collect();
    match graph.output.iter().find(|o| !computed.contains(o.name.as_str())) {
        None => Ok(()),
        Some(output) => Err(format!("its output `{}` is computed by no node", output.name)),
    }
}
