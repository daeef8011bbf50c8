//! What an evaluation reads beyond its own record (SIGNALS.md): each
//! window's aggregates over the record's window, and each model score.
//!
//! One component computes them and every engine reads them, so the
//! engines cannot drift: [`observe`] computes a record's window inputs
//! (key, time, aggregate arguments) with the interpreter, the reference
//! semantics, enters the record into its windows in [`WindowState`]
//! (`crate::window` keeps the per-key records) and returns the record's
//! [`Signals`]; [`score`] then computes the features of every `score`
//! site ([`ScorePlan`]) for a chunk of records and runs each model once
//! over the chunk's rows. The rules read `windows.<w>.<a>` and the scores
//! from those.
//!
//! A window whose key, time or an argument fails to compute, or whose
//! record is late, reads as that error, in whatever rule or let reads it;
//! a sum that overflowed reads as the overflow. The record enters every
//! window it is not late for, whatever its decision. A score whose
//! features fail to compute, are not `features` long, or that the model
//! fails on or scores as a non-finite number reads as that error. A
//! `score` whose features read a lambda's parameter cannot be computed
//! ahead: the interpreter scores it where it stands, one row at a time,
//! with the same [`feature_row`] and [`score_value`] (a model scores a
//! row the same whatever else is in its batch: `crate::model`).

mod chunk;

use ir::{TypeId, TypeTable};

use crate::budget::{Budget, OutOfTime};
use crate::context::Context;
use crate::data::{RecordRef, Slot};
use crate::error::EvalError;
use crate::host::HostFn;
use crate::program::{NodeId, Program};
use crate::value::Value;
use crate::window::{
    Aggregated, Arg, ArgKind, Entering, Key, Observation, SharedWindowStore, Ticket, WindowLimits,
    WindowShape,
};

pub use chunk::ChunkSignals;
pub(crate) use chunk::WindowInputs;

/// How a program computes one window: its roots, and where its aggregates
/// sit among all of the contract's ([`Signals`]).
#[derive(Clone, Debug)]
pub struct WindowPlan {
    pub name: String,
    /// Per aggregate: its argument's kind (`ArgKind::None` for `count()`)
    /// and the aggregate's type.
    pub aggregates: Vec<(ArgKind, TypeId)>,
    /// The index of its first aggregate in a record's [`Signals`].
    pub first: usize,
    pub shape: WindowShape,
    /// The nodes a record's window inputs are computed from, in the order
    /// `window_inputs` reads them: the key, the time, then each argument.
    pub roots: Vec<NodeId>,
}

impl WindowPlan {
    /// The plans of a contract's windows, in declaration order.
    pub fn of(contract: &ir::Contract) -> Vec<WindowPlan> {
        let mut first = 0;
        contract
            .windows
            .iter()
            .map(|w| {
                let aggregates: Vec<(ArgKind, TypeId)> = w
                    .aggregates
                    .iter()
                    .map(|a| {
                        (a.arg.map_or(ArgKind::None, |arg| arg_kind(contract, contract.expr(arg).ty)), a.ty)
                    })
                    .collect();
                let shape = WindowShape {
                    span: w.span,
                    grace: w.grace,
                    aggregates: w
                        .aggregates
                        .iter()
                        .zip(&aggregates)
                        .map(|(a, (kind, _))| (a.kind, *kind))
                        .collect(),
                };
                let roots = ir::verify::window_roots(w).map(|id| id.0).collect();
                let plan = WindowPlan { name: w.name.clone(), aggregates, first, shape, roots };
                first += w.aggregates.len();
                plan
            })
            .collect()
    }
}

/// What a contract's windows compute, as text: each window's key, time,
/// span, grace and aggregates, and every let they read, directly or not.
/// Two revisions of a contract with the same signature may share window
/// state (`Contract::adopt_windows`).
pub fn window_signature(contract: &ir::Contract) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut lets = std::collections::BTreeSet::new();
    let mut stack: Vec<ir::ExprId> = contract.windows.iter().flat_map(ir::verify::window_roots).collect();
    while let Some(id) = stack.pop() {
        let kind = &contract.expr(id).kind;
        if let ir::ExprKind::Let(l) = kind
            && lets.insert(*l)
        {
            stack.push(contract.lets[l.index()].value);
        }
        kind.for_each_child(|child| stack.push(child));
    }
    for w in &contract.windows {
        let _ = write!(
            out,
            "window {} {} {} {} {}",
            w.name,
            ir::print::expr(contract, w.key),
            ir::print::expr(contract, w.time),
            w.span,
            w.grace
        );
        for a in &w.aggregates {
            let arg = a.arg.map(|id| ir::print::expr(contract, id)).unwrap_or_default();
            let _ = write!(out, "; {} {}({arg})", a.name, a.kind.name());
        }
        out.push('\n');
    }
    for l in lets {
        let spec = &contract.lets[l.index()];
        let _ = writeln!(out, "let {} = {}", spec.name, ir::print::expr(contract, spec.value));
    }
    out
}

/// The kind of an aggregate argument of type `ty` (the verifier allows
/// only these).
fn arg_kind(contract: &ir::Contract, ty: TypeId) -> ArgKind {
    match ty {
        TypeTable::INT => ArgKind::Int,
        TypeTable::DECIMAL => ArgKind::Decimal,
        TypeTable::FLOAT => ArgKind::Float,
        TypeTable::TIMESTAMP => ArgKind::Timestamp,
        TypeTable::DURATION => ArgKind::Duration,
        TypeTable::BOOL => ArgKind::Bool,
        _ if contract.types.is_stringy(ty) => ArgKind::Str,
        _ => ArgKind::None,
    }
}

/// A contract's window state: one store per window, shared by every
/// evaluation of the contract (in a server, per served revision).
#[derive(Debug)]
pub struct WindowState {
    stores: Vec<SharedWindowStore>,
}

impl WindowState {
    /// Empty state for `program`'s windows, each within `limits`.
    pub fn new(program: &Program, limits: WindowLimits) -> Result<WindowState, String> {
        let stores = program
            .windows
            .iter()
            .map(|w| {
                SharedWindowStore::new(w.shape.clone(), limits)
                    .map_err(|e| format!("window `{}`: {e}", w.name))
            })
            .collect::<Result<_, _>>()?;
        Ok(WindowState { stores })
    }

    /// Keys held, over all windows.
    pub fn keys(&self) -> usize {
        self.stores.iter().map(SharedWindowStore::keys).sum()
    }

    /// Keys dropped because a window held its most keys or bytes, over all
    /// windows.
    pub fn evicted(&self) -> u64 {
        self.stores.iter().map(SharedWindowStore::evicted).sum()
    }

    /// Records whose window read as a key's bound, over all windows.
    pub fn full(&self) -> u64 {
        self.stores.iter().map(SharedWindowStore::full).sum()
    }

    /// The bytes the keys' buffers hold, as the bound counts them, over
    /// all windows.
    pub fn records_bytes(&self) -> usize {
        self.stores.iter().map(SharedWindowStore::records_bytes).sum()
    }

    /// An estimate of the memory the state holds.
    pub fn heap_bytes(&self) -> usize {
        self.stores.iter().map(SharedWindowStore::heap_bytes).sum()
    }

    /// Withdraws the records of `entered` (a request that was not
    /// answered with its result), as if they had not come.
    pub fn withdraw(&self, entered: &Entered) {
        for &(window, ticket) in &entered.tickets {
            if let Some(store) = self.stores.get(window) {
                store.withdraw(ticket);
            }
        }
    }
}

/// Where a request's record entered its windows, so that it can be
/// withdrawn if the request is not answered with its result.
#[derive(Clone, Debug, Default)]
pub struct Entered {
    /// Per window the record entered: the window's place and the record's
    /// ticket.
    tickets: Vec<(usize, Ticket)>,
}

impl Entered {
    /// Whether the record entered no window.
    pub fn is_empty(&self) -> bool {
        self.tickets.is_empty()
    }
}

/// One record's signals as the rules read them ([`RecordSignals`] of one
/// request, a row of [`ChunkSignals`]): per aggregate of every window, in
/// declaration order, its value or the error reading it gives; per score
/// site, once computed ahead, its score.
#[derive(Clone, Copy, Debug)]
pub struct Signals<'s> {
    values: &'s [Result<Aggregate, EvalError>],
    /// Per score site ([`Program::scores`]); empty when none was computed
    /// ahead.
    scores: &'s [Result<f64, EvalError>],
}

/// The signals of one request, owned, and where its record entered.
#[derive(Clone, Debug, Default)]
pub struct RecordSignals {
    values: Vec<Result<Aggregate, EvalError>>,
    scores: Vec<Result<f64, EvalError>>,
    pub entered: Entered,
}

/// An aggregate's value, by its type.
#[derive(Clone, Copy, Debug)]
enum Aggregate {
    Int(i64),
    Timestamp(i64),
    Duration(i64),
    Decimal(rust_decimal::Decimal),
    Float(f64),
}

/// The signals of a contract without windows or scores: reading any is
/// an error.
pub const NO_SIGNALS: Signals<'static> = Signals { values: &[], scores: &[] };

impl RecordSignals {
    pub fn view(&self) -> Signals<'_> {
        Signals { values: &self.values, scores: &self.scores }
    }
}

impl Signals<'_> {
    /// Aggregate `index` (a window's `first` plus the aggregate's position).
    pub fn aggregate(&self, index: usize) -> Result<Value<'static>, EvalError> {
        match self.values.get(index) {
            Some(Ok(aggregate)) => Ok(match *aggregate {
                Aggregate::Int(i) => Value::Int(i),
                Aggregate::Timestamp(t) => Value::Timestamp(t),
                Aggregate::Duration(d) => Value::Duration(d),
                Aggregate::Decimal(d) => Value::Decimal(d),
                Aggregate::Float(f) => Value::Float(f),
            }),
            Some(Err(error)) => Err(error.clone()),
            None => Err(EvalError::Argument("a window was not computed for this record".into())),
        }
    }

    /// The signals as native code reads them ([`crate::native::NativeCtx`]),
    /// appended to `out`: every aggregate, then every score, one slot
    /// each; absent where reading it is an error, which native code
    /// leaves to the interpreter.
    pub fn slots_into(&self, out: &mut Vec<Slot>) {
        out.extend(self.values.iter().map(|value| match value {
            Ok(Aggregate::Int(i)) => Slot::int(*i),
            Ok(Aggregate::Timestamp(t)) => Slot::timestamp(*t),
            Ok(Aggregate::Duration(d)) => Slot::duration(*d),
            Ok(Aggregate::Decimal(d)) => Slot::decimal(*d),
            Ok(Aggregate::Float(f)) => Slot::float(*f),
            Err(_) => Slot::ABSENT,
        }));
        out.extend(self.scores.iter().map(|score| score.as_ref().map_or(Slot::ABSENT, |f| Slot::float(*f))));
    }

    /// [`Signals::slots_into`] a new vector.
    pub fn slots(&self) -> Vec<Slot> {
        let mut slots = Vec::with_capacity(self.values.len() + self.scores.len());
        self.slots_into(&mut slots);
        slots
    }

    /// Score site `site`'s score, or `None` when it was not computed
    /// ahead (the interpreter then scores it in place).
    pub fn score(&self, site: usize) -> Option<Result<f64, EvalError>> {
        self.scores.get(site).cloned()
    }
}

/// A request's signals: its window values, the record entered into
/// `state` ([`observe`]; `None` for a contract without windows), then its
/// scores ([`score`]). When `budget` runs out on the way, the record is
/// withdrawn from the windows it entered.
pub fn of_record(
    program: &Program,
    hosts: &[HostFn],
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
    state: Option<&WindowState>,
) -> Result<RecordSignals, OutOfTime> {
    let mut signals = match state {
        Some(state) => observe(program, hosts, context, input, budget, state)?,
        None => RecordSignals::default(),
    };
    if program.scores.is_empty() {
        return Ok(signals);
    }
    let scored = budget.check().map(|()| score(program, hosts, context, &[(input, budget, signals.view())]));
    match scored.and_then(|scores| budget.check().map(|()| scores)) {
        Ok(scores) => {
            signals.scores = scores;
            Ok(signals)
        }
        Err(out) => {
            if let Some(state) = state {
                state.withdraw(&signals.entered);
            }
            Err(out)
        }
    }
}

/// Computes `input`'s window inputs with the interpreter, enters the
/// record into the windows of `state` it is not late for, and returns
/// its signals, without scores ([`score`]). Stops when `budget` runs out,
/// the record withdrawn from the windows it entered.
pub fn observe(
    program: &Program,
    hosts: &[HostFn],
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
    state: &WindowState,
) -> Result<RecordSignals, OutOfTime> {
    let mut signals = RecordSignals::default();
    for (window, (plan, store)) in program.windows.iter().zip(&state.stores).enumerate() {
        let inputs = match crate::interp::evaluate_nodes(
            program,
            hosts,
            context,
            input,
            NO_SIGNALS,
            budget,
            &plan.roots,
        ) {
            Ok(inputs) => inputs,
            Err(out) => {
                state.withdraw(&signals.entered);
                return Err(out);
            }
        };
        let ticket = enter(plan, &mut &*store, &inputs, None, &mut Scratch::default(), &mut signals.values);
        signals.entered.tickets.extend(ticket.map(|ticket| (window, ticket)));
    }
    Ok(signals)
}

/// Scratch space for entering records, reused from one to the next.
#[derive(Default)]
struct Scratch<'v> {
    args: Vec<Arg<'v>>,
    aggregated: Vec<Aggregated>,
}

/// Enters a record whose window inputs are `inputs` (the values of
/// `plan.roots`) into `store` (`hash`: its key's hash in `store`, when
/// known) and appends its aggregates, or the error reading each gives, to
/// `values`; the record's ticket when it entered.
fn enter<'v>(
    plan: &WindowPlan,
    store: &mut impl Entry,
    inputs: &'v [Result<Value<'_>, EvalError>],
    hash: Option<u64>,
    scratch: &mut Scratch<'v>,
    values: &mut Vec<Result<Aggregate, EvalError>>,
) -> Option<Ticket> {
    let (key, time) = match window_inputs(plan, inputs, &mut scratch.args) {
        Ok(inputs) => inputs,
        Err(error) => {
            values.extend(plan.aggregates.iter().map(|_| Err(error.clone())));
            return None;
        }
    };
    let hash = hash.unwrap_or_else(|| store.hash(key));
    let aggregated = &mut scratch.aggregated;
    let every = |values: &mut Vec<_>, error: EvalError| {
        values.extend(plan.aggregates.iter().map(|_| Err(error.clone())))
    };
    let full = |bound: crate::window::Bound| EvalError::WindowFull {
        window: plan.name.clone(),
        bound: bound.to_string(),
    };
    match store.observe_hashed(hash, key, time, &scratch.args, aggregated) {
        Observation::Entered(ticket) => {
            values.extend(aggregated.drain(..).zip(&plan.aggregates).map(|(a, (_, ty))| value(a, *ty)));
            return Some(ticket);
        }
        Observation::Incomplete(ticket, bound) => {
            every(values, full(bound));
            return Some(ticket);
        }
        Observation::Full(bound) => every(values, full(bound)),
        Observation::Late => every(values, EvalError::Late(plan.name.clone())),
        Observation::Refused => values.extend(aggregated.drain(..).map(|a| value(a, TypeTable::INT))),
    }
    None
}

/// Where a record enters a window: the shared store, locked for it alone
/// (a request), or the store locked for a chunk ([`Entering`]).
trait Entry {
    fn hash(&self, key: Key<'_>) -> u64;
    fn observe_hashed(
        &mut self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation;
}

impl Entry for &SharedWindowStore {
    fn hash(&self, key: Key<'_>) -> u64 {
        SharedWindowStore::hash(self, key)
    }

    fn observe_hashed(
        &mut self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        SharedWindowStore::observe_hashed(self, hash, key, time, args, out)
    }
}

impl Entry for Entering<'_> {
    fn hash(&self, key: Key<'_>) -> u64 {
        Entering::hash(self, key)
    }

    fn observe_hashed(
        &mut self,
        hash: u64,
        key: Key<'_>,
        time: i64,
        args: &[Arg<'_>],
        out: &mut Vec<Aggregated>,
    ) -> Observation {
        Entering::observe_hashed(self, hash, key, time, args, out)
    }
}

/// A window's key and time from the values of its roots (the key, the
/// time, then each argument), its arguments into `args`, or the first
/// error among them.
fn window_inputs<'v>(
    plan: &WindowPlan,
    inputs: &'v [Result<Value<'_>, EvalError>],
    args: &mut Vec<Arg<'v>>,
) -> Result<(Key<'v>, i64), EvalError> {
    let wrong = |what: &str| EvalError::Argument(format!("window `{}`: {what}", plan.name));
    let root = |i: usize| root(plan, inputs, i);
    let key = window_key(plan, inputs)?;
    let Value::Timestamp(time) = root(1)? else { return Err(wrong("the time is not a timestamp")) };
    args.clear();
    let mut at = 2;
    for (kind, _) in &plan.aggregates {
        if *kind == ArgKind::None {
            args.push(Arg::None);
            continue;
        }
        args.push(match root(at)? {
            Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => Arg::Int(*i),
            Value::Decimal(d) => Arg::Decimal(*d),
            Value::Float(f) => Arg::Float(*f),
            Value::Bool(b) => Arg::Bool(*b),
            v @ (Value::Str(_) | Value::Text(_)) => Arg::Str(v.as_str()),
            _ => return Err(wrong("an argument is not a scalar")),
        });
        at += 1;
    }
    Ok((key, *time))
}

/// A window's key from the values of its roots, or the error computing it.
fn window_key<'v>(
    plan: &WindowPlan,
    inputs: &'v [Result<Value<'_>, EvalError>],
) -> Result<Key<'v>, EvalError> {
    match root(plan, inputs, 0)? {
        Value::Int(i) => Ok(Key::Int(*i)),
        v @ (Value::Str(_) | Value::Text(_)) => Ok(Key::Str(v.as_str())),
        _ => Err(EvalError::Argument(format!("window `{}`: the key is not a string or an int", plan.name))),
    }
}

/// Root `i`'s value among a window's `inputs`, or the error computing it.
fn root<'v, 'a>(
    plan: &WindowPlan,
    inputs: &'v [Result<Value<'a>, EvalError>],
    i: usize,
) -> Result<&'v Value<'a>, EvalError> {
    match inputs.get(i) {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => Err(e.clone()),
        None => Err(EvalError::Argument(format!("window `{}`: an input was not computed", plan.name))),
    }
}

/// An aggregate's value as the rules read it, by its type.
fn value(aggregated: Aggregated, ty: TypeId) -> Result<Aggregate, EvalError> {
    match aggregated {
        Aggregated::Int(i) => Ok(match ty {
            TypeTable::TIMESTAMP => Aggregate::Timestamp(i),
            TypeTable::DURATION => Aggregate::Duration(i),
            _ => Aggregate::Int(i),
        }),
        Aggregated::Decimal(d) => Ok(Aggregate::Decimal(d)),
        Aggregated::Float(f) => Ok(Aggregate::Float(f)),
        Aggregated::Failed(error) => Err(error),
    }
}

/// A `score(model, features)` whose features read no lambda parameter, so
/// they can be computed for a record before its rules run.
#[derive(Clone, Debug)]
pub struct ScorePlan {
    /// The `score` expression.
    pub node: NodeId,
    pub model: u32,
    pub features: NodeId,
}

impl ScorePlan {
    /// The contract's score sites computed ahead, in expression order.
    pub fn of(contract: &ir::Contract) -> Vec<ScorePlan> {
        (0..contract.exprs.len())
            .filter_map(|i| {
                let id = ir::ExprId::from_index(i);
                match contract.expr(id).kind {
                    ir::ExprKind::Score { model, features }
                        if !reads_free_local(contract, features, &mut Vec::new()) =>
                    {
                        Some(ScorePlan { node: id.0, model: model.0, features: features.0 })
                    }
                    _ => None,
                }
            })
            .collect()
    }
}

/// Whether expression `id` reads a lambda parameter that it does not bind
/// itself (`bound`: the parameters of the lambdas around it within the
/// expression). Lets read no parameters, so they are not followed.
fn reads_free_local(contract: &ir::Contract, id: ir::ExprId, bound: &mut Vec<ir::LocalId>) -> bool {
    match &contract.expr(id).kind {
        ir::ExprKind::Local(local) => !bound.contains(local),
        ir::ExprKind::Lambda { list, param, body, .. } => {
            if reads_free_local(contract, *list, bound) {
                return true;
            }
            bound.push(*param);
            let free = reads_free_local(contract, *body, bound);
            bound.pop();
            free
        }
        kind => {
            let mut free = false;
            kind.for_each_child(|child| free = free || reads_free_local(contract, child, bound));
            free
        }
    }
}

/// Computes every score site of `program` for `rows` (each a record, its
/// budget and its window values), and runs each model once over the rows
/// of all of them: per row, per site, its score (row after row).
pub fn score(
    program: &Program,
    hosts: &[HostFn],
    context: &Context,
    rows: &[(RecordRef<'_>, &Budget, Signals<'_>)],
) -> Vec<Result<f64, EvalError>> {
    let sites = program.scores.len();
    if sites == 0 {
        return Vec::new();
    }
    let roots: Vec<NodeId> = program.scores.iter().map(|site| site.features).collect();
    // Per row, per site: its features or why there are none.
    let mut features: Vec<Result<Vec<f64>, EvalError>> = Vec::with_capacity(rows.len() * sites);
    for (input, budget, signals) in rows {
        match crate::interp::evaluate_nodes(program, hosts, context, *input, *signals, budget, &roots) {
            Ok(values) => features.extend(
                program
                    .scores
                    .iter()
                    .zip(values)
                    .map(|(site, value)| value.and_then(|v| feature_row(program, site.model, &v))),
            ),
            Err(_) => features.extend(program.scores.iter().map(|_| Err(EvalError::OutOfTime))),
        }
    }
    let mut scores = vec![Err(EvalError::OutOfTime); features.len()];
    for (at, site) in program.scores.iter().enumerate() {
        let of_site = || features.iter().skip(at).step_by(sites);
        let given: Vec<f64> = of_site().filter_map(|f| f.as_ref().ok()).flatten().copied().collect();
        let count = of_site().filter(|f| f.is_ok()).count();
        let mut scored = run_model(program, site.model, &given, count).map(Vec::into_iter);
        for (row, features) in of_site().enumerate() {
            scores[row * sites + at] = match (features, &mut scored) {
                (Err(error), _) => Err(error.clone()),
                (Ok(_), Ok(scored)) => score_value(program, site.model, scored.next()),
                (Ok(_), Err(error)) => Err(error.clone()),
            };
        }
    }
    scores
}

/// A `score`'s features as one row of the model's input: a `list<float>`
/// exactly the declared `features` long.
pub fn feature_row(program: &Program, model: u32, features: &Value<'_>) -> Result<Vec<f64>, EvalError> {
    let declared = &program.contract.models[model as usize];
    let len = features.list_len();
    if len != declared.features as usize {
        return Err(EvalError::Argument(format!(
            "model `{}` takes {} features, the list has {len}",
            declared.name, declared.features
        )));
    }
    (0..len)
        .map(|i| match features.list_get(&program.layouts, TypeTable::FLOAT, i) {
            Value::Float(f) => Ok(f),
            _ => Err(EvalError::Argument(format!("model `{}`: a feature is not a float", declared.name))),
        })
        .collect()
}

/// Runs model `model` of `program` over `rows` rows given row-major in
/// `features`: one score per row, or the model's error.
pub fn run_model(
    program: &Program,
    model: u32,
    features: &[f64],
    rows: usize,
) -> Result<Vec<f64>, EvalError> {
    let name = &program.contract.models[model as usize].name;
    let Some(loaded) = program.models.get(model as usize) else {
        return Err(EvalError::Argument(format!("model `{name}` is not loaded by this engine")));
    };
    if rows == 0 {
        return Ok(Vec::new());
    }
    match loaded.score(features, rows) {
        Ok(scores) if scores.len() == rows => Ok(scores),
        Ok(scores) => {
            Err(EvalError::Argument(format!("model `{name}` gave {} scores for {rows} rows", scores.len())))
        }
        Err(message) => Err(EvalError::Argument(format!("model `{name}`: {message}"))),
    }
}

/// A row's score as `score(...)` reads it: a finite float.
pub fn score_value(program: &Program, model: u32, score: Option<f64>) -> Result<f64, EvalError> {
    let name = &program.contract.models[model as usize].name;
    match score {
        Some(f) if f.is_finite() => Ok(f),
        Some(_) => {
            Err(EvalError::Argument(format!("model `{name}` gave a score that is not a finite number")))
        }
        None => Err(EvalError::Argument(format!("model `{name}` gave no score for a row"))),
    }
}
