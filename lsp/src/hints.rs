//! Inlay hints (`textDocument/inlayHint`): the type of each let, shown
//! after its value (`round(amount * fx, 2)  → decimal`), from the checked
//! contract of the text as it is; none while it does not compile, rather
//! than types of an older version.

use frontend::ast::Contract;
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, Range};

use crate::analysis::type_of;
use crate::position::LineIndex;

/// The hints whose place lies in `range`.
pub fn hints(ast: &Contract, contract: &ir::Contract, index: &LineIndex<'_>, range: Range) -> Vec<InlayHint> {
    let (from, to) = (index.offset(range.start), index.offset(range.end));
    ast.lets
        .iter()
        .filter_map(|l| {
            let end = l.value.as_ref()?.span.end as usize;
            let ty = type_of(contract, std::slice::from_ref(&l.name.value))?;
            (from <= end && end <= to).then(|| InlayHint {
                position: index.position(end),
                label: InlayHintLabel::String(format!("→ {ty}")),
                kind: Some(InlayHintKind::TYPE),
                text_edits: None,
                tooltip: None,
                padding_left: Some(true),
                padding_right: None,
                data: None,
            })
        })
        .collect()
}
