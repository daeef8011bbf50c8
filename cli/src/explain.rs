//! `rulec eval --explain`: why each request got its decision, in the
//! contract's own words. Per rule, in the order the engine decided them:
//! whether it applied and fired, its condition as written in the YAML
//! (the operands of `&&`/`||` indented under it, in evaluation order,
//! those it did not need said so), the value of each, of their own
//! operands, of the lets it read and of the window values and scores.
//! `--format json` gives the same as one JSON object per request.

use std::fmt::Write as _;
use std::path::PathBuf;

use runtime::ContractSet;
use runtime::result::{Condition, RuleTrace};
use serde_json::{Value, json};

use crate::inputs::{Lines, is_blank};
use crate::written::{Written, condition_tree, operands};
use crate::{Failure, Outcome};

/// How explanations are printed.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// One JSON object per request.
    Json,
}

/// A condition or operand as written: its depth in the `&&`/`||` tree,
/// its value (`None` when it was not needed) and its own operands'.
struct Shown {
    text: String,
    depth: usize,
    value: Option<String>,
    operands: Vec<(String, String)>,
}

/// One rule's trace, as written.
struct Explained {
    rule: String,
    line: usize,
    status: &'static str,
    error: Option<String>,
    conditions: Vec<Shown>,
    lets: Vec<(String, String)>,
    signals: Vec<(String, String)>,
}

pub fn run(set: &ContractSet, paths: &[(String, PathBuf)], lines: Lines, format: Format) -> Outcome {
    let written: Vec<(String, Option<Written>)> =
        paths.iter().map(|(name, path)| (name.clone(), Written::read(path))).collect();
    let mut all_valid = true;
    let mut number = 0;
    for line in lines {
        let line = line.map_err(|e| Failure::Usage(format!("cannot read requests: {e}")))?;
        if is_blank(&line) {
            continue;
        }
        number += 1;
        let (contract, request) = match set.request(&line) {
            Ok(found) => found,
            Err(refused) => {
                all_valid = false;
                failed(format, number, "invalid", &refused.to_string());
                continue;
            }
        };
        let (result, traces) = match contract.explain(&request) {
            Ok(explained) => explained,
            Err(e) => {
                all_valid = false;
                failed(format, number, "not evaluated", &e.to_string());
                continue;
            }
        };
        let source = written.iter().find(|(n, _)| n == contract.name()).and_then(|(_, w)| w.as_ref());
        let rules: Vec<Explained> = traces.iter().map(|t| explained(contract.ir(), source, t)).collect();
        let result_json: Value = serde_json::from_slice(&result.to_json()).unwrap_or(Value::Null);
        match format {
            Format::Text => {
                let mut text = format!(
                    "request {number}: {} {} -> {}\n",
                    contract.name(),
                    contract.version(),
                    result.summary()
                );
                rules.iter().for_each(|r| describe(r, &mut text));
                let _ = writeln!(text, "  result: {}\n", String::from_utf8_lossy(&result.to_json()));
                if !emit(&text) {
                    return Ok(());
                }
            }
            Format::Json => {
                let rules: Vec<Value> = rules.iter().map(to_json).collect();
                let explained = json!({
                    "request": number,
                    "contract": contract.name(),
                    "version": contract.version(),
                    "rules": rules,
                    "result": result_json,
                });
                if !emit(&format!("{explained}\n")) {
                    return Ok(());
                }
            }
        }
    }
    if all_valid { Ok(()) } else { Err(Failure::Reported) }
}

fn failed(format: Format, number: usize, what: &str, why: &str) {
    let _ = emit(&match format {
        Format::Text => format!("request {number}: {what}\n  {why}\n\n"),
        Format::Json => {
            format!("{}\n", json!({ "request": number, "error": { "kind": what, "message": why } }))
        }
    });
}

/// Writes `text` to stdout; false once stdout is closed (`| head`): the
/// rest is not wanted.
fn emit(text: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_ok()
}

/// A rule's trace with its condition as written, when the source's
/// `&&`/`||` tree has the shape of the IR's (else as the IR prints it).
fn explained(contract: &ir::Contract, source: Option<&Written>, trace: &RuleTrace) -> Explained {
    let rule = &contract.rules[trace.rule.index()];
    let declared = source.and_then(|s| s.rule(&rule.name));
    let tree = declared.and_then(|d| d.when.as_ref()).map(condition_tree).unwrap_or_default();
    let same_shape = tree.len() == trace.conditions.len();
    let ir_depths = depths(contract, &trace.conditions);
    let conditions = trace
        .conditions
        .iter()
        .enumerate()
        .map(|(i, condition)| {
            let written = same_shape.then(|| tree[i].0).zip(source);
            let text = written.map_or_else(|| condition.text.clone(), |(e, s)| s.snippet(e.span));
            let operands = operands_as_written(contract, source, condition, written);
            Shown { text, depth: ir_depths[i], value: condition.value.clone(), operands }
        })
        .collect();
    let (status, error) = match (&trace.fired, trace.applied) {
        (None, false) => ("did not apply", None),
        (None, true) => ("not evaluated: an earlier rule decided", None),
        (Some(Ok(true)), _) => ("fired", None),
        (Some(Ok(false)), _) => ("did not fire", None),
        (Some(Err(e)), _) => ("error", Some(e.clone())),
    };
    let status = match (status, trace.applied) {
        ("fired", false) => "fired (referenced by another rule)",
        ("did not fire", false) => "did not fire (referenced by another rule)",
        (status, _) => status,
    };
    Explained {
        rule: rule.name.clone(),
        line: declared.zip(source).map_or(0, |(d, s)| s.line(d.id.span)),
        status,
        error,
        conditions,
        lets: trace
            .lets
            .iter()
            .filter(|(name, _)| !source.is_some_and(|s| s.made_by_compiler(name)))
            .cloned()
            .collect(),
        signals: trace
            .signals
            .iter()
            .map(|(text, value)| (signal_as_written(text, source), value.clone()))
            .collect(),
    }
}

/// A signal as the contract writes it: a model's score by the one call
/// of that model in the source (`score(fraud, [float(amount_eur), ...])`,
/// where the IR says `score.fraud(list(float(let.amount_eur), ...))`); a
/// window's value as the IR names it, which is how it is written.
fn signal_as_written(text: &str, source: Option<&Written>) -> String {
    let Some(model) = text.strip_prefix("score.").and_then(|rest| rest.split('(').next()) else {
        return text.to_string();
    };
    let Some(source) = source else { return text.to_string() };
    let ast = &source.ast;
    let roots = ast
        .lets
        .iter()
        .filter_map(|l| l.value.as_ref())
        .chain(ast.rules.iter().filter_map(|r| r.when.as_ref()));
    let mut calls = Vec::new();
    let mut stack: Vec<&frontend::ast::Expr> = roots.collect();
    while let Some(e) = stack.pop() {
        if let frontend::ast::ExprKind::Call { callee, args } = &e.kind
            && callee.value == "score"
            && matches!(args.first().map(|a| &a.kind), Some(frontend::ast::ExprKind::Name(n)) if n == model)
        {
            calls.push(e.span);
        }
        stack.extend(e.children());
    }
    match calls[..] {
        [one] => source.snippet(one),
        _ => text.to_string(),
    }
}

/// The values of a condition's own operands, each as written when the
/// source has as many; else as the IR prints them, a let the compiler
/// made as its value (its name was never written).
fn operands_as_written(
    contract: &ir::Contract,
    source: Option<&Written>,
    condition: &Condition,
    written: Option<(&frontend::ast::Expr, &Written)>,
) -> Vec<(String, String)> {
    let made = |id: ir::ExprId| match contract.expr(id).kind {
        ir::ExprKind::Let(l) => {
            let made = source.is_some_and(|s| s.made_by_compiler(&contract.lets[l.index()].name));
            made.then(|| ir::print::expr(contract, contract.lets[l.index()].value))
        }
        _ => None,
    };
    let source: Vec<String> = written
        .map(|(e, s)| operands(e, &s.ast).into_iter().map(|o| s.snippet(o.span)).collect())
        .unwrap_or_default();
    let same = source.len() == condition.operands.len();
    condition
        .operands
        .iter()
        .enumerate()
        .map(|(i, (id, text, value))| {
            let text = if same { source[i].clone() } else { made(*id).unwrap_or_else(|| text.clone()) };
            (text, value.clone())
        })
        .collect()
}

/// The depth of each condition in the IR's `&&`/`||` tree (the trace
/// lists it depth first).
fn depths(contract: &ir::Contract, conditions: &[Condition]) -> Vec<usize> {
    let mut out = Vec::with_capacity(conditions.len());
    let mut open: Vec<usize> = Vec::new();
    for condition in conditions {
        let depth = open.pop().unwrap_or(0);
        out.push(depth);
        if let ir::ExprKind::And { .. } | ir::ExprKind::Or { .. } = contract.expr(condition.expr).kind {
            open.push(depth + 1);
            open.push(depth + 1);
        }
    }
    out
}

fn describe(rule: &Explained, out: &mut String) {
    let at = if rule.line > 0 { format!(" (line {})", rule.line) } else { String::new() };
    let status = match (&rule.error, rule.status) {
        (Some(e), _) => format!("error: {e}"),
        (None, "fired") => "FIRED".into(),
        (None, status) => status.into(),
    };
    let _ = writeln!(out, "  rule {}{at}: {status}", rule.rule);
    for Shown { text, depth, value, operands } in &rule.conditions {
        let pad = "  ".repeat(*depth);
        let label = if *depth == 0 { "when " } else { "" };
        match value {
            Some(value) => {
                let _ = writeln!(out, "    {pad}{label}{text} = {value}");
                for (operand, value) in operands.iter().filter(|(o, _)| o != text) {
                    let _ = writeln!(out, "    {pad}  · {operand} = {value}");
                }
            }
            None => {
                let _ = writeln!(out, "    {pad}{label}{text}: not needed");
            }
        }
    }
    for (name, value) in &rule.lets {
        let _ = writeln!(out, "    let {name} = {value}");
    }
    for (text, value) in &rule.signals {
        let _ = writeln!(out, "    signal {text} = {value}");
    }
}

fn to_json(rule: &Explained) -> Value {
    let conditions: Vec<Value> = rule
        .conditions
        .iter()
        .map(|c| {
            let operands: Vec<Value> =
                c.operands.iter().map(|(t, v)| json!({ "text": t, "value": v })).collect();
            json!({ "text": c.text, "depth": c.depth, "value": c.value, "operands": operands })
        })
        .collect();
    let pairs = |list: &[(String, String)], key: &str| -> Vec<Value> {
        list.iter().map(|(a, b)| json!({ key: a, "value": b })).collect()
    };
    json!({
        "rule": rule.rule,
        "line": rule.line,
        "status": rule.status,
        "error": rule.error,
        "conditions": conditions,
        "lets": pairs(&rule.lets, "name"),
        "signals": pairs(&rule.signals, "text"),
    })
}
