//! The two scalar functions: [`Rulec`] in its two [`Shape`]s.
//!
//! A call's record argument is one Arrow struct array per batch: its
//! fields are the columns the batch engine reads ([`batch::Job`] over a
//! record batch of them), so a row is evaluated exactly as
//! `rulec eval --input` evaluates it. The results are the batch path's
//! Arrow result columns: `rulec` returns them as one struct (`decision`,
//! `reasons`, `findings`, `effects`, `errors`, and `error`, the record's
//! invalid-input error, else null); `rulec_decision` returns the
//! decision as a string, null for a record that was not evaluated. A
//! null record gives a null result.
//!
//! A function may be *pinned* ([`Rulec::pinned`]): it carries the bundle
//! hash of each contract the query was planned with (a cluster sends them
//! with the plan), and refuses to plan a call whose contract's hash here
//! differs, naming the contract, both hashes and the process (its
//! `place`): one revision of a contract everywhere a query runs.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use batch::output::Output;
use batch::source::Chunk;
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions, StringArray, StructArray,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use runtime::ContractSet;
use runtime::result::Parts;

use crate::call::{Call, Calls};

/// Which of the two functions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Shape {
    /// `rulec`: the whole result, a struct.
    Result,
    /// `rulec_decision`: the decision, a string.
    Decision,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Result => "rulec",
            Shape::Decision => "rulec_decision",
        }
    }

    fn parts(self) -> Parts {
        match self {
            Shape::Result => Parts::ALL,
            Shape::Decision => Parts::NONE,
        }
    }
}

/// One of the functions over a set of contracts.
#[derive(Debug)]
pub struct Rulec {
    shape: Shape,
    contracts: Arc<ContractSet>,
    signature: Signature,
    calls: Calls,
    pins: Option<Pins>,
}

/// The bundle hashes a query was planned with (contract name to hash),
/// and the process that holds this function, for messages.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Pins {
    hashes: BTreeMap<String, String>,
    place: String,
}

impl Rulec {
    pub fn new(shape: Shape, contracts: Arc<ContractSet>) -> Rulec {
        Rulec {
            shape,
            contracts,
            signature: Signature::any(3, Volatility::Immutable),
            calls: Calls::default(),
            pins: None,
        }
    }

    /// The function over `contracts`, pinned to `hashes` (contract name to
    /// bundle hash, as planned elsewhere); `place` names this process in
    /// messages (`executor 10.0.0.5:50051`).
    pub fn pinned(
        shape: Shape,
        contracts: Arc<ContractSet>,
        hashes: BTreeMap<String, String>,
        place: String,
    ) -> Rulec {
        Rulec { pins: Some(Pins { hashes, place }), ..Rulec::new(shape, contracts) }
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    pub fn contracts(&self) -> &Arc<ContractSet> {
        &self.contracts
    }

    /// The hashes this function is pinned to, if it is.
    pub fn pins(&self) -> Option<&BTreeMap<String, String>> {
        self.pins.as_ref().map(|pins| &pins.hashes)
    }

    /// The contract hashes a plan made with this function is pinned to:
    /// its own pins, else its contracts' hashes.
    pub fn hashes(&self) -> BTreeMap<String, String> {
        match &self.pins {
            Some(pins) => pins.hashes.clone(),
            None => self
                .contracts
                .contracts()
                .iter()
                .map(|c| (c.name().to_string(), c.hash().to_string()))
                .collect(),
        }
    }

    /// Whether the contract a call names (a literal first argument) has
    /// here the hash it was planned with.
    fn check_pin(&self, literals: &[Option<&ScalarValue>]) -> Result<()> {
        let Some(pins) = &self.pins else { return Ok(()) };
        let Some(Some(Some(name))) = literals.first().copied().flatten().map(ScalarValue::try_as_str) else {
            return Ok(()); // not a call of a named contract: planning says why
        };
        let here = self.contracts.get(name).map(|c| c.hash());
        match (pins.hashes.get(name), here) {
            (Some(planned), Some(here)) if planned == here => Ok(()),
            (Some(planned), Some(here)) => plan_err!(
                "contract `{name}`: the query was planned against {planned} but {} holds {here}",
                pins.place
            ),
            (Some(planned), None) => plan_err!(
                "contract `{name}`: the query was planned against {planned} but {} does not serve it",
                pins.place
            ),
            (None, _) => plan_err!(
                "contract `{name}`: the query was planned without it, and {} cannot run it",
                pins.place
            ),
        }
    }

    fn plan(&self, types: &[&DataType], literals: &[Option<&ScalarValue>]) -> Result<Arc<Call>> {
        self.check_pin(literals)?;
        self.calls
            .plan(self.shape.name(), &self.contracts, self.shape.parts(), types, literals)
            .map_err(DataFusionError::Plan)
    }

    /// The type of this function's result for `call`.
    fn result_type(&self, call: &Call) -> DataType {
        match self.shape {
            Shape::Result => DataType::Struct(result_fields(call)),
            Shape::Decision => DataType::Utf8,
        }
    }
}

/// The fields of `rulec`'s struct: the job's result columns.
fn result_fields(call: &Call) -> Fields {
    call.job.result_schema().fields().clone()
}

impl PartialEq for Rulec {
    fn eq(&self, other: &Rulec) -> bool {
        self.shape == other.shape && Arc::ptr_eq(&self.contracts, &other.contracts) && self.pins == other.pins
    }
}

impl Eq for Rulec {}

impl Hash for Rulec {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.shape.hash(state);
        Arc::as_ptr(&self.contracts).hash(state);
        self.pins.hash(state);
    }
}

impl ScalarUDFImpl for Rulec {
    fn name(&self) -> &str {
        self.shape.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        // The type depends on the contract, a literal: DataFusion asks
        // `return_field_from_args`, which sees it.
        plan_err!("{}: the contract (the first argument) must be a string literal", self.name())
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs<'_>) -> Result<FieldRef> {
        let types: Vec<&DataType> = args.arg_fields.iter().map(|f| f.data_type()).collect();
        let call = self.plan(&types, args.scalar_arguments)?;
        Ok(Arc::new(Field::new(self.name(), self.result_type(&call), true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let literals: Vec<Option<&ScalarValue>> = args
            .args
            .iter()
            .map(|arg| match arg {
                ColumnarValue::Scalar(value) => Some(value),
                ColumnarValue::Array(_) => None,
            })
            .collect();
        let types: Vec<&DataType> = args.arg_fields.iter().map(|f| f.data_type()).collect();
        let call = self.plan(&types, &literals)?;
        let records = match &args.args[2] {
            ColumnarValue::Array(array) => array.clone(),
            ColumnarValue::Scalar(value) => value.to_array_of_size(args.number_rows)?,
        };
        let results = evaluate(&call, records.as_struct())?;
        let column: ArrayRef = match self.shape {
            Shape::Result => Arc::new(results),
            Shape::Decision => decisions(&results)?,
        };
        Ok(ColumnarValue::Array(column))
    }
}

/// The results of `records` under `call`, one struct row each (null for
/// a null record).
fn evaluate(call: &Call, records: &StructArray) -> Result<StructArray> {
    let rows = records.len();
    let (_, columns, nulls) = records.clone().into_parts();
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    let batch = RecordBatch::try_new_with_options(call.records.clone(), columns, &options)?;
    let evaluated = call.job.evaluate(&Chunk::Batch(batch)).map_err(DataFusionError::Execution)?;
    let Output::Batch(results) = evaluated.output else {
        return exec_err!("internal: Arrow results expected");
    };
    if results.num_rows() != rows {
        return exec_err!("internal: {} results for {rows} records", results.num_rows());
    }
    let (schema, columns, _) = results.into_parts();
    Ok(StructArray::try_new(schema.fields().clone(), columns, nulls)?)
}

/// The decision column of `results`, as strings (null where the record
/// was not evaluated, or was null).
fn decisions(results: &StructArray) -> Result<ArrayRef> {
    let Some(dictionary) = results
        .column_by_name("decision")
        .and_then(|decision| decision.as_dictionary_opt::<datafusion::arrow::datatypes::Int8Type>())
    else {
        return exec_err!("internal: results without their decisions");
    };
    let values = dictionary.values().as_string::<i32>();
    let strings: StringArray = (0..results.len())
        .map(|row| {
            let valid = results.is_valid(row) && dictionary.is_valid(row);
            valid.then(|| values.value(dictionary.keys().value(row) as usize))
        })
        .collect();
    Ok(Arc::new(strings))
}
