//! Bundle document to IR. Structure only: ids are taken as they are and
//! checked by the verifier afterwards. Types are checked here first (no
//! forward references, bounded depth), because reading a constant walks
//! its type.

use super::model::*;
use crate::contract::*;
use crate::expr::{BinaryOp, Builtin, CmpOp, Expr, ExprKind, LambdaKind, UnaryOp};
use crate::ids::*;
use crate::limits::MAX_TYPE_DEPTH;
use crate::signals::{Aggregate, AggregateKind, Model, ModelOutput, Window};
use crate::types::{FieldDef, TypeKind, TypeTable};
use crate::value::Const;

type Result<T> = std::result::Result<T, String>;

pub(crate) fn contract(doc: ContractDoc) -> Result<Contract> {
    let types = types(&doc.types)?;
    let input = TypeId(doc.input);
    if types.get(input).is_none() {
        return Err(format!("input: type #{} does not exist", doc.input));
    }
    let exprs = doc
        .exprs
        .iter()
        .enumerate()
        .map(|(i, e)| expr(&types, e).map_err(|m| format!("exprs[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    let tables = doc
        .tables
        .into_iter()
        .enumerate()
        .map(|(i, t)| table(&types, t).map_err(|m| format!("tables[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    let rules = doc
        .rules
        .into_iter()
        .enumerate()
        .map(|(i, r)| rule(r).map_err(|m| format!("rules[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    let tests = doc
        .tests
        .into_iter()
        .enumerate()
        .map(|(i, t)| test(t).map_err(|m| format!("tests[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    let windows = doc
        .windows
        .into_iter()
        .enumerate()
        .map(|(i, w)| window(w).map_err(|m| format!("windows[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    let models = doc
        .models
        .into_iter()
        .enumerate()
        .map(|(i, m)| model(m).map_err(|m| format!("models[{i}]: {m}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Contract {
        name: doc.name,
        version: doc.version,
        description: doc.description,
        decision: by_name(&doc.decision, &DecisionMode::ALL, |d| d.name(), "decision")?,
        default: by_name(&doc.default, &Verdict::ALL, |d| d.name(), "default")?,
        on_error: by_name(&doc.on_error, &OnError::ALL, |d| d.name(), "on_error")?,
        channels: doc.channels,
        components: doc.components,
        types,
        input,
        tables,
        effects: doc
            .effects
            .into_iter()
            .map(|e| {
                Ok(Effect {
                    combine: by_name(&e.combine, &Combine::ALL, |c| c.name(), "combine")?,
                    name: e.name,
                    ty: TypeId(e.ty),
                })
            })
            .collect::<Result<_>>()?,
        externs: doc
            .externs
            .into_iter()
            .map(|e| Extern {
                name: e.name,
                params: e.params.into_iter().map(TypeId).collect(),
                ret: TypeId(e.ret),
            })
            .collect(),
        regexes: doc.regexes,
        locals: doc.locals.into_iter().map(TypeId).collect(),
        exprs,
        lets: doc
            .lets
            .into_iter()
            .map(|l| Let { name: l.name, ty: TypeId(l.ty), value: ExprId(l.value) })
            .collect(),
        rules,
        tests,
        windows,
        models,
    })
}

fn window(doc: WindowDoc) -> Result<Window> {
    let aggregates = doc
        .aggregates
        .into_iter()
        .map(|a| {
            Ok(Aggregate {
                kind: by_name(&a.kind, &AggregateKind::ALL, |k| k.name(), "kind")?,
                name: a.name,
                arg: a.arg.map(ExprId),
                ty: TypeId(a.ty),
            })
        })
        .collect::<Result<_>>()?;
    Ok(Window {
        name: doc.name,
        key: ExprId(doc.key),
        time: ExprId(doc.time),
        span: crate::time::parse_duration(&doc.span).map_err(|e| format!("span: {e}"))?,
        grace: crate::time::parse_duration(&doc.grace).map_err(|e| format!("grace: {e}"))?,
        aggregates,
    })
}

fn model(doc: ModelDoc) -> Result<Model> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(doc.onnx.as_bytes())
        .map_err(|e| format!("onnx: not base64: {e}"))?;
    Ok(Model {
        output: by_name(&doc.output, &ModelOutput::ALL, |o| o.name(), "output")?,
        name: doc.name,
        features: doc.features,
        sha256: doc.sha256,
        bytes: bytes.into(),
    })
}

fn by_name<T: Copy>(name: &str, all: &[T], name_of: impl Fn(T) -> &'static str, what: &str) -> Result<T> {
    all.iter().copied().find(|v| name_of(*v) == name).ok_or_else(|| {
        let known: Vec<&str> = all.iter().map(|v| name_of(*v)).collect();
        format!("{what}: `{name}` is not one of {}", known.join(", "))
    })
}

fn types(docs: &[TypeDoc]) -> Result<TypeTable> {
    let mut table = TypeTable::new();
    let mut depth: Vec<usize> = vec![1; table.len()];
    for (i, doc) in docs.iter().enumerate() {
        let earlier = |id: u32| {
            if (id as usize) < i {
                Ok(TypeId(id))
            } else {
                Err(format!("types[{i}]: refers to type #{id}, which does not come before it"))
            }
        };
        let kind = match doc {
            TypeDoc::Bool => TypeKind::Bool,
            TypeDoc::Int => TypeKind::Int,
            TypeDoc::Decimal => TypeKind::Decimal,
            TypeDoc::Float => TypeKind::Float,
            TypeDoc::String => TypeKind::String,
            TypeDoc::Timestamp => TypeKind::Timestamp,
            TypeDoc::Duration => TypeKind::Duration,
            TypeDoc::List(t) => TypeKind::List(earlier(*t)?),
            TypeDoc::Optional(t) => TypeKind::Optional(earlier(*t)?),
            TypeDoc::Record(fields) => TypeKind::Record(
                fields
                    .iter()
                    .map(|f| Ok(FieldDef { name: f.name.clone(), ty: earlier(f.ty)? }))
                    .collect::<Result<_>>()?,
            ),
            TypeDoc::Enum(values) => TypeKind::Enum(values.clone()),
        };
        let own_depth = 1 + children(&kind).map(|t| depth[t.index()]).max().unwrap_or(0);
        if own_depth > MAX_TYPE_DEPTH {
            return Err(format!("types[{i}]: types nest deeper than {MAX_TYPE_DEPTH}"));
        }
        let id = table.intern(kind);
        if id.index() != i {
            return Err(format!("types[{i}]: repeats type #{}", id.0));
        }
        if depth.len() == i {
            depth.push(own_depth);
        }
    }
    if docs.len() < 7 {
        return Err("types: the seven primitive types must come first".into());
    }
    Ok(table)
}

fn children(kind: &TypeKind) -> Box<dyn Iterator<Item = TypeId> + '_> {
    match kind {
        TypeKind::List(t) | TypeKind::Optional(t) => Box::new(std::iter::once(*t)),
        TypeKind::Record(fields) => Box::new(fields.iter().map(|f| f.ty)),
        _ => Box::new(std::iter::empty()),
    }
}

fn constant(types: &TypeTable, ty: u32, json: &serde_json::Value) -> Result<Const> {
    Const::from_json(types, TypeId(ty), json)
}

fn table(types: &TypeTable, doc: TableDoc) -> Result<Table> {
    let kind = match (doc.key, doc.value, doc.set) {
        (Some(key), Some(value), None) => {
            let rows = doc
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| match row.as_array().map(Vec::as_slice) {
                    Some([k, v]) => Ok((
                        constant(types, key, k).map_err(|m| format!("rows[{i}] key: {m}"))?,
                        constant(types, value, v).map_err(|m| format!("rows[{i}] value: {m}"))?,
                    )),
                    _ => Err(format!("rows[{i}]: expected a [key, value] pair")),
                })
                .collect::<Result<_>>()?;
            TableKind::Map { key: TypeId(key), value: TypeId(value), rows }
        }
        (None, None, Some(element)) => {
            let rows = doc
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| constant(types, element, row).map_err(|m| format!("rows[{i}]: {m}")))
                .collect::<Result<_>>()?;
            TableKind::Set { element: TypeId(element), rows }
        }
        _ => return Err("a table has either `key` and `value`, or `set`".into()),
    };
    Ok(Table { name: doc.name, kind })
}

fn expr(types: &TypeTable, doc: &ExprDoc) -> Result<Expr> {
    let args: Vec<ExprId> = doc.args.iter().copied().map(ExprId).collect();
    let index = || doc.index.ok_or_else(|| format!("`{}` needs an `index`", doc.op));
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("`{}` takes {n} arguments, got {}", doc.op, args.len()))
        }
    };
    let op = doc.op.as_str();
    let kind = if let Some(name) = op.strip_prefix("fn.") {
        let func = Builtin::from_name(name).ok_or_else(|| format!("unknown function `{name}`"))?;
        ExprKind::Call { func, args: args.clone() }
    } else if let Some(op) = UnaryOp::ALL.into_iter().find(|u| u.name() == op) {
        arity(1)?;
        ExprKind::Unary { op, arg: args[0] }
    } else if let Some(op) = BinaryOp::ALL.into_iter().find(|b| b.name() == op) {
        arity(2)?;
        ExprKind::Binary { op, lhs: args[0], rhs: args[1] }
    } else if let Some(op) = CmpOp::ALL.into_iter().find(|c| c.name() == op) {
        arity(2)?;
        ExprKind::Compare { op, lhs: args[0], rhs: args[1] }
    } else if let Some(kind) = LambdaKind::ALL.into_iter().find(|l| l.name() == op) {
        arity(2)?;
        ExprKind::Lambda { kind, list: args[0], param: LocalId(index()?), body: args[1] }
    } else {
        match op {
            "const" => {
                arity(0)?;
                let value = doc.value.as_ref().ok_or("`const` needs a `value`")?;
                ExprKind::Const(constant(types, doc.ty, value)?)
            }
            "input" => {
                arity(0)?;
                ExprKind::Input
            }
            "field" => {
                arity(1)?;
                ExprKind::Field { base: args[0], index: index()? }
            }
            "let" => {
                arity(0)?;
                ExprKind::Let(LetId(index()?))
            }
            "rule" => {
                arity(0)?;
                ExprKind::RuleFired(RuleId(index()?))
            }
            "local" => {
                arity(0)?;
                ExprKind::Local(LocalId(index()?))
            }
            "list" => ExprKind::List(args.clone()),
            "and" | "or" => {
                arity(2)?;
                let (lhs, rhs) = (args[0], args[1]);
                if op == "and" { ExprKind::And { lhs, rhs } } else { ExprKind::Or { lhs, rhs } }
            }
            "if" => {
                arity(3)?;
                ExprKind::Cond { cond: args[0], then: args[1], otherwise: args[2] }
            }
            "coalesce" => {
                arity(2)?;
                ExprKind::Coalesce { value: args[0], default: args[1] }
            }
            "has" => {
                arity(1)?;
                ExprKind::Present(args[0])
            }
            "table.get" => {
                arity(1)?;
                ExprKind::TableGet { table: TableId(index()?), key: args[0] }
            }
            "table.has" => {
                arity(1)?;
                ExprKind::TableHas { table: TableId(index()?), key: args[0] }
            }
            "index" => {
                arity(2)?;
                ExprKind::Index { list: args[0], index: args[1] }
            }
            "in" => {
                arity(2)?;
                ExprKind::InList { item: args[0], list: args[1] }
            }
            "matches" => {
                arity(1)?;
                ExprKind::Matches { subject: args[0], regex: RegexId(index()?) }
            }
            "extern" => ExprKind::Extern { func: ExternId(index()?), args: args.clone() },
            "window" => {
                arity(0)?;
                let aggregate =
                    doc.value.as_ref().and_then(|v| v.as_u64()).and_then(|v| u32::try_from(v).ok());
                ExprKind::Window {
                    window: WindowId(index()?),
                    aggregate: aggregate.ok_or("`window` needs its aggregate's position as `value`")?,
                }
            }
            "score" => {
                arity(1)?;
                ExprKind::Score { model: ModelId(index()?), features: args[0] }
            }
            _ => return Err(format!("unknown op `{op}`")),
        }
    };
    Ok(Expr { ty: TypeId(doc.ty), kind })
}

fn template(parts: Vec<PartDoc>) -> Template {
    Template {
        parts: parts
            .into_iter()
            .map(|p| match p {
                PartDoc::Text(text) => TemplatePart::Text(text),
                PartDoc::Expr(id) => TemplatePart::Expr(ExprId(id)),
            })
            .collect(),
    }
}

fn rule(doc: RuleDoc) -> Result<Rule> {
    let verdict = match doc.verdict {
        Some(v) => Some(RuleVerdict {
            verdict: by_name(&v.verdict, &Verdict::ALL, |d| d.name(), "verdict")?,
            message: template(v.message),
        }),
        None => None,
    };
    let finding = match doc.finding {
        Some(f) => Some(Finding {
            severity: Severity::from_name(&f.severity)
                .ok_or_else(|| format!("`{}` is not a severity", f.severity))?,
            code: f.code,
            message: template(f.message),
        }),
        None => None,
    };
    Ok(Rule {
        name: doc.name,
        component: doc.component.map(ComponentId),
        channels: doc.channels.map(|chs| chs.into_iter().map(ChannelId).collect()),
        when: ExprId(doc.when),
        verdict,
        finding,
        effects: doc
            .effects
            .into_iter()
            .map(|a| EffectAssign { effect: EffectId(a.effect), value: ExprId(a.value) })
            .collect(),
    })
}

fn test(doc: TestDoc) -> Result<TestCase> {
    let decision = match doc.expect.decision {
        Some(d) => Some(by_name(&d, &Verdict::ALL, |v| v.name(), "expect.decision")?),
        None => None,
    };
    Ok(TestCase {
        name: doc.name,
        channel: doc.channel,
        component: doc.component,
        now: doc.now.map(|t| crate::time::parse_timestamp(&t)).transpose()?,
        history: doc.history,
        input: doc.input,
        expect: TestExpect {
            decision,
            reasons: doc.expect.reasons,
            findings: doc.expect.findings,
            effects: doc.expect.effects,
            errors: doc.expect.errors,
        },
    })
}
