//! Completion: the keys a mapping may have where the cursor is (with the
//! schema's description of each), and in an expression the names in
//! scope (input fields, lets, tables, models, built-ins), the fields of a
//! record after `.`, a contract's windows and their aggregates, its rules.

use frontend::ast::Contract;
use frontend::format::place::Place;
use lsp_types::{CompletionItem, CompletionItemKind};

use crate::analysis::fields_of;
use crate::navigate::SPECIAL;
use crate::symbols::record_fields;

/// The completions at byte `offset` of `text`. `ast` and `contract` may be
/// of an earlier version of the text (the last one that parsed, or
/// compiled): a half-typed line still completes.
pub fn complete(
    text: &str,
    offset: usize,
    ast: Option<&Contract>,
    contract: Option<&ir::Contract>,
) -> Vec<CompletionItem> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let line = &text[line_start..offset];
    let typed = line.trim_start().trim_start_matches("- ").trim_start();
    if !line.contains(':')
        && typed.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !line.trim_start().starts_with('#')
    {
        return keys(text, line_start);
    }
    let word_start = offset
        - line
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .map(char::len_utf8)
            .sum::<usize>();
    if text[..word_start].ends_with('.') {
        let chain_start = text[..word_start - 1]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
            .last()
            .map_or(word_start - 1, |(i, _)| i);
        let path: Vec<String> = text[chain_start..word_start - 1].split('.').map(String::from).collect();
        return ast.map(|ast| members(ast, contract, &path)).unwrap_or_default();
    }
    ast.map(names).unwrap_or_default()
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem { label: label.to_string(), kind: Some(kind), detail, ..CompletionItem::default() }
}

/// The names an expression can use.
fn names(ast: &Contract) -> Vec<CompletionItem> {
    let mut out = Vec::new();
    out.extend(
        ast.input.iter().map(|f| item(&f.name.value, CompletionItemKind::FIELD, Some("input field".into()))),
    );
    out.extend(
        ast.lets.iter().map(|l| item(&l.name.value, CompletionItemKind::VARIABLE, Some("let".into()))),
    );
    out.extend(
        ast.tables.iter().map(|t| item(&t.name.value, CompletionItemKind::STRUCT, Some("table".into()))),
    );
    out.extend(
        ast.models.iter().map(|m| item(&m.name.value, CompletionItemKind::CLASS, Some("model".into()))),
    );
    out.extend(
        ast.externs
            .iter()
            .map(|x| item(&x.name.value, CompletionItemKind::FUNCTION, Some(x.text.value.clone()))),
    );
    out.extend(
        ir::Builtin::ALL.iter().map(|b| item(b.name(), CompletionItemKind::FUNCTION, Some(b.usage().into()))),
    );
    out.extend(
        SPECIAL.iter().map(|(name, usage)| item(name, CompletionItemKind::FUNCTION, Some((*usage).into()))),
    );
    if !ast.windows.is_empty() {
        out.push(item("windows", CompletionItemKind::MODULE, Some("the contract's windows".into())));
    }
    out.push(item(
        "rules",
        CompletionItemKind::MODULE,
        Some("a rule, as `rules.<id>`: whether it fired".into()),
    ));
    out.extend(["true", "false", "in", "not in"].map(|k| item(k, CompletionItemKind::KEYWORD, None)));
    out
}

/// What may follow `path.`.
fn members(ast: &Contract, contract: Option<&ir::Contract>, path: &[String]) -> Vec<CompletionItem> {
    match (path[0].as_str(), path.get(1), path.len()) {
        ("windows", None, 1) => ast
            .windows
            .iter()
            .map(|w| item(&w.name.value, CompletionItemKind::MODULE, Some("window".into())))
            .collect(),
        ("windows", Some(w), 2) => ast
            .windows
            .iter()
            .filter(|x| &x.name.value == w)
            .flat_map(|x| &x.aggregates)
            .map(|(a, _)| item(&a.value, CompletionItemKind::FIELD, Some("window aggregate".into())))
            .collect(),
        ("rules", None, 1) => ast
            .rules
            .iter()
            .map(|r| item(&r.id.value, CompletionItemKind::EVENT, Some("rule".into())))
            .collect(),
        _ => {
            let typed = contract.map(|c| fields_of(c, path)).unwrap_or_default();
            if !typed.is_empty() {
                return typed
                    .into_iter()
                    .map(|(n, ty)| item(&n, CompletionItemKind::FIELD, Some(ty)))
                    .collect();
            }
            written_fields(ast, path)
        }
    }
}

/// An input record's fields as written, when the contract did not compile.
fn written_fields(ast: &Contract, path: &[String]) -> Vec<CompletionItem> {
    let mut fields = ast.input.as_slice();
    for name in path {
        let Some(f) = fields.iter().find(|f| &f.name.value == name) else { return Vec::new() };
        let Some(inner) = record_fields(&f.ty) else { return Vec::new() };
        fields = inner;
    }
    fields
        .iter()
        .map(|f| item(&f.name.value, CompletionItemKind::FIELD, Some("input field".into())))
        .collect()
}

/// The keys of the mapping whose key is being typed on the line starting
/// at `line_start`, found by the indentation of the lines above it.
fn keys(text: &str, line_start: usize) -> Vec<CompletionItem> {
    described_keys(place_of(text, line_start))
        .into_iter()
        .map(|(key, doc)| CompletionItem {
            insert_text: Some(format!("{key}: ")),
            ..item(key, CompletionItemKind::PROPERTY, doc)
        })
        .collect()
}

/// Hover on a key the language defines (`decision:`, `combine:`...),
/// written in block style or in a one-line flow mapping after the line's
/// own key: its description from the schema, and the key's byte range.
pub fn key_hover(text: &str, offset: usize) -> Option<(String, usize, usize)> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let start = offset - text[line_start..offset].chars().rev().take_while(|c| word(*c)).count();
    let end = offset + text[offset..line_end].chars().take_while(|c| word(*c)).count();
    let key = &text[start..end];
    if key.is_empty() || !text[end..line_end].trim_start_matches(' ').starts_with(':') {
        return None;
    }
    let line = &text[line_start..line_end];
    let first = line_start + (line.len() - line.trim_start_matches([' ', '-']).len());
    let mut place = place_of(text, line_start);
    if start != first {
        // A key of a flow mapping that is the value of the line's key.
        let owner = text[first..line_end].split(':').next()?;
        if !text[first..start].contains('{') || !owner.chars().all(word) {
            return None;
        }
        place = place.child(Some(owner));
    }
    let (_, doc) = described_keys(place).into_iter().find(|(k, _)| *k == key)?;
    Some((format!("```yaml\n{key}:\n```\n{}", doc.unwrap_or_default()), start, end))
}

/// Where the mapping holding the key on the line at `line_start` is, by
/// the indentation of the lines above it.
fn place_of(text: &str, line_start: usize) -> Place {
    let mut place = Place::Root;
    for step in path_above(text, line_start).iter().rev() {
        place = place.child(step.as_deref());
    }
    place
}

/// The keys a mapping at `place` may have, each with the schema's
/// description.
fn described_keys(place: Place) -> Vec<(&'static str, Option<String>)> {
    let Some(keys) = place.keys() else { return Vec::new() };
    let schema = frontend::schema::schema();
    let properties = match place {
        Place::Root => &schema["properties"],
        Place::Rule => &schema["definitions"]["rule"]["properties"],
        Place::Finding => &schema["definitions"]["finding"]["properties"],
        Place::Table => &schema["definitions"]["table"]["properties"],
        Place::Effect => &schema["definitions"]["effect"]["anyOf"][0]["properties"],
        Place::Test => &schema["definitions"]["test"]["properties"],
        Place::Expect => &schema["definitions"]["expect"]["properties"],
        Place::Window => &schema["definitions"]["window"]["properties"],
        Place::Model => &schema["definitions"]["model"]["properties"],
        _ => &serde_json::Value::Null,
    };
    keys.iter().map(|key| (*key, properties[key]["description"].as_str().map(String::from))).collect()
}

/// The keys (`Some`) and list items (`None`) above the line at
/// `line_start`, innermost first.
fn path_above(text: &str, line_start: usize) -> Vec<Option<String>> {
    let current = &text[line_start..text[line_start..].find('\n').map_or(text.len(), |n| line_start + n)];
    let indent = current.len() - current.trim_start_matches(' ').len();
    let mut path = Vec::new();
    // The column of the mapping the cursor is in, and whether a list's
    // owner is being looked for (it may sit at the list's own column).
    let (mut column, mut owner) = if current.trim_start().starts_with("- ") || current.trim_start() == "-" {
        path.push(None);
        (indent, true)
    } else {
        (indent, false)
    };
    for line in text[..line_start].lines().rev() {
        let content = line.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let at = line.len() - content.len();
        if let Some(rest) = content.strip_prefix("- ").or_else(|| (content == "-").then_some("")) {
            if !owner && at + 2 == column && !rest.is_empty() {
                path.push(None);
                column = at;
                owner = true;
            }
            continue;
        }
        let key = content.split(':').next().unwrap_or_default().trim().to_string();
        if !content.contains(':') {
            continue;
        }
        if at < column || (owner && at <= column) {
            path.push(Some(key));
            column = at;
            owner = false;
        }
        if column == 0 && !owner {
            break;
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_at(text: &str) -> Vec<String> {
        let offset = text.find('|').unwrap();
        let text = text.replace('|', "");
        complete(&text, offset, None, None).into_iter().map(|i| i.label).collect()
    }

    #[test]
    fn keys_follow_the_indentation() {
        assert!(keys_at("contract: a\n|").contains(&"rules".to_string()));
        let rule = keys_at("rules:\n  - id: x\n    |");
        assert_eq!(rule.first().map(String::as_str), Some("id"), "{rule:?}");
        assert!(keys_at("rules:\n- id: x\n  |").contains(&"when".to_string()));
        assert!(keys_at("rules:\n  - |").contains(&"when".to_string()));
        assert!(keys_at("rules:\n  - id: x\n    finding:\n      |").contains(&"severity".to_string()));
        assert!(keys_at("tests:\n  - name: t\n    expect:\n      |").contains(&"reasons".to_string()));
        assert!(keys_at("tables:\n  fx:\n    |").contains(&"rows".to_string()));
        assert!(keys_at("input:\n  |").is_empty(), "field names are the author's");
    }
}
