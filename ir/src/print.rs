//! The IR's text form, for `rulec inspect --emit ir` and snapshots.
//!
//! One declaration per line; expressions in a functional notation where
//! every operator is named by its resolved form (`dec.add`, `lt`), lets
//! as `let.name`, lambda parameters as `$n`, input fields as `input.a.b`.
//! Meant for people and snapshot diffs, not for parsing back: the bundle
//! is the machine form.

use std::fmt::Write;

use crate::contract::{Contract, TableKind, Template, TemplatePart};
use crate::expr::ExprKind;
use crate::ids::ExprId;
use crate::types::TypeKind;

/// The whole contract as text.
pub fn print(contract: &Contract) -> String {
    let c = contract;
    let mut out = String::new();
    let _ = writeln!(out, "contract {} {}", c.name, c.version);
    let _ = writeln!(
        out,
        "decision {}, default {}, on_error {}",
        c.decision.name(),
        c.default.name(),
        c.on_error.name()
    );
    if !c.channels.is_empty() {
        let _ = writeln!(out, "channels {}", c.channels.join(", "));
    }
    if !c.components.is_empty() {
        let _ = writeln!(out, "components {}", c.components.join(", "));
    }
    let _ = writeln!(out, "input {}", c.types.display(c.input));
    for table in &c.tables {
        print_table(c, table, &mut out);
    }
    for effect in &c.effects {
        let _ = writeln!(
            out,
            "effect {}: {} combine {}",
            effect.name,
            c.types.display(effect.ty),
            effect.combine.name()
        );
    }
    for ext in &c.externs {
        let params: Vec<String> = ext.params.iter().map(|p| c.types.display(*p).to_string()).collect();
        let _ = writeln!(out, "extern {}({}) -> {}", ext.name, params.join(", "), c.types.display(ext.ret));
    }
    for (i, pattern) in c.regexes.iter().enumerate() {
        let _ = writeln!(out, "regex #{i} {pattern:?}");
    }
    for model in &c.models {
        let _ = writeln!(
            out,
            "model {}: {} features, {} ({})",
            model.name,
            model.features,
            model.output.name(),
            model.sha256
        );
    }
    for window in &c.windows {
        print_window(c, window, &mut out);
    }
    for l in &c.lets {
        let _ = writeln!(out, "\nlet {}: {} =\n  {}", l.name, c.types.display(l.ty), expr(c, l.value));
    }
    for rule in &c.rules {
        print_rule(c, rule, &mut out);
    }
    for test in &c.tests {
        let _ = writeln!(out, "\ntest {:?}", test.name);
    }
    out
}

fn print_table(c: &Contract, table: &crate::contract::Table, out: &mut String) {
    match &table.kind {
        TableKind::Map { key, value, rows } => {
            let _ = writeln!(
                out,
                "table {}: {} -> {}",
                table.name,
                c.types.display(*key),
                c.types.display(*value)
            );
            for (k, v) in rows {
                let _ = writeln!(out, "  {k} => {v}");
            }
        }
        TableKind::Set { element, rows } => {
            let items: Vec<String> = rows.iter().map(ToString::to_string).collect();
            let _ =
                writeln!(out, "set {}: {} = {{{}}}", table.name, c.types.display(*element), items.join(", "));
        }
    }
}

fn print_window(c: &Contract, window: &crate::signals::Window, out: &mut String) {
    let _ = writeln!(
        out,
        "\nwindow {} key {} time {} span {} grace {}",
        window.name,
        expr(c, window.key),
        expr(c, window.time),
        crate::time::format_duration(window.span),
        crate::time::format_duration(window.grace)
    );
    for aggregate in &window.aggregates {
        let arg = aggregate.arg.map(|a| expr(c, a)).unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}: {} = {}({arg})",
            aggregate.name,
            c.types.display(aggregate.ty),
            aggregate.kind.name()
        );
    }
}

fn print_rule(c: &Contract, rule: &crate::contract::Rule, out: &mut String) {
    let _ = write!(out, "\nrule {}", rule.name);
    if let Some(component) = rule.component {
        let _ = write!(out, " component {}", c.components[component.index()]);
    }
    if let Some(channels) = &rule.channels {
        let names: Vec<&str> = channels.iter().map(|ch| c.channels[ch.index()].as_str()).collect();
        let _ = write!(out, " channels {}", names.join(", "));
    }
    let _ = writeln!(out, "\n  when {}", expr(c, rule.when));
    if let Some(verdict) = &rule.verdict {
        let _ = writeln!(out, "  {} {}", verdict.verdict.name(), template(c, &verdict.message));
    }
    if let Some(finding) = &rule.finding {
        let _ = writeln!(
            out,
            "  finding {} {} {}",
            finding.code,
            finding.severity.name(),
            template(c, &finding.message)
        );
    }
    for assign in &rule.effects {
        let _ =
            writeln!(out, "  effect {} = {}", c.effects[assign.effect.index()].name, expr(c, assign.value));
    }
}

/// A template as a quoted string with `{expr}` holes.
pub fn template(c: &Contract, template: &Template) -> String {
    let mut out = String::from("\"");
    for part in &template.parts {
        match part {
            TemplatePart::Text(text) => {
                let escaped = format!("{text:?}");
                out.push_str(&escaped[1..escaped.len() - 1].replace('{', "{{").replace('}', "}}"));
            }
            TemplatePart::Expr(id) => {
                let _ = write!(out, "{{{}}}", expr(c, *id));
            }
        }
    }
    out.push('"');
    out
}

/// One expression tree as text.
pub fn expr(c: &Contract, id: ExprId) -> String {
    let mut out = String::new();
    write_expr(c, id, &mut out);
    out
}

fn write_expr(c: &Contract, id: ExprId, out: &mut String) {
    crate::stack::guard(|| write_expr_unguarded(c, id, out));
}

fn write_expr_unguarded(c: &Contract, id: ExprId, out: &mut String) {
    let node = c.expr(id);
    let call = |out: &mut String, name: &str, args: &[ExprId]| {
        out.push_str(name);
        out.push('(');
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            write_expr(c, *arg, out);
        }
        out.push(')');
    };
    match &node.kind {
        ExprKind::Const(value) => {
            let _ = write!(out, "{value}");
        }
        ExprKind::Input => out.push_str("input"),
        ExprKind::Field { base, index } => {
            write_expr(c, *base, out);
            let name = match c.types.kind(c.expr(*base).ty) {
                TypeKind::Record(fields) => fields.get(*index as usize).map_or("?", |f| f.name.as_str()),
                _ => "?",
            };
            let _ = write!(out, ".{name}");
        }
        ExprKind::Let(l) => {
            let _ = write!(out, "let.{}", c.lets[l.index()].name);
        }
        ExprKind::RuleFired(r) => {
            let _ = write!(out, "rules.{}", c.rules[r.index()].name);
        }
        ExprKind::Local(l) => {
            let _ = write!(out, "${}", l.0);
        }
        ExprKind::List(items) => call(out, "list", items),
        ExprKind::Unary { op, arg } => call(out, op.name(), &[*arg]),
        ExprKind::Binary { op, lhs, rhs } => call(out, op.name(), &[*lhs, *rhs]),
        ExprKind::Compare { op, lhs, rhs } => call(out, op.name(), &[*lhs, *rhs]),
        ExprKind::And { lhs, rhs } => call(out, "and", &[*lhs, *rhs]),
        ExprKind::Or { lhs, rhs } => call(out, "or", &[*lhs, *rhs]),
        ExprKind::Cond { cond, then, otherwise } => call(out, "if", &[*cond, *then, *otherwise]),
        ExprKind::Coalesce { value, default } => call(out, "coalesce", &[*value, *default]),
        ExprKind::Present(value) => call(out, "has", &[*value]),
        ExprKind::TableGet { table, key } => {
            call(out, &format!("get.{}", c.tables[table.index()].name), &[*key])
        }
        ExprKind::TableHas { table, key } => {
            call(out, &format!("has_key.{}", c.tables[table.index()].name), &[*key])
        }
        ExprKind::Index { list, index } => call(out, "index", &[*list, *index]),
        ExprKind::InList { item, list } => call(out, "in", &[*item, *list]),
        ExprKind::Call { func, args } => call(out, func.name(), args),
        ExprKind::Matches { subject, regex } => {
            call(out, "matches", &[*subject]);
            out.pop();
            let _ = write!(out, ", regex #{})", regex.0);
        }
        ExprKind::Lambda { kind, list, param, body } => {
            let _ = write!(out, "{}(", kind.name());
            write_expr(c, *list, out);
            let _ = write!(out, ", ${} => ", param.0);
            write_expr(c, *body, out);
            out.push(')');
        }
        ExprKind::Extern { func, args } => {
            call(out, &format!("extern.{}", c.externs[func.index()].name), args)
        }
        ExprKind::Window { window, aggregate } => {
            let w = c.windows.get(window.index());
            let name = w.map_or("?", |w| w.name.as_str());
            let agg = w.and_then(|w| w.aggregates.get(*aggregate as usize)).map_or("?", |a| a.name.as_str());
            let _ = write!(out, "windows.{name}.{agg}");
        }
        ExprKind::Score { model, features } => {
            let name = c.models.get(model.index()).map_or("?", |m| m.name.as_str());
            call(out, &format!("score.{name}"), &[*features])
        }
    }
}

/// The short name of a node's operation, as the printer and the bundle
/// spell it (`dec.add`, `field`, `const`).
pub fn op_name(kind: &ExprKind) -> &'static str {
    match kind {
        ExprKind::Const(_) => "const",
        ExprKind::Input => "input",
        ExprKind::Field { .. } => "field",
        ExprKind::Let(_) => "let",
        ExprKind::RuleFired(_) => "rule",
        ExprKind::Local(_) => "local",
        ExprKind::List(_) => "list",
        ExprKind::Unary { op, .. } => op.name(),
        ExprKind::Binary { op, .. } => op.name(),
        ExprKind::Compare { op, .. } => op.name(),
        ExprKind::And { .. } => "and",
        ExprKind::Or { .. } => "or",
        ExprKind::Cond { .. } => "if",
        ExprKind::Coalesce { .. } => "coalesce",
        ExprKind::Present(_) => "has",
        ExprKind::TableGet { .. } => "table.get",
        ExprKind::TableHas { .. } => "table.has",
        ExprKind::Index { .. } => "index",
        ExprKind::InList { .. } => "in",
        ExprKind::Call { func, .. } => func.name(),
        ExprKind::Matches { .. } => "matches",
        ExprKind::Lambda { kind, .. } => kind.name(),
        ExprKind::Extern { .. } => "extern",
        ExprKind::Window { .. } => "window",
        ExprKind::Score { .. } => "score",
    }
}
