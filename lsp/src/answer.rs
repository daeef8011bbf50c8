//! The answers to requests about one open document, each from a
//! [`View`]: the document analysed and its line index. `None` is the
//! protocol's `null` (nothing there); a rename that cannot be done is an
//! error saying why.

use std::collections::HashMap;

use lsp_types::{
    DocumentHighlight, DocumentHighlightKind, Hover, HoverContents, Location, MarkupContent, MarkupKind,
    Position, Range, TextEdit, WorkspaceEdit,
};
use serde_json::Value;

use crate::document::View;
use crate::{complete, fixes, hints, navigate, outline, rename, signature, symbols, tokens};

fn json(value: impl serde::Serialize) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// What the name at `offset` is, or what the key there means.
pub fn hover(view: &View<'_>, offset: usize) -> Option<Value> {
    let markup = |value: String, start: usize, end: usize| Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
        range: Some(view.index.range(start, end)),
    };
    let ast = view.ast();
    let Some(reference) = ast.and_then(|ast| symbols::at(ast, offset)) else {
        let (doc, start, end) = complete::key_hover(view.text(), offset)?;
        return json(markup(doc, start, end));
    };
    let contract = view.document.last_contract.as_deref();
    let markdown = navigate::hover(ast?, contract, view.text(), &reference)?;
    json(markup(markdown, reference.span.start as usize, reference.span.end as usize))
}

pub fn definition(view: &View<'_>, offset: usize) -> Option<Value> {
    let ast = view.ast()?;
    let span = navigate::definition(ast, &symbols::at(ast, offset)?)?;
    json(Location::new(view.document.uri.clone(), view.range(span)))
}

pub fn completion(view: &View<'_>, offset: usize) -> Option<Value> {
    let document = view.document;
    let (ast, contract) = (document.last_ast.as_deref(), document.last_contract.as_deref());
    json(complete::complete(view.text(), offset, ast, contract))
}

pub fn references(view: &View<'_>, offset: usize, declaration: bool) -> Option<Value> {
    let ast = view.ast()?;
    let spans = rename::references(ast, &symbols::at(ast, offset)?, declaration);
    let uri = &view.document.uri;
    json(spans.into_iter().map(|s| Location::new(uri.clone(), view.range(s))).collect::<Vec<_>>())
}

/// The places that name what the cursor names: its declaration written,
/// the others read.
pub fn highlights(view: &View<'_>, offset: usize) -> Option<Value> {
    let ast = view.ast()?;
    let reference = symbols::at(ast, offset)?;
    let declaration = navigate::definition(ast, &reference);
    let highlight = |s| {
        let kind =
            if Some(s) == declaration { DocumentHighlightKind::WRITE } else { DocumentHighlightKind::READ };
        DocumentHighlight { range: view.range(s), kind: Some(kind) }
    };
    json(rename::references(ast, &reference, true).into_iter().map(highlight).collect::<Vec<_>>())
}

/// The lets' types, from the text as it is (none while it does not
/// compile).
pub fn hints(view: &View<'_>, range: Range) -> Option<Value> {
    let analysis = view.analysis();
    let (ast, contract) = (analysis.ast.as_ref()?, analysis.contract.as_deref()?);
    json(hints::hints(ast, contract, &view.index, range))
}

/// `prepareRename` (no `new_name`): the range a rename would change;
/// `rename`: the edits. `Err` says why there is nothing to rename.
pub fn rename(view: &View<'_>, offset: usize, new_name: Option<&str>) -> Result<Value, String> {
    let ast = view.ast().ok_or("the document's YAML does not read: fix it first")?;
    let reference = symbols::at(ast, offset).ok_or("there is no name here")?;
    let Some(new_name) = new_name else {
        return Ok(json(view.range(rename::prepare(ast, &reference)?)).unwrap_or_default());
    };
    let spans = rename::rename(ast, &reference, new_name)?;
    let compiled = !view.analysis().diagnostics.iter().any(|d| d.is_error());
    rename::keeps_meaning(&view.document.path, view.text(), compiled, &spans, new_name)?;
    let edits = spans.into_iter().map(|s| TextEdit::new(view.range(s), new_name.to_string())).collect();
    let change = WorkspaceEdit::new(HashMap::from([(view.document.uri.clone(), edits)]));
    Ok(json(change).unwrap_or_default())
}

pub fn code_actions(view: &View<'_>, range: Range) -> Option<Value> {
    json(fixes::quick_fixes(view.analysis(), view.text(), &view.index, &view.document.uri, range))
}

/// The names of the document's expressions, as it is now (none while its
/// YAML does not read).
pub fn tokens(view: &View<'_>) -> Option<Value> {
    json(tokens::tokens(view.ast()?, &view.index))
}

/// The declarations of the document as it is now (none while its YAML
/// does not read).
pub fn outline(view: &View<'_>) -> Option<Value> {
    json(outline::outline(view.ast()?, &view.index))
}

pub fn signature(view: &View<'_>, offset: usize) -> Option<Value> {
    json(signature::help(view.text(), offset, view.document.last_ast.as_deref())?)
}

/// The whole document as `rulec fmt` writes it: one edit, or none when it
/// is formatted already or is not valid YAML (its diagnostics say why).
pub fn formatting(view: &View<'_>) -> Option<Value> {
    let (document, text) = (view.document, view.text());
    let file = frontend::SourceFile::new(document.path.display().to_string(), text);
    let formatted = frontend::format::format(&file).ok().filter(|f| f != text);
    let edits: Vec<TextEdit> = formatted
        .map(|new_text| {
            let end = view.index.position(text.len());
            vec![TextEdit::new(Range::new(Position::new(0, 0), end), new_text)]
        })
        .unwrap_or_default();
    json(edits)
}
