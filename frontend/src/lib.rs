//! rulec's contract compiler: from a YAML contract to a verified, typed IR
//! and a bundle, with compiler-grade diagnostics.
//!
//! Stages, each its own module:
//!
//! 1. [`syntax::yaml`]: YAML to a spanned tree (no anchors, tags or
//!    duplicate keys; bounded depth; never recursive).
//! 2. [`syntax::contract`]: the tree to the [`ast`], parsing expressions
//!    ([`syntax::expr`]), templates and types.
//! 3. [`check`]: names, types, cycles and tests; lowers to `ir::Contract`,
//!    which the IR verifier checks before anything else sees it.
//! 4. [`compile`]: seals the IR into an `ir::Bundle`.
//!
//! This crate is the only one that produces user diagnostics
//! ([`Diagnostic`]). It knows nothing about evaluation: it depends on `ir`
//! and never on `runtime` or `backend`.

#![forbid(unsafe_code)]

pub mod ast;
pub mod ast_print;
pub mod check;
pub mod codes;
pub mod diagnostic;
pub mod format;
pub mod schema;
pub mod source;
pub mod syntax;
pub mod tree;

pub use diagnostic::{Diagnostic, Diagnostics, Fix, Severity};
pub use ir::Bundle;
pub use source::{SourceFile, Span};

/// The largest contract file rulec reads.
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// The outcome of compiling one file: a bundle when there was no error,
/// and every diagnostic (warnings included) either way.
#[derive(Debug)]
pub struct Compiled {
    pub bundle: Option<Bundle>,
    pub ast: Option<ast::Contract>,
    pub diagnostics: Diagnostics,
}

/// Compiles a contract's text; the spec's entry point.
pub fn compile(source: &str) -> Result<Bundle, Diagnostics> {
    let compiled = compile_file("<contract>", source);
    match compiled.bundle {
        Some(bundle) => Ok(bundle),
        None => Err(compiled.diagnostics),
    }
}

/// Parses a contract to its syntax tree (stages 1 and 2).
pub fn parse(file: &SourceFile, diagnostics: &mut Vec<Diagnostic>) -> Option<ast::Contract> {
    if file.text().len() > MAX_FILE_BYTES {
        diagnostics.push(
            Diagnostic::error(
                codes::FILE_TOO_LARGE,
                Span::at(0),
                format!("the file is {} bytes; the limit is {MAX_FILE_BYTES}", file.text().len()),
            )
            .label("this file"),
        );
        return None;
    }
    let (root, yaml_errors) = syntax::yaml::parse(file);
    // The YAML must be right before its meaning is checked: a refused
    // anchor or tag leaves a hole that would only cause more errors.
    if !yaml_errors.is_empty() {
        diagnostics.extend(yaml_errors);
        return None;
    }
    let root = root?;
    Some(syntax::contract::build(file, &root, diagnostics))
}

/// Compiles the contract in `source`, naming it `name` in diagnostics;
/// `name` is its path, and model files are read relative to its folder.
pub fn compile_file(name: &str, source: &str) -> Compiled {
    let folder = std::path::Path::new(name).parent().unwrap_or(std::path::Path::new(""));
    compile_in(folder, name, source)
}

/// [`compile_file`], reading model files relative to `folder`.
pub fn compile_in(folder: &std::path::Path, name: &str, source: &str) -> Compiled {
    compile_limited(folder, name, source, ir::bundle::MAX_BUNDLE_BYTES)
}

/// [`compile_in`], refusing a bundle whose file would be larger than
/// `max_bundle_bytes` (a parameter so that tests need no large model).
fn compile_limited(folder: &std::path::Path, name: &str, source: &str, max_bundle_bytes: usize) -> Compiled {
    let file = SourceFile::new(name, source);
    let mut items = Vec::new();
    let ast = parse(&file, &mut items);
    let contract = ast.as_ref().and_then(|ast| check::check_in(&file, folder, ast, &mut items));
    let bundle = contract.and_then(|contract| match Bundle::new(contract) {
        Ok(bundle) => Some(bundle),
        Err(e) => {
            items.push(
                Diagnostic::error(
                    codes::INTERNAL,
                    Span::at(0),
                    "internal compiler error: the bundle could not be sealed",
                )
                .label("while compiling this contract")
                .with_help(e.message),
            );
            None
        }
    });
    let bundle = bundle.filter(|bundle| match too_large(bundle, ast.as_ref(), max_bundle_bytes) {
        Some(diagnostic) => {
            items.push(diagnostic);
            false
        }
        None => true,
    });
    sort(&mut items);
    Compiled { bundle, ast, diagnostics: Diagnostics { file, items } }
}

/// The error for a bundle whose file would be larger than `limit`, which
/// every loader refuses: located at the first model's file, whose base64
/// is most of a large bundle, else at the start of the contract.
fn too_large(bundle: &Bundle, ast: Option<&ast::Contract>, limit: usize) -> Option<Diagnostic> {
    let size = bundle.json_len();
    if size <= limit {
        return None;
    }
    let model = ast.and_then(|ast| ast.models.iter().find_map(|m| m.onnx.as_ref()));
    let (span, label) = match model {
        Some(path) => (path.span, "a model file is held in the bundle as base64, a third larger"),
        None => (Span::at(0), "this contract"),
    };
    Some(
        Diagnostic::error(
            codes::BUNDLE_TOO_LARGE,
            span,
            format!("the bundle would be {size} bytes; the limit is {limit}"),
        )
        .label(label)
        .with_help("a bundle over the limit does not load: use smaller model files"),
    )
}

/// Orders diagnostics by position, errors and warnings mixed, keeping
/// the order of those at the same place.
fn sort(items: &mut [Diagnostic]) {
    items.sort_by_key(|d| (d.span().start, d.span().end));
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// A contract with a model, and the size of its bundle's file.
    fn velocity() -> (&'static Path, String, usize) {
        let folder = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ok"));
        let source = std::fs::read_to_string(folder.join("velocity_windows.yaml")).unwrap();
        let bundle = compile_in(folder, "velocity_windows.yaml", &source).bundle.expect("it compiles");
        assert_eq!(bundle.json_len(), bundle.to_json().len(), "json_len counts the file's bytes");
        (folder, source, bundle.json_len())
    }

    #[test]
    fn a_bundle_over_the_limit_is_refused_at_its_model() {
        let (folder, source, size) = velocity();
        let compiled = compile_limited(folder, "velocity_windows.yaml", &source, size - 1);
        assert!(compiled.bundle.is_none());
        let shown = compiled.diagnostics.render(false);
        assert!(
            shown.contains(&format!(
                "error[E0009]: the bundle would be {size} bytes; the limit is {}",
                size - 1
            )),
            "{shown}"
        );
        assert!(shown.contains("onnx: models/placeholder.onnx"), "located at the model file: {shown}");
    }

    #[test]
    fn a_bundle_at_the_limit_compiles() {
        let (folder, source, size) = velocity();
        let compiled = compile_limited(folder, "velocity_windows.yaml", &source, size);
        assert!(compiled.bundle.is_some(), "{}", compiled.diagnostics.render(false));
    }
}
