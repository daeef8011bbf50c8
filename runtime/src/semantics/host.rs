//! Host functions: Rust functions an embedder registers by name and
//! signature, which contracts call after declaring them under `extern:`.
//!
//! A contract that needs a host function the engine lacks (or declares it
//! with another signature) fails to load with an error naming it. A host
//! function that returns an error or panics is an evaluation error of the
//! rule that called it; the panic never crosses into the engine.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use ir::{TypeId, TypeKind, TypeTable};

use crate::value::Owned;

/// A host function's parameter or result type.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum HostType {
    Bool,
    Int,
    Decimal,
    Float,
    String,
    Timestamp,
    Duration,
    List(Box<HostType>),
}

impl fmt::Display for HostType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostType::Bool => f.write_str("bool"),
            HostType::Int => f.write_str("int"),
            HostType::Decimal => f.write_str("decimal"),
            HostType::Float => f.write_str("float"),
            HostType::String => f.write_str("string"),
            HostType::Timestamp => f.write_str("timestamp"),
            HostType::Duration => f.write_str("duration"),
            HostType::List(inner) => write!(f, "list<{inner}>"),
        }
    }
}

/// `(string, int) -> decimal`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Signature {
    pub params: Vec<HostType>,
    pub ret: HostType,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(ToString::to_string).collect();
        write!(f, "({}) -> {}", params.join(", "), self.ret)
    }
}

impl std::str::FromStr for Signature {
    type Err = String;

    /// Parses the same text a contract writes under `extern:`.
    fn from_str(text: &str) -> Result<Signature, String> {
        let bad = || format!("`{text}` is not a signature such as \"(string, int) -> decimal\"");
        let (params, ret) = text.split_once("->").ok_or_else(bad)?;
        let params = params.trim().strip_prefix('(').and_then(|p| p.strip_suffix(')')).ok_or_else(bad)?;
        let params = if params.trim().is_empty() {
            Vec::new()
        } else {
            params.split(',').map(host_type).collect::<Option<Vec<_>>>().ok_or_else(bad)?
        };
        Ok(Signature { params, ret: host_type(ret).ok_or_else(bad)? })
    }
}

fn host_type(text: &str) -> Option<HostType> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix("list<").and_then(|t| t.strip_suffix('>')) {
        return Some(HostType::List(Box::new(host_type(inner)?)));
    }
    Some(match text {
        "bool" => HostType::Bool,
        "int" => HostType::Int,
        "decimal" => HostType::Decimal,
        "float" => HostType::Float,
        "string" => HostType::String,
        "timestamp" => HostType::Timestamp,
        "duration" => HostType::Duration,
        _ => return None,
    })
}

/// Whether a contract type is passed as `host`: enums are strings.
pub fn matches_type(types: &TypeTable, ty: TypeId, host: &HostType) -> bool {
    match (types.kind(ty), host) {
        (TypeKind::Bool, HostType::Bool)
        | (TypeKind::Int, HostType::Int)
        | (TypeKind::Decimal, HostType::Decimal)
        | (TypeKind::Float, HostType::Float)
        | (TypeKind::String | TypeKind::Enum(_), HostType::String)
        | (TypeKind::Timestamp, HostType::Timestamp)
        | (TypeKind::Duration, HostType::Duration) => true,
        (TypeKind::List(element), HostType::List(inner)) => matches_type(types, *element, inner),
        _ => false,
    }
}

type Callback = dyn Fn(&[Owned]) -> Result<Owned, String> + Send + Sync;

/// A registered host function.
#[derive(Clone)]
pub struct HostFn {
    pub name: String,
    pub signature: Signature,
    callback: Arc<Callback>,
}

impl fmt::Debug for HostFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostFn({}: {})", self.name, self.signature)
    }
}

impl HostFn {
    pub fn new(
        name: impl Into<String>,
        signature: Signature,
        callback: impl Fn(&[Owned]) -> Result<Owned, String> + Send + Sync + 'static,
    ) -> HostFn {
        HostFn { name: name.into(), signature, callback: Arc::new(callback) }
    }

    /// Calls the function, turning a panic into an error and checking the
    /// result's type.
    pub fn call(&self, args: &[Owned]) -> Result<Owned, String> {
        let result = catch_unwind(AssertUnwindSafe(|| (self.callback)(args)))
            .unwrap_or_else(|_| Err("the host function panicked".to_string()))?;
        if value_has_type(&result, &self.signature.ret) {
            Ok(result)
        } else {
            Err(format!("returned a value that is not a {}", self.signature.ret))
        }
    }
}

fn value_has_type(value: &Owned, ty: &HostType) -> bool {
    match (value, ty) {
        (Owned::Bool(_), HostType::Bool)
        | (Owned::Int(_), HostType::Int)
        | (Owned::Decimal(_), HostType::Decimal)
        | (Owned::String(_), HostType::String)
        | (Owned::Timestamp(_), HostType::Timestamp)
        | (Owned::Duration(_), HostType::Duration) => true,
        (Owned::Float(f), HostType::Float) => f.is_finite(),
        (Owned::List(items), HostType::List(inner)) => items.iter().all(|i| value_has_type(i, inner)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse_and_print() {
        let sig: Signature = "(string, list<int>) -> decimal".parse().unwrap();
        assert_eq!(sig.to_string(), "(string, list<int>) -> decimal");
        assert!("string -> int".parse::<Signature>().is_err());
        assert_eq!("() -> bool".parse::<Signature>().unwrap().params.len(), 0);
    }

    #[test]
    fn panics_and_wrong_results_become_errors() {
        let sig: Signature = "(int) -> int".parse().unwrap();
        let panics = HostFn::new("p", sig.clone(), |_| panic!("boom"));
        assert_eq!(panics.call(&[Owned::Int(1)]), Err("the host function panicked".into()));
        let wrong = HostFn::new("w", sig, |_| Ok(Owned::Bool(true)));
        assert!(wrong.call(&[]).unwrap_err().contains("not a int"));
    }
}
