//! A model's cost, estimated once when it is loaded: the values its nodes
//! write and the multiply-adds and divisions tract counts, for one row
//! and, per row, for a chunk of rows. Inference cannot stop halfway, so a
//! model whose one row could hold an evaluation past any timeout is
//! refused at load with its estimate, instead of being run (SIGNALS.md:
//! timeouts cover models; `docs/MODELS.md` gives the bound).

use tract_onnx::prelude::*;
use tract_onnx::tract_core::ops::konst::Const;
use tract_onnx::tract_core::ops::source::TypedSource;

/// The most operations a model may cost a row: a few milliseconds of one
/// core, a hundred times what a model of thousands of weights costs.
pub const MAX_OPERATIONS_PER_ROW: i64 = 10_000_000;

/// The rows of a chunk, the second batch the cost is estimated at (a cost
/// that grows faster than the rows shows there).
const CHUNK: i64 = 1024;

/// Refuses `typed` (batch dimension `batch`) when a row costs more than
/// [`MAX_OPERATIONS_PER_ROW`].
pub(crate) fn check(typed: &TypedModel, batch: &Symbol) -> Result<(), String> {
    let one = operations(typed, batch, 1)?;
    let per_row = one.max(operations(typed, batch, CHUNK)? / CHUNK);
    if per_row > MAX_OPERATIONS_PER_ROW {
        return Err(format!(
            "it costs about {per_row} operations a row (values its nodes compute and multiply-adds), over the \
             limit of {MAX_OPERATIONS_PER_ROW}: inference cannot stop at a timeout, so such a model is refused"
        ));
    }
    Ok(())
}

/// The operations of one run over `rows` rows: every value each node
/// writes (weights and the input apart) and every multiply-add and
/// division tract counts; an unknown count is taken as the largest.
fn operations(typed: &TypedModel, batch: &Symbol, rows: i64) -> Result<i64, String> {
    let values = SymbolValues::default().with(batch, rows);
    let count = |dim: &TDim| dim.eval_to_i64(&values).map_or(i64::MAX, |n| n.max(0));
    let mut total = 0i64;
    for node in typed.nodes() {
        if node.op_is::<Const>() || node.op_is::<TypedSource>() {
            continue;
        }
        for output in &node.outputs {
            total = total.saturating_add(output.fact.shape.iter().map(&count).fold(1, i64::saturating_mul));
        }
        let inputs = typed.node_input_facts(node.id).map_err(|e| format!("tract cannot type it: {e:#}"))?;
        let costs = node.op.cost(&inputs).unwrap_or_default();
        for (_, amount) in costs.iter().filter(|(cost, _)| cost.is_compute()) {
            total = total.saturating_add(count(amount));
        }
    }
    Ok(total)
}
