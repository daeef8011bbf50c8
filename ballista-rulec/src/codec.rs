//! The plan codecs of every process of a cluster: Ballista's own, with
//! the contracts' revisions sent along with `rulec` and `rulec_decision`.
//!
//! Ballista sends a scalar function by its name. For rulec's two, the
//! encoder also writes the *pins*: the bundle hash of each contract the
//! function was planned with (its own pins when it was decoded from a
//! plan, else its contracts' hashes). The decoder builds the function
//! over its own process's contracts, pinned to those hashes
//! ([`Rulec::pinned`]), so a process whose contract differs refuses the
//! call, naming the contract, both hashes and itself. Every other node is
//! Ballista's codec's.
//!
//! The pins' bytes: a [`MAGIC`] line, then one `name hash` line per
//! contract (names and hashes hold no space or newline).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, TableReference, plan_err};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, HigherOrderUDF, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_expr_common::physical_expr::PhysicalExpr;
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use datafusion_rulec::{Rulec, Shape};
use runtime::ContractSet;

/// The first line of a pinned function's bytes.
pub const MAGIC: &str = "rulec-pins/1";

/// The pins' bytes of `hashes`.
pub fn encode_pins(hashes: &BTreeMap<String, String>, buf: &mut Vec<u8>) {
    buf.extend_from_slice(MAGIC.as_bytes());
    buf.push(b'\n');
    for (name, hash) in hashes {
        buf.extend_from_slice(format!("{name} {hash}\n").as_bytes());
    }
}

/// The hashes of pins' bytes, `None` if they are not pins.
pub fn decode_pins(buf: &[u8]) -> Option<BTreeMap<String, String>> {
    let text = std::str::from_utf8(buf).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    lines.map(|line| line.split_once(' ').map(|(n, h)| (n.to_string(), h.to_string()))).collect()
}

/// The shape a function name is, if it is one of rulec's.
fn shape(name: &str) -> Option<Shape> {
    [Shape::Result, Shape::Decision].into_iter().find(|shape| shape.name() == name)
}

/// What a process's codecs share: its contracts and its name in
/// messages.
#[derive(Clone)]
pub struct Pinning {
    contracts: Arc<ContractSet>,
    place: String,
}

impl fmt::Debug for Pinning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pinning").field("place", &self.place).finish_non_exhaustive()
    }
}

impl Pinning {
    /// `place` names the process: `executor 10.0.0.5:50051`.
    pub fn new(contracts: Arc<ContractSet>, place: String) -> Pinning {
        Pinning { contracts, place }
    }

    /// Writes the pins of `node` if it is one of rulec's functions;
    /// whether it was.
    fn encode(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> bool {
        match node.inner().downcast_ref::<Rulec>() {
            Some(rulec) => {
                encode_pins(&rulec.hashes(), buf);
                true
            }
            None => false,
        }
    }

    /// The function `name` pinned to `buf`'s pins, if it is one of
    /// rulec's and `buf` holds pins.
    fn decode(&self, name: &str, buf: &[u8]) -> Option<Result<Arc<ScalarUDF>>> {
        let shape = shape(name)?;
        if buf.is_empty() {
            return None;
        }
        let Some(hashes) = decode_pins(buf) else {
            return Some(plan_err!("{name}: the plan's contract revisions are unreadable"));
        };
        let rulec = Rulec::pinned(shape, self.contracts.clone(), hashes, self.place.clone());
        Some(Ok(Arc::new(ScalarUDF::new_from_impl(rulec))))
    }
}

/// A logical codec: `inner`'s, with rulec's functions pinned.
#[derive(Debug)]
pub struct LogicalCodec {
    pub pinning: Pinning,
    pub inner: Arc<dyn LogicalExtensionCodec>,
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        self.inner.try_decode_table_provider(buf, table_ref, schema, ctx)
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_table_provider(table_ref, node, buf)
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match self.pinning.decode(name, buf) {
            Some(decoded) => decoded,
            None => self.inner.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if self.pinning.encode(node, buf) { Ok(()) } else { self.inner.try_encode_udf(node, buf) }
    }

    fn try_decode_higher_order_function(&self, name: &str, buf: &[u8]) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(&self, node: &HigherOrderUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// A physical codec: `inner`'s, with rulec's functions pinned.
#[derive(Debug)]
pub struct PhysicalCodec {
    pub pinning: Pinning,
    pub inner: Arc<dyn PhysicalExtensionCodec>,
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.inner.try_decode(buf, inputs, ctx, proto_converter)
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        self.inner.try_encode(node, buf, proto_converter)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        match self.pinning.decode(name, buf) {
            Some(decoded) => decoded,
            None => self.inner.try_decode_udf(name, buf),
        }
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if self.pinning.encode(node, buf) { Ok(()) } else { self.inner.try_encode_udf(node, buf) }
    }

    fn try_decode_higher_order_function(&self, name: &str, buf: &[u8]) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(&self, node: &HigherOrderUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }
    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.inner.try_decode_expr(buf, inputs, ctx)
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> Result<()> {
        self.inner.try_encode_expr(node, buf, ctx)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
