//! The document's outline (`textDocument/documentSymbol`): one symbol per
//! section of the contract (`input`, `tables`, `let`, `windows`, `rules`,
//! `tests`..., in the language's order), holding its declarations; input fields hold the
//! fields of their records, windows their aggregates.

use frontend::Span;
use frontend::ast::{Contract, FieldDecl, Ident};
use lsp_types::{DocumentSymbol, SymbolKind};

use crate::position::LineIndex;
use crate::symbols::record_fields;

/// A declaration: its name, what it is, the whole of it and its children.
struct Entry {
    name: String,
    detail: &'static str,
    kind: SymbolKind,
    /// The name's span, and the declaration's whole span.
    name_span: Span,
    span: Span,
    children: Vec<Entry>,
}

impl Entry {
    fn new(name: &Ident, detail: &'static str, kind: SymbolKind, end: Span) -> Entry {
        let span = Span::new(name.span.start as usize, (end.end.max(name.span.end)) as usize);
        Entry { name: name.value.clone(), detail, kind, name_span: name.span, span, children: Vec::new() }
    }

    #[allow(deprecated)] // `deprecated` is a field the type still requires.
    fn symbol(self, index: &LineIndex<'_>) -> DocumentSymbol {
        let range = |s: Span| index.range(s.start as usize, s.end as usize);
        DocumentSymbol {
            name: self.name,
            detail: Some(self.detail.to_string()),
            kind: self.kind,
            tags: None,
            deprecated: None,
            range: range(self.span),
            selection_range: range(self.name_span),
            children: Some(self.children.into_iter().map(|c| c.symbol(index)).collect()),
        }
    }
}

/// The outline of `ast`, positions counted by `index`.
pub fn outline(ast: &Contract, index: &LineIndex<'_>) -> Vec<DocumentSymbol> {
    sections(ast).into_iter().map(|s| s.symbol(index)).collect()
}

fn sections(ast: &Contract) -> Vec<Entry> {
    let input = ast.input.iter().map(field).collect();
    let tables = ast.tables.iter().map(|t| Entry::new(&t.name, "table", SymbolKind::STRUCT, t.span));
    let effects = ast.effects.iter().map(|e| Entry::new(&e.name, "effect", SymbolKind::EVENT, e.ty.span));
    let externs =
        ast.externs.iter().map(|x| Entry::new(&x.name, "extern function", SymbolKind::FUNCTION, x.text.span));
    let models = ast.models.iter().map(|m| Entry::new(&m.name, "model", SymbolKind::CLASS, m.span));
    let lets = ast.lets.iter().map(|l| {
        let end = l.value.as_ref().map_or(l.name.span, |v| v.span);
        Entry::new(&l.name, "let", SymbolKind::VARIABLE, end)
    });
    let windows = ast.windows.iter().map(|w| {
        let mut entry = Entry::new(&w.name, "window", SymbolKind::OBJECT, w.span);
        entry.children = w
            .aggregates
            .iter()
            .map(|(name, e)| {
                let end = e.as_ref().map_or(name.span, |e| e.span);
                Entry::new(name, "window aggregate", SymbolKind::PROPERTY, end)
            })
            .collect();
        entry
    });
    let rules = ast.rules.iter().map(|r| Entry::new(&r.id, "rule", SymbolKind::METHOD, r.span));
    let tests = ast.tests.iter().map(|t| Entry::new(&t.name, "test", SymbolKind::MODULE, t.span));
    [
        ("input", input),
        ("tables", tables.collect()),
        ("effects", effects.collect()),
        ("extern", externs.collect()),
        ("windows", windows.collect()),
        ("models", models.collect()),
        ("let", lets.collect()),
        ("rules", rules.collect()),
        ("tests", tests.collect()),
    ]
    .into_iter()
    .filter_map(|(name, children)| section(name, children))
    .collect()
}

/// A section holding `children`, spanning them; none when empty.
fn section(name: &str, children: Vec<Entry>) -> Option<Entry> {
    let start = children.iter().map(|c| c.span.start).min()?;
    let end = children.iter().map(|c| c.span.end).max()?;
    let span = Span::new(start as usize, end as usize);
    Some(Entry {
        name: name.to_string(),
        detail: "section",
        kind: SymbolKind::NAMESPACE,
        name_span: Span::new(start as usize, start as usize),
        span,
        children,
    })
}

/// An input field, with the fields of its record (through lists and
/// optionals) as children.
fn field(f: &FieldDecl) -> Entry {
    let mut entry = Entry::new(&f.name, "input field", SymbolKind::FIELD, f.ty.span);
    entry.children = record_fields(&f.ty).unwrap_or_default().iter().map(field).collect();
    entry
}
