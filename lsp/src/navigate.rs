//! Hover and go to definition: what a name is (its type, for an input
//! field, a let, a table, a window aggregate, a built-in) and where it is
//! declared.

use frontend::Span;
use frontend::ast::Contract;

use crate::analysis::type_of;
use crate::symbols::{self, Kind, Reference};

/// The functions the checker handles itself, with how they are called.
pub const SPECIAL: &[(&str, &str)] = &[
    ("any", "any(list, x => condition): bool, whether any element satisfies it"),
    ("all", "all(list, x => condition): bool, whether every element satisfies it"),
    ("count", "count(list, x => condition): int, how many satisfy it; in a window, count(): the records"),
    ("sum", "sum(list, x => value): the sum of the values; in a window, sum(x) over its records"),
    ("matches", "matches(s, \"regex\"): bool, a pattern compiled with the contract"),
    ("has", "has(x): bool, whether an optional value is present"),
    ("score", "score(model, list<float>): float, the model's output"),
    ("distinct", "distinct(x): int, in a window, how many distinct values"),
];

/// A hover's markdown for the name at `reference`.
pub fn hover(
    ast: &Contract,
    contract: Option<&ir::Contract>,
    text: &str,
    reference: &Reference,
) -> Option<String> {
    if reference.call {
        return call(ast, &reference.path[0]);
    }
    let (kind, span) = symbols::resolve(ast, &reference.path)?;
    let path = reference.path.join(".");
    let code = |s: String| format!("```rulec\n{s}\n```");
    Some(match kind {
        Kind::Input | Kind::Let => {
            let ty =
                contract.and_then(|c| type_of(c, &reference.path)).or_else(|| written(ast, text, kind, span));
            let what = if kind == Kind::Input { "input field" } else { "let" };
            let value = match kind {
                Kind::Let => {
                    let_text(ast, text, &reference.path[0]).map(|v| format!(" = {v}")).unwrap_or_default()
                }
                _ => String::new(),
            };
            format!("{}\n{what}", code(format!("{path}: {}{value}", ty.unwrap_or_else(|| "?".into()))))
        }
        Kind::Table => format!("{}\ntable", code(format!("{path}: {}", table(ast, text, &path)?))),
        Kind::Aggregate => {
            let ty = aggregate_type(contract, &reference.path).unwrap_or_else(|| "?".into());
            let expr = aggregate_text(ast, text, &reference.path).unwrap_or_default();
            format!("{}\nwindow aggregate", code(format!("{path}: {ty} = {expr}")))
        }
        Kind::Window => format!("{}\nwindow", code(path)),
        Kind::Rule => {
            format!("{}\nrule", code(format!("{path}: {}", rule_when(ast, text, &reference.path[1]))))
        }
        Kind::Model => format!("{}\nmodel (`score({path}, features)`)", code(path.clone())),
        Kind::Extern => format!("{}\nextern function", code(path)),
        Kind::Column => {
            let (table, column) = (&reference.path[1], &reference.path[2]);
            let ty = column_type(contract, table, column)
                .or_else(|| written(ast, text, kind, span))
                .unwrap_or_else(|| "?".into());
            format!("{}\ncolumn of table `{table}`", code(format!("{table}[…].{column}: {ty}")))
        }
        Kind::Effect => format!(
            "{}\neffect",
            code(format!("{}: {}", reference.path[1], effect(ast, text, &reference.path[1])?))
        ),
    })
}

/// Where the name at `reference` is declared.
pub fn definition(ast: &Contract, reference: &Reference) -> Option<Span> {
    symbols::resolve(ast, &reference.path).map(|(_, span)| span)
}

/// How the function `name` is called, and what it is: a built-in's usage
/// (`round(x, places): ...`) or an extern's signature as declared
/// (`fx(string, int) -> decimal`). Hover and signature help show it.
pub fn usage(ast: Option<&Contract>, name: &str) -> Option<(String, &'static str)> {
    if let Some(builtin) = ir::Builtin::from_name(name) {
        return Some((builtin.usage().to_string(), "built-in function"));
    }
    if let Some((_, usage)) = SPECIAL.iter().find(|(n, _)| *n == name) {
        return Some(((*usage).to_string(), "built-in function"));
    }
    let ext = ast?.externs.iter().find(|x| x.name.value == name)?;
    Some((format!("{name}{}", ext.text.value.trim()), "extern function"))
}

fn call(ast: &Contract, name: &str) -> Option<String> {
    let (usage, what) = usage(Some(ast), name)?;
    Some(format!("```rulec\n{usage}\n```\n{what}"))
}

fn source(text: &str, span: Span) -> &str {
    text.get(span.range()).unwrap_or_default().trim()
}

/// The type of a column of a table's rows, from the checked contract.
fn column_type(contract: Option<&ir::Contract>, table: &str, column: &str) -> Option<String> {
    let contract = contract?;
    let ir::TableKind::Map { value, .. } = &contract.tables.iter().find(|t| t.name == table)?.kind else {
        return None;
    };
    let ty = crate::analysis::field(contract, *value, column)?;
    Some(contract.types.display(ty).to_string())
}

/// A declaration's type as written, when the contract did not compile.
fn written(ast: &Contract, text: &str, kind: Kind, span: Span) -> Option<String> {
    match kind {
        Kind::Column => {
            let columns = ast.tables.iter().filter_map(|t| match &t.kind {
                frontend::ast::TableDeclKind::Map { value, .. } => symbols::record_fields(value),
                _ => None,
            });
            let column = columns.flatten().find(|f| f.name.span == span)?;
            Some(source(text, column.ty.span).to_string())
        }
        Kind::Input => {
            let mut fields: Vec<&frontend::ast::FieldDecl> = ast.input.iter().collect();
            while let Some(f) = fields.pop() {
                if f.name.span == span {
                    return Some(source(text, f.ty.span).to_string());
                }
                fields.extend(symbols::record_fields(&f.ty).unwrap_or_default());
            }
            None
        }
        _ => None,
    }
}

fn let_text(ast: &Contract, text: &str, name: &str) -> Option<String> {
    let value = ast.lets.iter().find(|l| l.name.value == name)?.value.as_ref()?;
    Some(source(text, value.span).to_string())
}

fn table(ast: &Contract, text: &str, name: &str) -> Option<String> {
    use frontend::ast::TableDeclKind;
    let t = ast.tables.iter().find(|t| t.name.value == name)?;
    Some(match &t.kind {
        TableDeclKind::Map { key, value, rows } => {
            format!("{} -> {} ({} rows)", source(text, key.span), source(text, value.span), rows.len())
        }
        TableDeclKind::Set { element, rows } => {
            format!("set of {} ({} rows)", source(text, element.span), rows.len())
        }
        TableDeclKind::Invalid => "?".into(),
    })
}

fn aggregate_type(contract: Option<&ir::Contract>, path: &[String]) -> Option<String> {
    let contract = contract?;
    let window = contract.windows.iter().find(|w| w.name == path[1])?;
    let aggregate = window.aggregates.iter().find(|a| a.name == path[2])?;
    Some(contract.types.display(aggregate.ty).to_string())
}

fn aggregate_text(ast: &Contract, text: &str, path: &[String]) -> Option<String> {
    let window = ast.windows.iter().find(|w| w.name.value == path[1])?;
    let (_, expr) = window.aggregates.iter().find(|(n, _)| n.value == path[2])?;
    Some(source(text, expr.as_ref()?.span).to_string())
}

fn rule_when(ast: &Contract, text: &str, id: &str) -> String {
    let when = ast.rules.iter().find(|r| r.id.value == id).and_then(|r| r.when.as_ref());
    when.map(|w| format!("when {}", source(text, w.span))).unwrap_or_default()
}

fn effect(ast: &Contract, text: &str, name: &str) -> Option<String> {
    let e = ast.effects.iter().find(|e| e.name.value == name)?;
    let combine = e.combine.as_ref().map_or("last", |c| c.value.as_str());
    Some(format!("{} (combine: {combine})", source(text, e.ty.span)))
}
