//! One call site of `rulec` or `rulec_decision`, planned: its arguments
//! checked, once, when DataFusion asks for the call's type, and again
//! (from the same cache) when it runs.
//!
//! - `contract`: a string literal naming a served contract (an unknown
//!   one is the runtime's message: the closest name, the names served);
//! - `channel`: a string literal, or `NULL` for a contract without
//!   channels (an unknown one is the runtime's message);
//! - `record`: a struct whose fields are the contract's input, matched as
//!   the batch path matches a file's columns
//!   ([`batch::columns::ColumnPlan`]): a field of the wrong type, or a
//!   required field missing, is an error naming it (a float where the
//!   contract has a decimal suggests the `CAST`, saying it rounds). Extra fields
//!   are ignored, as extra columns are.
//!
//! A contract with windows is refused: its windows see records in input
//! order, and a SQL plan evaluates rows in no order it promises (see
//! docs/decisions.md, "Contracts in SQL").

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use batch::{Job, OutputFormat, Settings};
use datafusion::arrow::datatypes::{DataType, Fields, Schema, SchemaRef};
use datafusion::common::ScalarValue;
use ir::{TypeId, TypeKind, TypeTable};
use runtime::result::Parts;
use runtime::{Contract, ContractSet};

/// What a call site's arguments resolved to, and the job that evaluates
/// its records.
#[derive(Debug)]
pub struct Call {
    pub job: Job,
    /// The record argument's fields, as a schema of the batches the job
    /// reads.
    pub records: SchemaRef,
}

/// The arguments that decide a call's plan: the contract, the channel,
/// the record's fields.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Key {
    contract: String,
    channel: Option<String>,
    record: Fields,
}

/// Planned calls by their arguments, shared by a function's call sites
/// (a plan is planned once, however many batches it runs).
#[derive(Debug, Default)]
pub struct Calls {
    planned: Mutex<HashMap<Key, Arc<Call>>>,
}

/// The largest number of planned calls kept: past it, the cache is
/// emptied (a session planning ever new record types would otherwise grow
/// it without bound).
const MAX_PLANNED: usize = 256;

impl Calls {
    /// The plan of a call of `function` (its name, for messages) whose
    /// arguments are of `types`, `literals` the values of those that are
    /// constants.
    pub fn plan(
        &self,
        function: &str,
        contracts: &ContractSet,
        parts: Parts,
        types: &[&DataType],
        literals: &[Option<&ScalarValue>],
    ) -> Result<Arc<Call>, String> {
        let key = key(function, types, literals)?;
        let mut planned = self.planned.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(call) = planned.get(&key) {
            return Ok(call.clone());
        }
        let call = Arc::new(plan(function, contracts, parts, &key)?);
        if planned.len() >= MAX_PLANNED {
            planned.clear();
        }
        planned.insert(key, call.clone());
        Ok(call)
    }
}

/// The arguments' key, or why they are not a call of `function`.
fn key(function: &str, types: &[&DataType], literals: &[Option<&ScalarValue>]) -> Result<Key, String> {
    if types.len() != 3 || literals.len() != 3 {
        return Err(format!(
            "{function} takes three arguments (contract, channel, record), not {}",
            types.len()
        ));
    }
    let contract = match literals[0].map(ScalarValue::try_as_str) {
        Some(Some(Some(name))) => name.to_string(),
        _ => {
            return Err(format!(
                "{function}: the contract (the first argument) must be a string literal naming a contract"
            ));
        }
    };
    let channel = match literals[1] {
        Some(value) if value.is_null() => None,
        Some(value) => match value.try_as_str() {
            Some(Some(channel)) => Some(channel.to_string()),
            _ => return Err(channel_not_literal(function)),
        },
        None => return Err(channel_not_literal(function)),
    };
    let DataType::Struct(record) = types[2] else {
        return Err(format!(
            "{function}: the record (the third argument) must be a struct of the contract's input fields, \
             as named_struct('amount', amount, ...) makes, not {}",
            types[2]
        ));
    };
    Ok(Key { contract, channel, record: record.clone() })
}

fn channel_not_literal(function: &str) -> String {
    format!("{function}: the channel (the second argument) must be a string literal or NULL")
}

/// Plans the call `key` names.
fn plan(function: &str, contracts: &ContractSet, parts: Parts, key: &Key) -> Result<Call, String> {
    let contract =
        contracts.route(Some(&key.contract)).map_err(|e| format!("{function}: {}", e.message()))?;
    let name = contract.name();
    if !contract.ir().windows.is_empty() {
        return Err(format!(
            "{function}: `{name}` declares windows, whose values depend on the records before each one in \
             input order, and SQL evaluates rows in no order it promises; evaluate it with `rulec eval --input`"
        ));
    }
    check_channel(contract, key.channel.as_deref()).map_err(|e| format!("{function}: `{name}`: {e}"))?;
    // Every column nullable: a struct's non-nullable field may still hold
    // nulls under the struct's own nulls (NULL records).
    let records: Fields = key.record.iter().map(|f| f.as_ref().clone().with_nullable(true)).collect();
    let records = Arc::new(Schema::new(records));
    let settings = Settings {
        channel: key.channel.clone(),
        parts,
        keep: Vec::new(),
        output: OutputFormat::Arrow,
        limit: None,
    };
    let job = Job::new(contract.clone(), &settings, Some(&records)).map_err(|e| {
        let hint = float_for_decimal(&contract.ir().types, contract.ir().input, &key.record, "")
            .filter(|(path, _)| e.contains(&format!("`{path}`")))
            .map(|(path, data)| {
                format!(
                    " (a {data} is not exact: pass CAST({path} AS DECIMAL(p, s)), which rounds every value to \
                     s places: choose s to keep every place the values have)"
                )
            });
        format!(
            "{function}: the record does not fit `{name}`'s input: {}{}",
            in_sql_words(&e),
            hint.unwrap_or_default()
        )
    })?;
    Ok(Call { job, records })
}

/// Whether `channel` (`None`: the argument is NULL) is one `contract`
/// takes, or why not.
fn check_channel(contract: &Contract, channel: Option<&str>) -> Result<(), String> {
    let declared = &contract.ir().channels;
    if channel.is_none() && !declared.is_empty() {
        return Err(format!(
            "the channel (the second argument) is NULL, and the contract declares channels ({}): name one",
            declared.join(", ")
        ));
    }
    contract.context(channel, None, None).map(|_| ()).map_err(|e| {
        let messages: Vec<String> = e.details.iter().map(|d| d.message.clone()).collect();
        format!("the channel (the second argument): {}", messages.join("; "))
    })
}

/// The batch path's words for a file's columns, as a record's fields.
fn in_sql_words(message: &str) -> String {
    message
        .replace("the input has no column `", "the record has no field `")
        .replace("input column `", "field `")
}

/// The first field of `record` (at `path`) that is an Arrow float where
/// the contract's type `ty` has a decimal: its path and Arrow type.
fn float_for_decimal(
    types: &TypeTable,
    ty: TypeId,
    record: &Fields,
    path: &str,
) -> Option<(String, DataType)> {
    for field in types.record_fields(ty)? {
        let Some(column) = record.iter().find(|c| c.name() == &field.name) else { continue };
        let at = if path.is_empty() { field.name.clone() } else { format!("{path}.{}", field.name) };
        let inner = match types.kind(field.ty) {
            TypeKind::Optional(inner) => *inner,
            _ => field.ty,
        };
        match (types.kind(inner), column.data_type()) {
            (TypeKind::Decimal, data @ (DataType::Float16 | DataType::Float32 | DataType::Float64)) => {
                return Some((at, data.clone()));
            }
            (TypeKind::Record(_), DataType::Struct(children)) => {
                if let Some(found) = float_for_decimal(types, inner, children, &at) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}
