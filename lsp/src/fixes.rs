//! Quick fixes (`textDocument/codeAction`): a diagnostic whose help says
//! "did you mean `x`?" offers to write `x` in place of the name, when the
//! diagnostic's span is that name as written.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit};

use crate::analysis::{self, Analysis};
use crate::position::LineIndex;

/// The quick fixes of the diagnostics of `analysis` that touch `range`.
pub fn quick_fixes(
    analysis: &Analysis,
    text: &str,
    index: &LineIndex<'_>,
    uri: &Uri,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let (from, to) = (index.offset(range.start), index.offset(range.end));
    analysis
        .diagnostics
        .iter()
        .filter_map(|d| {
            let fix = d.fix.as_ref()?;
            let span = d.span();
            let (start, end) = (span.start as usize, span.end as usize);
            let touches = start <= to && from <= end;
            (touches && text.get(start..end) == Some(fix.written.as_str())).then(|| {
                let edit = TextEdit::new(index.range(start, end), fix.meant.clone());
                CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Change to `{}`", fix.meant),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![analysis::to_lsp(d, index, uri)]),
                    edit: Some(WorkspaceEdit::new(HashMap::from([(uri.clone(), vec![edit])]))),
                    is_preferred: Some(true),
                    ..CodeAction::default()
                })
            })
        })
        .collect()
}
