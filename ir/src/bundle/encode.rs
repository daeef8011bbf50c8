//! IR to bundle document.

use super::model::*;
use crate::contract::{Contract, TableKind, Template, TemplatePart, TestCase};
use crate::expr::{Expr, ExprKind};
use crate::signals::{Model, Window};
use crate::types::TypeKind;

pub(crate) fn contract(c: &Contract) -> ContractDoc {
    ContractDoc {
        name: c.name.clone(),
        version: c.version.clone(),
        description: c.description.clone(),
        decision: c.decision.name().into(),
        default: c.default.name().into(),
        on_error: c.on_error.name().into(),
        channels: c.channels.clone(),
        components: c.components.clone(),
        types: c.types.iter().map(|(_, kind)| type_doc(kind)).collect(),
        input: c.input.0,
        tables: c.tables.iter().map(|t| table(c, t)).collect(),
        effects: c
            .effects
            .iter()
            .map(|e| EffectDoc { name: e.name.clone(), ty: e.ty.0, combine: e.combine.name().into() })
            .collect(),
        externs: c
            .externs
            .iter()
            .map(|e| ExternDoc {
                name: e.name.clone(),
                params: e.params.iter().map(|p| p.0).collect(),
                ret: e.ret.0,
            })
            .collect(),
        regexes: c.regexes.clone(),
        locals: c.locals.iter().map(|t| t.0).collect(),
        exprs: c.exprs.iter().map(|e| expr(c, e)).collect(),
        lets: c.lets.iter().map(|l| LetDoc { name: l.name.clone(), ty: l.ty.0, value: l.value.0 }).collect(),
        rules: c.rules.iter().map(rule).collect(),
        tests: c.tests.iter().map(test).collect(),
        windows: c.windows.iter().map(window).collect(),
        models: c.models.iter().map(model).collect(),
    }
}

fn window(w: &Window) -> WindowDoc {
    WindowDoc {
        name: w.name.clone(),
        key: w.key.0,
        time: w.time.0,
        span: crate::time::format_duration(w.span),
        grace: crate::time::format_duration(w.grace),
        aggregates: w
            .aggregates
            .iter()
            .map(|a| AggregateDoc {
                name: a.name.clone(),
                kind: a.kind.name().into(),
                arg: a.arg.map(|id| id.0),
                ty: a.ty.0,
            })
            .collect(),
    }
}

fn model(m: &Model) -> ModelDoc {
    use base64::Engine as _;
    ModelDoc {
        name: m.name.clone(),
        features: m.features,
        output: m.output.name().into(),
        sha256: m.sha256.clone(),
        onnx: base64::engine::general_purpose::STANDARD.encode(&m.bytes),
    }
}

fn type_doc(kind: &TypeKind) -> TypeDoc {
    match kind {
        TypeKind::Bool => TypeDoc::Bool,
        TypeKind::Int => TypeDoc::Int,
        TypeKind::Decimal => TypeDoc::Decimal,
        TypeKind::Float => TypeDoc::Float,
        TypeKind::String => TypeDoc::String,
        TypeKind::Timestamp => TypeDoc::Timestamp,
        TypeKind::Duration => TypeDoc::Duration,
        TypeKind::List(t) => TypeDoc::List(t.0),
        TypeKind::Optional(t) => TypeDoc::Optional(t.0),
        TypeKind::Record(fields) => {
            TypeDoc::Record(fields.iter().map(|f| FieldDoc { name: f.name.clone(), ty: f.ty.0 }).collect())
        }
        TypeKind::Enum(values) => TypeDoc::Enum(values.clone()),
    }
}

fn table(c: &Contract, t: &crate::contract::Table) -> TableDoc {
    match &t.kind {
        TableKind::Map { key, value, rows } => TableDoc {
            name: t.name.clone(),
            key: Some(key.0),
            value: Some(value.0),
            set: None,
            rows: rows
                .iter()
                .map(|(k, v)| {
                    serde_json::Value::Array(vec![k.to_json(&c.types, *key), v.to_json(&c.types, *value)])
                })
                .collect(),
        },
        TableKind::Set { element, rows } => TableDoc {
            name: t.name.clone(),
            key: None,
            value: None,
            set: Some(element.0),
            rows: rows.iter().map(|k| k.to_json(&c.types, *element)).collect(),
        },
    }
}

fn expr(c: &Contract, e: &Expr) -> ExprDoc {
    let mut doc = ExprDoc {
        op: crate::print::op_name(&e.kind).to_string(),
        ty: e.ty.0,
        args: Vec::new(),
        index: None,
        value: None,
    };
    e.kind.for_each_child(|child| doc.args.push(child.0));
    match &e.kind {
        ExprKind::Const(value) => doc.value = Some(value.to_json(&c.types, e.ty)),
        ExprKind::Field { index, .. } => doc.index = Some(*index),
        ExprKind::Let(id) => doc.index = Some(id.0),
        ExprKind::RuleFired(id) => doc.index = Some(id.0),
        ExprKind::Local(id) => doc.index = Some(id.0),
        ExprKind::TableGet { table, .. } | ExprKind::TableHas { table, .. } => doc.index = Some(table.0),
        ExprKind::Matches { regex, .. } => doc.index = Some(regex.0),
        ExprKind::Lambda { param, .. } => doc.index = Some(param.0),
        ExprKind::Extern { func, .. } => doc.index = Some(func.0),
        ExprKind::Window { window, aggregate } => {
            doc.index = Some(window.0);
            doc.value = Some((*aggregate).into());
        }
        ExprKind::Score { model, .. } => doc.index = Some(model.0),
        ExprKind::Call { func, .. } => doc.op = format!("fn.{}", func.name()),
        _ => {}
    }
    doc
}

fn template(t: &Template) -> Vec<PartDoc> {
    t.parts
        .iter()
        .map(|part| match part {
            TemplatePart::Text(text) => PartDoc::Text(text.clone()),
            TemplatePart::Expr(id) => PartDoc::Expr(id.0),
        })
        .collect()
}

fn rule(r: &crate::contract::Rule) -> RuleDoc {
    RuleDoc {
        name: r.name.clone(),
        component: r.component.map(|id| id.0),
        channels: r.channels.as_ref().map(|chs| chs.iter().map(|ch| ch.0).collect()),
        when: r.when.0,
        verdict: r
            .verdict
            .as_ref()
            .map(|v| VerdictDoc { verdict: v.verdict.name().into(), message: template(&v.message) }),
        finding: r.finding.as_ref().map(|f| FindingDoc {
            code: f.code.clone(),
            severity: f.severity.name().into(),
            message: template(&f.message),
        }),
        effects: r.effects.iter().map(|a| EffectAssignDoc { effect: a.effect.0, value: a.value.0 }).collect(),
    }
}

fn test(t: &TestCase) -> TestDoc {
    TestDoc {
        name: t.name.clone(),
        channel: t.channel.clone(),
        component: t.component.clone(),
        now: t.now.map(crate::time::format_timestamp),
        history: t.history.clone(),
        input: t.input.clone(),
        expect: ExpectDoc {
            decision: t.expect.decision.map(|d| d.name().into()),
            reasons: t.expect.reasons.clone(),
            findings: t.expect.findings.clone(),
            effects: t.expect.effects.clone(),
            errors: t.expect.errors.clone(),
        },
    }
}
