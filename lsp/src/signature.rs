//! Signature help (`textDocument/signatureHelp`): in a call being typed,
//! the called function's signature (a built-in's, or an extern's as
//! declared) with the argument the cursor is in. The call is found in
//! the text of the cursor's line, which need not parse: parentheses,
//! brackets and commas are counted outside string literals, and a
//! message's `{...}` is read as an expression.

use frontend::ast::Contract;
use lsp_types::{ParameterInformation, ParameterLabel, SignatureHelp, SignatureInformation};

use crate::navigate;

/// An open bracket before the cursor: a call's `(` (with the function's
/// name and the commas after it so far), or another bracket.
enum Open {
    Call {
        name: String,
        commas: u32,
    },
    Other,
    /// A message's `{` inside a quoted string: the string resumes after it.
    Template,
}

/// The signature of the call the cursor at byte `offset` is in.
pub fn help(text: &str, offset: usize, ast: Option<&Contract>) -> Option<SignatureHelp> {
    let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
    let (name, commas) = innermost_call(&text[line_start..offset])?;
    let (label, _) = navigate::usage(ast, &name)?;
    let parameters = parameters(&label);
    let active = (commas as usize).min(parameters.len().saturating_sub(1)) as u32;
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label,
            documentation: None,
            parameters: Some(parameters),
            active_parameter: Some(active),
        }],
        active_signature: Some(0),
        active_parameter: Some(active),
    })
}

/// The name of the innermost call open at the end of `line`, and how many
/// of its arguments are behind the cursor.
fn innermost_call(line: &str) -> Option<(String, u32)> {
    let mut open: Vec<Open> = Vec::new();
    let mut in_string = false;
    let mut previous = '\0';
    for (at, c) in line.char_indices() {
        match c {
            '"' if previous != '\\' => in_string = !in_string,
            '{' if in_string => {
                open.push(Open::Template);
                in_string = false;
            }
            _ if in_string => {}
            '(' => {
                let name: String = line[..at]
                    .trim_end()
                    .chars()
                    .rev()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                open.push(if name.is_empty() { Open::Other } else { Open::Call { name, commas: 0 } });
            }
            '[' | '{' => open.push(Open::Other),
            ')' | ']' => {
                open.pop();
            }
            '}' => {
                if let Some(Open::Template) = open.pop() {
                    in_string = true;
                }
            }
            ',' => {
                if let Some(Open::Call { commas, .. }) = open.last_mut() {
                    *commas += 1;
                }
            }
            _ => {}
        }
        previous = c;
    }
    open.into_iter().rev().find_map(|o| match o {
        Open::Call { name, commas } => Some((name, commas)),
        _ => None,
    })
}

/// The parameters of `label` (`f(a, b): ...`): the text between its first
/// parentheses, split at top-level commas, as offsets into the label.
fn parameters(label: &str) -> Vec<ParameterInformation> {
    let Some(open) = label.find('(') else { return Vec::new() };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, open + 1);
    for (at, c) in label.char_indices().skip_while(|(i, _)| *i <= open) {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                push(label, start, at, &mut out);
                break;
            }
            ')' | '>' => depth -= 1,
            ',' if depth == 0 => {
                push(label, start, at, &mut out);
                start = at + 1;
            }
            _ => {}
        }
    }
    out
}

fn push(label: &str, start: usize, end: usize, out: &mut Vec<ParameterInformation>) {
    let text = &label[start..end];
    let start = start + (text.len() - text.trim_start().len());
    let end = start + text.trim().len();
    if end > start {
        let offsets = [utf16(&label[..start]), utf16(&label[..end])];
        out.push(ParameterInformation { label: ParameterLabel::LabelOffsets(offsets), documentation: None });
    }
}

fn utf16(text: &str) -> u32 {
    text.encode_utf16().count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (the line up to the cursor, the call and the argument it is in).
    #[test]
    fn the_innermost_open_call_and_its_argument() {
        let cases: &[(&str, Option<(&str, u32)>)] = &[
            ("  fee: max(round(amount_eur * 0.015, ", Some(("round", 1))),
            ("  fee: max(round(amount_eur * 0.015, 2), ", Some(("max", 1))),
            ("    when: contains(lower(name), \"a, (b\", ", Some(("contains", 2))),
            ("    when: any(tags, t => t in [\"a\", ", Some(("any", 1))),
            ("    message: \"Transfer (see note) of {round(amount, ", Some(("round", 1))),
            ("    message: \"Transfer of {round(amount, 2)} and (", None),
            ("    when: (amount > 1", None),
            ("    when: amount > 1", None),
        ];
        for (line, expected) in cases {
            let found = innermost_call(line);
            assert_eq!(found.as_ref().map(|(n, c)| (n.as_str(), *c)), *expected, "{line}");
        }
    }

    #[test]
    fn parameters_are_the_labels_arguments() {
        let label = "round(x, places): decimal or float, int places";
        let offsets: Vec<_> = parameters(label)
            .into_iter()
            .map(|p| match p.label {
                ParameterLabel::LabelOffsets([a, b]) => &label[a as usize..b as usize],
                ParameterLabel::Simple(_) => unreachable!("offsets are used"),
            })
            .collect();
        assert_eq!(offsets, ["x", "places"]);
        assert_eq!(parameters("score(model, list<float>): float").len(), 2);
        assert_eq!(parameters("now(): no arguments").len(), 0);
    }
}
