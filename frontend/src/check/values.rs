//! YAML values read by their declared type: table rows, test inputs and
//! expected effects. A scalar's text is read as the type says (`0.92` as
//! an exact decimal, `NO` as a string), never guessed from its look.

use ir::{Const, TypeId, TypeKind};

use super::Checker;
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::tree::{Node, NodeKind};

impl Checker<'_> {
    /// Reads `node` as a value of `ty`, reporting every mismatch inside it.
    pub(super) fn yaml_value(&mut self, node: &Node, ty: TypeId) -> Option<Const> {
        match self.types.kind(ty).clone() {
            TypeKind::Optional(inner) => {
                if node.is_null() {
                    Some(Const::Absent)
                } else {
                    self.yaml_value(node, inner)
                }
            }
            TypeKind::List(element) => {
                let Some(items) = node.as_seq() else { return self.shape_mismatch(node, ty) };
                let values: Vec<Option<Const>> =
                    items.iter().map(|item| self.yaml_value(item, element)).collect();
                values.into_iter().collect::<Option<Vec<_>>>().map(Const::List)
            }
            TypeKind::Record(fields) => {
                let Some(entries) = node.as_map() else { return self.shape_mismatch(node, ty) };
                let mut ok = true;
                for (key, _) in entries {
                    let name = key.text().unwrap_or_default();
                    if !fields.iter().any(|f| f.name == name) {
                        self.error(
                            Diagnostic::error(codes::VALUE_TYPE, key.span, format!("unknown field `{name}`"))
                                .label(format!("not a field of {}", self.show(ty)))
                                .suggest(name, fields.iter().map(|f| f.name.as_str())),
                        );
                        ok = false;
                    }
                }
                let mut values = Vec::new();
                for field in &fields {
                    let entry = entries.iter().find(|(k, _)| k.text() == Some(field.name.as_str()));
                    match entry {
                        Some((_, value)) => values.push(self.yaml_value(value, field.ty)),
                        None if self.types.optional_inner(field.ty).is_some() => {
                            values.push(Some(Const::Absent))
                        }
                        None => {
                            self.error(
                                Diagnostic::error(
                                    codes::VALUE_TYPE,
                                    node.span,
                                    format!("missing field `{}`", field.name),
                                )
                                .label(format!(
                                    "needs `{}` ({})",
                                    field.name,
                                    self.show(field.ty)
                                )),
                            );
                            ok = false;
                        }
                    }
                }
                let values = values.into_iter().collect::<Option<Vec<_>>>()?;
                ok.then_some(Const::Record(values))
            }
            kind => {
                let NodeKind::Scalar(scalar) = &node.kind else { return self.shape_mismatch(node, ty) };
                match scalar_value(&kind, &scalar.value) {
                    Ok(value) => Some(value),
                    Err(reason) => {
                        self.error(
                            Diagnostic::error(
                                codes::VALUE_TYPE,
                                node.span,
                                format!("expected {}, found `{}`", self.show(ty), self.snippet(node.span)),
                            )
                            .label(reason),
                        );
                        None
                    }
                }
            }
        }
    }

    fn shape_mismatch(&mut self, node: &Node, ty: TypeId) -> Option<Const> {
        self.error(
            Diagnostic::error(
                codes::VALUE_TYPE,
                node.span,
                format!("expected {}, found {}", self.show(ty), node.kind_name()),
            )
            .label(format!("expected {}", self.show(ty))),
        );
        None
    }
}

/// Reads a scalar's text as a value of a scalar type.
fn scalar_value(kind: &TypeKind, text: &str) -> Result<Const, String> {
    match kind {
        TypeKind::Bool => match text {
            "true" => Ok(Const::Bool(true)),
            "false" => Ok(Const::Bool(false)),
            _ => Err("a bool is `true` or `false`".into()),
        },
        TypeKind::Int => ir::value::parse_int(text).map(Const::Int),
        TypeKind::Decimal => ir::value::parse_decimal(text).map(Const::Decimal),
        TypeKind::Float => match text.parse::<f64>() {
            Ok(f)
                if f.is_finite()
                    && !text.contains(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
            {
                Ok(Const::Float(f))
            }
            _ => Err(format!("`{text}` is not a finite float")),
        },
        TypeKind::String => Ok(Const::String(text.to_string())),
        TypeKind::Enum(values) => {
            if values.iter().any(|v| v == text) {
                Ok(Const::String(text.to_string()))
            } else {
                Err(format!("one of: {}", values.join(", ")))
            }
        }
        TypeKind::Timestamp => ir::time::parse_timestamp(text).map(Const::Timestamp),
        TypeKind::Duration => ir::time::parse_duration(text).map(Const::Duration),
        TypeKind::List(_) | TypeKind::Optional(_) | TypeKind::Record(_) => {
            Err("expected a structured value".into())
        }
    }
}
