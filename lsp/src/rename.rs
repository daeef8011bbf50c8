//! Find references and rename: every place a declaration's name is
//! written (its declaration, the expressions that read it, the effects
//! rules set, the rules tests expect), names resolved as the checker
//! resolves them. A rename is tried on the text before it is offered: the
//! renamed text must mean what the old one did (every renamed place names
//! the renamed declaration, and nothing else does) and compile if the old
//! text did.

use std::path::Path;

use frontend::Span;
use frontend::ast::Contract;

use crate::symbols::{self, Kind, Reference};

/// What `reference` names, when it names a declaration by its last name
/// (`source.country` names the field `country`; `limit.single`, a field
/// of a let's record, names no declaration of its own). A call names
/// only an extern function.
fn target(ast: &Contract, reference: &Reference) -> Option<(Kind, Span)> {
    let (found, own) = symbols::resolve_own(ast, &reference.path)?;
    let callable = !reference.call || found.0 == Kind::Extern;
    (own && callable).then_some(found)
}

/// The spans that name what `reference` names, in file order; its
/// declaration among them when `declaration` is asked for.
pub fn references(ast: &Contract, reference: &Reference, declaration: bool) -> Vec<Span> {
    let Some(found) = target(ast, reference) else { return Vec::new() };
    let mut spans: Vec<Span> =
        symbols::all(ast).iter().filter(|r| target(ast, r) == Some(found)).map(|r| r.span).collect();
    if declaration {
        spans.push(found.1);
    }
    spans.sort_by_key(|s| (s.start, s.end));
    spans.dedup();
    spans
}

/// The span a rename at `reference` would change, or why it cannot be
/// renamed.
pub fn prepare(ast: &Contract, reference: &Reference) -> Result<Span, String> {
    match target(ast, reference) {
        None => Err("nothing declared in this contract is named here".into()),
        Some((Kind::Input, _)) => {
            Err("an input field's name is what requests send: rename it in the requests too, by hand".into())
        }
        Some((Kind::Column, _)) => {
            Err("a column's name is written in every row of its table: rename it there, by hand".into())
        }
        Some(_) => Ok(reference.span),
    }
}

/// The spans to write `new_name` over to rename what `reference` names,
/// or why not: a name the language does not accept, or one taken by a
/// declaration the new name would clash with.
pub fn rename(ast: &Contract, reference: &Reference, new_name: &str) -> Result<Vec<Span>, String> {
    prepare(ast, reference)?;
    let (kind, _) = target(ast, reference).expect("prepared above");
    if !ir::names::is_identifier(new_name) {
        return Err(format!(
            "`{new_name}` is not a valid name: lower-case letters, digits and `_`, starting with a letter"
        ));
    }
    if ir::names::RESERVED.contains(&new_name) {
        return Err(format!("`{new_name}` is a reserved word"));
    }
    let mut renamed = reference.path.clone();
    let old = std::mem::replace(renamed.last_mut().expect("a path has a name"), new_name.to_string());
    if let Some((other, _)) = (old != new_name).then(|| taken(ast, kind, &renamed)).flatten() {
        return Err(format!("`{new_name}` is taken: {} has that name", what(other)));
    }
    Ok(references(ast, reference, true))
}

/// The declaration `renamed` would clash with.
fn taken(ast: &Contract, kind: Kind, renamed: &[String]) -> Option<(Kind, Span)> {
    match kind {
        // Lets, tables, models, externs and input fields share one namespace.
        Kind::Let | Kind::Table | Kind::Model | Kind::Extern => symbols::resolve(ast, &renamed[..1]),
        _ => symbols::resolve(ast, renamed),
    }
}

fn what(kind: Kind) -> &'static str {
    match kind {
        Kind::Let => "a let",
        Kind::Input => "an input field",
        Kind::Table => "a table",
        Kind::Model => "a model",
        Kind::Extern => "an extern function",
        Kind::Window => "a window",
        Kind::Aggregate => "a window aggregate",
        Kind::Rule => "a rule",
        Kind::Effect => "an effect",
        Kind::Column => "a column",
    }
}

/// Whether writing `new_name` over `spans` of `text` (the contract at
/// `path`) keeps its meaning, or why not: a place that would then name
/// something else (a lambda's parameter, a let), a place that would come
/// to name the renamed declaration, or, when the text compiled (`compiled`),
/// the renamed text's first error.
pub fn keeps_meaning(
    path: &Path,
    text: &str,
    compiled: bool,
    spans: &[Span],
    new_name: &str,
) -> Result<(), String> {
    let (new_text, new_spans) = renamed(text, spans, new_name);
    let analysis = crate::analysis::analyse(path, &new_text);
    let line = |span: Span| new_text[..span.start as usize].matches('\n').count() + 1;
    if compiled && let Some(error) = analysis.diagnostics.iter().find(|d| d.is_error()) {
        return Err(format!(
            "renaming to `{new_name}` would break the contract: {} (line {})",
            error.message,
            line(error.span())
        ));
    }
    let Some(ast) = analysis.ast.as_ref() else { return Err("the renamed text would not read".into()) };
    let named = new_spans.first().and_then(|s| symbols::at(ast, s.start as usize));
    let now = named.map(|r| references(ast, &r, true)).unwrap_or_default();
    if let Some(moved) = new_spans.iter().find(|s| !now.contains(s)) {
        return Err(format!(
            "`{new_name}` would name something else at line {}: it is already a name there",
            line(*moved)
        ));
    }
    if let Some(captured) = now.iter().find(|s| !new_spans.contains(s)) {
        return Err(format!("`{new_name}` at line {} would come to name what is renamed", line(*captured)));
    }
    Ok(())
}

/// `text` with `new_name` written over `spans` (in file order, apart),
/// and where those spans are in it.
fn renamed(text: &str, spans: &[Span], new_name: &str) -> (String, Vec<Span>) {
    let mut out = String::with_capacity(text.len());
    let mut new_spans = Vec::with_capacity(spans.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start as usize]);
        let start = out.len() as u32;
        out.push_str(new_name);
        new_spans.push(Span { start, end: out.len() as u32 });
        at = span.end as usize;
    }
    out.push_str(&text[at..]);
    (out, new_spans)
}
