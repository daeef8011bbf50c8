//! rulec's contracts inside DataFusion (INTERFACES.md, SQL): the scalar
//! functions `rulec(contract, channel, record)`, a struct of the
//! result's parts as the batch path's Arrow results, and
//! `rulec_decision(contract, channel, record)`, the decision alone.
//!
//! - [`call`]: one call site planned: the contract named by a literal,
//!   the channel, the record's type matched against the contract's input
//!   (a field that does not fit is a planning error naming it), the
//!   batch [`Job`](batch::Job) that evaluates it;
//! - [`udf`]: the two functions, evaluating each batch of records with
//!   that job, the batch engine of `rulec eval --input`;
//! - [`sql`]: one SQL query in process (`rulec sql`): files as tables by
//!   their quoted path, the results written as a table, NDJSON, CSV or
//!   Arrow; [`depth`]: queries nested deeper than a limit refused before
//!   DataFusion walks them, and the stack rulec's query threads get;
//!   [`files`]: tables named by their path, a missing file or a damaged
//!   Parquet footer said as `rulec eval --input` says it.
//!
//! The functions hold the contracts they serve (a
//! [`ContractSet`](runtime::ContractSet), loaded by the caller into the
//! engine of its choice), so any `SessionContext` can register them.

pub mod call;
pub mod depth;
pub mod files;
pub mod sql;
pub mod udf;

use std::sync::Arc;

use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use runtime::ContractSet;

/// The DataFusion these functions are built for (so front ends name its
/// types without a dependency of their own).
pub use datafusion;
pub use udf::{Rulec, Shape};

/// The two functions over `contracts`: `rulec` and `rulec_decision`.
pub fn functions(contracts: &Arc<ContractSet>) -> Vec<Arc<ScalarUDF>> {
    [Shape::Result, Shape::Decision]
        .into_iter()
        .map(|shape| Arc::new(ScalarUDF::new_from_impl(Rulec::new(shape, contracts.clone()))))
        .collect()
}

/// Registers the functions over `contracts` in `ctx`.
pub fn register(ctx: &SessionContext, contracts: &Arc<ContractSet>) {
    for function in functions(contracts) {
        ctx.register_udf(function.as_ref().clone());
    }
}

/// `builder` with the functions over `contracts` added to its scalar
/// functions (for a session state built by hand).
pub fn with_functions(builder: SessionStateBuilder, contracts: &Arc<ContractSet>) -> SessionStateBuilder {
    let mut builder = builder;
    let scalar = builder.scalar_functions().get_or_insert_with(Vec::new);
    scalar.extend(functions(contracts));
    builder
}
