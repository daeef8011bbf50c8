//! Semantic tokens (`textDocument/semanticTokens/full`): what each name
//! in an expression is, so an editor colours the expressions YAML sees
//! as plain strings: lets, input fields, fields of records, tables,
//! functions (built-in or extern), models, windows and rules. Names that
//! resolve to nothing get no token (their diagnostic says why).

use lsp_types::{
    SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokens, SemanticTokensLegend,
};

use frontend::ast::Contract;

use crate::position::LineIndex;
use crate::symbols::{self, Kind, Reference};

/// The token types, in the legend's order.
const TYPES: [SemanticTokenType; 7] = [
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::STRUCT,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::EVENT,
];
const READONLY: u32 = 1;
const DEFAULT_LIBRARY: u32 = 2;

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![SemanticTokenModifier::READONLY, SemanticTokenModifier::DEFAULT_LIBRARY],
    }
}

fn index_of(ty: SemanticTokenType) -> u32 {
    TYPES.iter().position(|t| *t == ty).unwrap_or(0) as u32
}

/// The type and modifiers of the name at `reference`, if it names
/// something: a let is a read-only variable, an input field a parameter,
/// a field of any record a property, a table a struct, a call or a model
/// a function (a built-in from the default library), `windows` and
/// `rules` namespaces, a rule an event.
fn classify(ast: &Contract, reference: &Reference) -> Option<(SemanticTokenType, u32)> {
    let path = &reference.path;
    if reference.call {
        let external = symbols::resolve(ast, path).is_some_and(|(kind, _)| kind == Kind::Extern);
        return Some((SemanticTokenType::FUNCTION, if external { 0 } else { DEFAULT_LIBRARY }));
    }
    if path.len() == 1 && (path[0] == "windows" || path[0] == "rules") {
        return Some((SemanticTokenType::NAMESPACE, 0));
    }
    let (found, own) = symbols::resolve_own(ast, path)?;
    if !own {
        // A field of a let's record value.
        return Some((SemanticTokenType::PROPERTY, 0));
    }
    Some(match found.0 {
        Kind::Let => (SemanticTokenType::VARIABLE, READONLY),
        Kind::Input if path.len() == 1 => (SemanticTokenType::PARAMETER, 0),
        Kind::Input | Kind::Column | Kind::Aggregate => (SemanticTokenType::PROPERTY, 0),
        Kind::Table => (SemanticTokenType::STRUCT, 0),
        Kind::Model | Kind::Extern => (SemanticTokenType::FUNCTION, 0),
        Kind::Window => (SemanticTokenType::NAMESPACE, 0),
        Kind::Rule | Kind::Effect => (SemanticTokenType::EVENT, 0),
    })
}

/// The tokens of every name in `ast`'s expressions, in the protocol's
/// relative encoding, columns counted by `index`.
pub fn tokens(ast: &Contract, index: &LineIndex<'_>) -> SemanticTokens {
    let mut named: Vec<(Reference, SemanticTokenType, u32)> = symbols::in_expressions(ast)
        .into_iter()
        .filter_map(|r| classify(ast, &r).map(|(ty, modifiers)| (r, ty, modifiers)))
        .collect();
    named.sort_by_key(|(r, ..)| r.span.start);
    let mut data = Vec::with_capacity(named.len());
    let (mut line, mut column, mut taken) = (0, 0, 0);
    for (reference, ty, modifiers) in named {
        let start = index.position(reference.span.start as usize);
        let end = index.position(reference.span.end as usize);
        // One line each, none overlapping the one before (the protocol's rules).
        let overlaps = start.line == line && start.character < taken;
        if end.line != start.line || end.character <= start.character || overlaps {
            continue;
        }
        let delta_start = if start.line == line { start.character - column } else { start.character };
        data.push(SemanticToken {
            delta_line: start.line - line,
            delta_start,
            length: end.character - start.character,
            token_type: index_of(ty),
            token_modifiers_bitset: modifiers,
        });
        (line, column, taken) = (start.line, start.character, end.character);
    }
    SemanticTokens { result_id: None, data }
}
