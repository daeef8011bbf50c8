//! The syntax tree as text, for `rulec inspect --emit ast`: one line per
//! declaration, expressions fully parenthesised so precedence is visible.

use std::fmt::Write;

use crate::ast::*;

/// The contract's syntax tree, readable.
pub fn print(c: &Contract) -> String {
    let mut out = String::new();
    let text =
        |s: &Option<crate::source::Spanned<String>>| s.as_ref().map_or("-".to_string(), |s| s.value.clone());
    let _ = writeln!(out, "contract {} {}", text(&c.name), text(&c.version));
    let _ = writeln!(
        out,
        "decision {} default {} on_error {}",
        text(&c.decision),
        text(&c.default),
        text(&c.on_error)
    );
    let names = |ids: &[Ident]| ids.iter().map(|i| i.value.as_str()).collect::<Vec<_>>().join(", ");
    let _ = writeln!(out, "channels [{}]", names(&c.channels));
    let _ = writeln!(out, "components [{}]", names(&c.components));
    for field in &c.input {
        let _ = writeln!(out, "input {}: {}", field.name.value, type_text(&field.ty));
    }
    for table in &c.tables {
        match &table.kind {
            TableDeclKind::Map { key, value, rows } => {
                let _ = writeln!(
                    out,
                    "table {}: {} -> {} ({} rows)",
                    table.name.value,
                    type_text(key),
                    type_text(value),
                    rows.len()
                );
            }
            TableDeclKind::Invalid => {
                let _ = writeln!(out, "table {}: <invalid>", table.name.value);
            }
            TableDeclKind::Set { element, rows } => {
                let _ =
                    writeln!(out, "set {}: {} ({} rows)", table.name.value, type_text(element), rows.len());
            }
        }
    }
    for effect in &c.effects {
        let combine = effect.combine.as_ref().map_or("last", |c| c.value.as_str());
        let _ = writeln!(out, "effect {}: {} combine {combine}", effect.name.value, type_text(&effect.ty));
    }
    for ext in &c.externs {
        let _ = writeln!(out, "extern {}: {}", ext.name.value, ext.text.value);
    }
    for l in &c.lets {
        let _ = writeln!(
            out,
            "let {} = {}",
            l.name.value,
            l.value.as_ref().map_or("<error>".into(), Expr::to_sexp)
        );
    }
    for rule in &c.rules {
        let _ = writeln!(out, "rule {}", rule.id.value);
        if let Some(component) = &rule.component {
            let _ = writeln!(out, "  component {}", component.value);
        }
        if let Some(channels) = &rule.channels {
            let _ = writeln!(out, "  channels [{}]", names(channels));
        }
        let _ = writeln!(out, "  when {}", rule.when.as_ref().map_or("<error>".into(), Expr::to_sexp));
        for (word, template) in [("deny", &rule.deny), ("allow", &rule.allow)] {
            if let Some(t) = template {
                let _ = writeln!(out, "  {word} {}", template_text(t));
            }
        }
        if let Some(f) = &rule.finding {
            let message = f.message.as_ref().map_or("-".into(), template_text);
            let _ = writeln!(out, "  finding {} {} {message}", text(&f.code), text(&f.severity));
        }
        for (name, value) in &rule.effects {
            let _ = writeln!(
                out,
                "  effect {} = {}",
                name.value,
                value.as_ref().map_or("<error>".into(), Expr::to_sexp)
            );
        }
    }
    for test in &c.tests {
        let _ = writeln!(out, "test {:?}", test.name.value);
    }
    out
}

/// A written type as text.
pub fn type_text(ty: &TypeExpr) -> String {
    match &ty.kind {
        TypeExprKind::Named(name) => name.clone(),
        TypeExprKind::List(inner) => format!("list<{}>", type_text(inner)),
        TypeExprKind::Optional(inner) => format!("{}?", type_text(inner)),
        TypeExprKind::Record(fields) => {
            let fields: Vec<String> =
                fields.iter().map(|f| format!("{}: {}", f.name.value, type_text(&f.ty))).collect();
            format!("{{ {} }}", fields.join(", "))
        }
        TypeExprKind::Invalid => "<invalid>".to_string(),
        TypeExprKind::Enum(values) => {
            format!("enum [{}]", values.iter().map(|v| v.value.as_str()).collect::<Vec<_>>().join(", "))
        }
    }
}

fn template_text(t: &Template) -> String {
    let mut out = String::from("\"");
    for part in &t.parts {
        match part {
            TemplatePart::Text(text) => out.push_str(&text.replace('{', "{{").replace('}', "}}")),
            TemplatePart::Expr(e) => {
                let _ = write!(out, "{{{}}}", e.to_sexp());
            }
        }
    }
    out.push('"');
    out
}
