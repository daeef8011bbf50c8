//! One version of a document, compiled: the diagnostics `rulec check`
//! gives for it (the same codes, messages and spans, all at once), its
//! syntax tree and, when it compiled, its checked IR for types.

use std::path::Path;
use std::sync::Arc;

use frontend::ast;
use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use crate::position::LineIndex;

/// What the compiler made of one version of a document.
pub struct Analysis {
    pub diagnostics: Vec<frontend::Diagnostic>,
    /// The syntax tree, when the YAML could be read.
    pub ast: Option<ast::Contract>,
    /// The checked contract, when it compiled.
    pub contract: Option<Arc<ir::Contract>>,
}

/// Compiles `text`, the contract at `path` (model files are read
/// relative to its folder). A compiler panic is reported as a diagnostic
/// rather than ending the server.
pub fn analyse(path: &Path, text: &str) -> Analysis {
    let folder = path.parent().unwrap_or(Path::new(""));
    let name = path.display().to_string();
    let compiled = std::panic::catch_unwind(|| frontend::compile_in(folder, &name, text));
    match compiled {
        Ok(compiled) => Analysis {
            diagnostics: compiled.diagnostics.items,
            ast: compiled.ast,
            contract: compiled.bundle.map(|b| b.contract_arc()),
        },
        Err(_) => Analysis {
            diagnostics: vec![frontend::Diagnostic::error(
                frontend::codes::INTERNAL,
                frontend::Span::at(0),
                "internal compiler error while checking this file",
            )],
            ast: None,
            contract: None,
        },
    }
}

/// A compiler diagnostic as the protocol shows it: the primary label's
/// range, the code and the message `rulec check` prints; the labels and
/// help as related information.
pub fn to_lsp(d: &frontend::Diagnostic, index: &LineIndex<'_>, uri: &Uri) -> Diagnostic {
    let range = |span: frontend::Span| index.range(span.start as usize, span.end as usize);
    let primary = range(d.span());
    let mut related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|label| !label.message.is_empty())
        .map(|label| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), range(label.span)),
            message: label.message.clone(),
        })
        .collect();
    related.extend(d.help.iter().map(|help| DiagnosticRelatedInformation {
        location: Location::new(uri.clone(), primary),
        message: format!("help: {help}"),
    }));
    Diagnostic {
        range: primary,
        severity: Some(if d.is_error() { DiagnosticSeverity::ERROR } else { DiagnosticSeverity::WARNING }),
        code: Some(NumberOrString::String(d.code.id().to_string())),
        source: Some("rulec".into()),
        message: d.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        ..Diagnostic::default()
    }
}

/// The type of the value `path` names, from the checked contract: a let
/// or an input field, then fields of records.
pub fn type_of(contract: &ir::Contract, path: &[String]) -> Option<String> {
    type_id(contract, path).map(|ty| contract.types.display(ty).to_string())
}

fn type_id(contract: &ir::Contract, path: &[String]) -> Option<ir::TypeId> {
    let first = path.first()?;
    let start = match contract.lets.iter().find(|l| &l.name == first) {
        Some(l) => l.ty,
        None => field(contract, contract.input, first)?,
    };
    path[1..].iter().try_fold(start, |ty, name| field(contract, ty, name))
}

/// The type of field `name` of the record `ty` (through an optional).
pub fn field(contract: &ir::Contract, ty: ir::TypeId, name: &str) -> Option<ir::TypeId> {
    let fields = contract.types.record_fields(present(contract, ty))?;
    fields.iter().find(|f| f.name == name).map(|f| f.ty)
}

/// `ty` without its optional wrappers.
fn present(contract: &ir::Contract, mut ty: ir::TypeId) -> ir::TypeId {
    while let Some(inner) = contract.types.optional_inner(ty) {
        ty = inner;
    }
    ty
}

/// The names of the fields of the value `path` names, for completion.
pub fn fields_of(contract: &ir::Contract, path: &[String]) -> Vec<(String, String)> {
    let fields = type_id(contract, path).and_then(|ty| contract.types.record_fields(present(contract, ty)));
    let shown = |f: &ir::FieldDef| (f.name.clone(), contract.types.display(f.ty).to_string());
    fields.map(|fields| fields.iter().map(shown).collect()).unwrap_or_default()
}
