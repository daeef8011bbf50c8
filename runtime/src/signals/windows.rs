//! The windows of a record's signals: its window inputs (key, time,
//! arguments) computed by the interpreter, the record entered into the
//! contract's [`WindowState`], and each aggregate's value or the error
//! reading it gives; [`window_signature`], what a reload compares to keep
//! state.

use ir::{TypeId, TypeTable};

use crate::interp::Interpreter;
use crate::program::Program;
use crate::program::context::Context;
use crate::semantics::budget::{Budget, OutOfTime};
use crate::semantics::error::EvalError;
use crate::value::Value;
use crate::value::data::RecordRef;
use crate::window::{
    Aggregated, Arg, ArgKind, Entering, Key, Observation, SharedWindowStore, Ticket, WindowLimits,
};

use super::{Aggregate, Entered, NO_SIGNALS, RecordSignals, WindowPlan};

/// What a contract's windows compute, as text: each window's key, time,
/// span, grace and aggregates, and every let they read, directly or not.
/// Two revisions of a contract with the same signature may share window
/// state (`Contract::adopt_windows`).
pub fn window_signature(contract: &ir::Contract) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut lets = std::collections::BTreeSet::new();
    let mut stack: Vec<ir::ExprId> = contract.windows.iter().flat_map(ir::signals::Window::roots).collect();
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

/// A contract's window state: one store per window, shared by every
/// evaluation of the contract (in a server, per served revision).
#[derive(Debug)]
pub struct WindowState {
    pub(super) stores: Vec<SharedWindowStore>,
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

/// Computes `input`'s window inputs with the interpreter, enters the
/// record into the windows of `state` it is not late for, and returns
/// its signals, without scores ([`score`]). Stops when `budget` runs out,
/// the record withdrawn from the windows it entered.
pub fn observe(
    interpreter: Interpreter<'_>,
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
    state: &WindowState,
) -> Result<RecordSignals, OutOfTime> {
    let mut signals = RecordSignals::default();
    let windows = &interpreter.program.windows;
    for (window, (plan, store)) in windows.iter().zip(&state.stores).enumerate() {
        let inputs = match interpreter.evaluate_nodes(context, input, NO_SIGNALS, budget, &plan.roots) {
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
pub(super) struct Scratch<'v> {
    args: Vec<Arg<'v>>,
    aggregated: Vec<Aggregated>,
}

/// Enters a record whose window inputs are `inputs` (the values of
/// `plan.roots`) into `store` (`hash`: its key's hash in `store`, when
/// known) and appends its aggregates, or the error reading each gives, to
/// `values`; the record's ticket when it entered.
pub(super) fn enter<'v>(
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
pub(super) trait Entry {
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
pub(super) fn window_key<'v>(
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
