//! The interpreter: the reference semantics of LANGUAGE.md's Evaluation.
//!
//! It walks the prepared nodes of a [`Program`]. Lets are computed at most
//! once, when first used; a rule's condition is computed once, whether for
//! its own turn or for a `rules.<id>` reference. Errors never panic: they
//! become [`Fault`]s, which `??` may catch (a missing key or index) and
//! which otherwise become the rule's entry in `errors`.
//!
//! This file owns the scheduling: the rules in order under the decision
//! mode, the memos of lets and referenced rules, committing a fired rule's
//! effects and outcomes, and the result. `compile.rs` turns each node into
//! a closure typed by what it computes, once per contract; `walk.rs` is
//! the generic evaluation of the node kinds the closures do not
//! specialise. Every operator's meaning is taken from
//! [`crate::semantics`]; `explain.rs` traces rules for `--explain`, `cover.rs` records what an
//! evaluation covered for `rulec test --coverage`.

use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;

use ir::{DecisionMode, OnError, RuleId, Verdict};

mod compile;
mod cover;
mod explain;
mod walk;

pub use compile::Code;

use crate::program::context::Context;
use crate::program::{NodeId, Program};
use crate::record_signals::Signals;
use crate::result::{EffectResult, ErrorEntry, Evaluation, Outcomes};
use crate::semantics::budget::{Budget, OutOfTime};
use crate::semantics::error::{EvalError, Fault};
use crate::semantics::host::HostFn;
use crate::semantics::{self, ops};
use crate::value::data::RecordRef;
use crate::value::{Schema, Value, render, render_template};

/// One contract as the interpreter runs it: its prepared program, the
/// interpreter's code of the program's nodes ([`Code`], made once at load,
/// owned beside the program by whoever loaded it) and the contract's host
/// functions. Every entry of the interpreter is a method of it.
#[derive(Clone, Copy)]
pub struct Interpreter<'p> {
    pub program: &'p Program,
    pub(crate) code: &'p Code,
    pub hosts: &'p [HostFn],
}

impl std::fmt::Debug for Interpreter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interpreter").field("contract", &self.program.contract.name).finish_non_exhaustive()
    }
}

impl<'p> Interpreter<'p> {
    /// Evaluates a request's input, whose window values are `signals`, and
    /// builds its result; stops when `budget` runs out.
    pub fn evaluate(
        self,
        context: &Context,
        input: RecordRef<'_>,
        signals: Signals<'_>,
        budget: &Budget,
    ) -> Result<Evaluation<'p>, OutOfTime> {
        let mut frame = Frame::new(self, context, input, signals, false, budget);
        frame.run(context)
    }

    /// Evaluates nodes `roots` of `input`, whose window values are
    /// `signals`, in order, in one frame (lets computed once for all), each
    /// to its value or its error: a window's key, time and arguments, a
    /// score's features (`crate::signals`).
    pub fn evaluate_nodes<'a>(
        self,
        context: &Context,
        input: RecordRef<'a>,
        signals: Signals<'a>,
        budget: &'a Budget,
        roots: &[NodeId],
    ) -> Result<Vec<Result<Value<'a>, EvalError>>, OutOfTime>
    where
        'p: 'a,
    {
        let mut values = Vec::with_capacity(roots.len());
        self.evaluate_nodes_into(context, input, signals, budget, roots, &mut values)?;
        Ok(values)
    }

    /// [`Interpreter::evaluate_nodes`], the values appended to `values`.
    /// Nodes that only read a field of the input are read without setting
    /// up an evaluation.
    pub fn evaluate_nodes_into<'a>(
        self,
        context: &Context,
        input: RecordRef<'a>,
        signals: Signals<'a>,
        budget: &'a Budget,
        roots: &[NodeId],
        values: &mut Vec<Result<Value<'a>, EvalError>>,
    ) -> Result<(), OutOfTime>
    where
        'p: 'a,
    {
        let program = self.program;
        let input_field = |root: &NodeId| match program.nodes[*root as usize] {
            crate::program::Node::Field { base, offset, read }
                if matches!(program.nodes[base as usize], crate::program::Node::InputRecord) =>
            {
                Some((offset as usize, read))
            }
            _ => None,
        };
        if roots.iter().all(|root| input_field(root).is_some()) {
            let read = roots.iter().filter_map(input_field);
            values.extend(read.map(|(offset, read)| Ok(read.read(&program.layouts, input, offset))));
            return Ok(());
        }
        let mut frame = Frame::new(self, context, input, signals, false, budget);
        for &root in roots {
            match frame.eval(root) {
                Ok(value) => values.push(Ok(value)),
                Err(fault) if matches!(fault.error(), EvalError::OutOfTime) => {
                    return Err(budget.out_of_time());
                }
                Err(fault) => values.push(Err(fault.into_error())),
            }
        }
        Ok(())
    }
}

/// A let or rule condition's state during one evaluation.
#[derive(Clone, Debug)]
enum Memo<T> {
    Todo,
    Busy,
    Done(T),
    Failed(Fault),
}

impl<T> Memo<T> {
    /// Replaces the memo; only a memo that holds something (`Done`,
    /// `Failed`) runs the drop glue, so the usual steps (`Todo` to `Busy`
    /// to `Done`) cost a store each.
    #[inline(always)]
    fn set(&mut self, new: Memo<T>) {
        let old = std::mem::replace(self, new);
        if matches!(old, Memo::Todo | Memo::Busy) {
            std::mem::forget(old);
        }
    }
}

/// A computed rule: whether it fired, and its rendered messages and effect
/// values (a range of `Scratch::rule_effects`) until they are committed.
#[derive(Clone, Debug, Default)]
struct RuleDone {
    fired: bool,
    message: Option<String>,
    finding: Option<String>,
    effects: (u32, u32),
}

/// What the rules produced so far, in rule order.
#[derive(Default)]
struct Tally<'p> {
    outcomes: Outcomes<'p>,
    /// An error under `on_error: deny`.
    failed_closed: bool,
    /// The verdict of the rule that decided, under first-match.
    decided: Option<Verdict>,
}

/// Per-evaluation working memory, reused across evaluations on a thread so
/// an evaluation allocates nothing but its result.
#[derive(Default)]
struct Scratch<'a> {
    lets: Vec<Memo<Value<'a>>>,
    rules: Vec<Memo<RuleDone>>,
    /// The effect values of computed rules (`RuleDone::effects` ranges).
    rule_effects: Vec<(usize, Value<'a>)>,
    locals: Vec<Value<'a>>,
    effects: Vec<Option<Value<'a>>>,
    pending: Vec<(usize, Value<'a>)>,
}

impl<'a> Scratch<'a> {
    /// Takes this thread's scratch (or a fresh one when it is in use, by a
    /// host function evaluating another contract) sized for `c`, with
    /// `rule_memos` rule memos.
    fn take(c: &ir::Contract, rule_memos: usize) -> Box<Scratch<'a>> {
        let mut scratch: Box<Scratch<'a>> = SCRATCH.with(Cell::take).unwrap_or_default();
        scratch.lets.resize_with(c.lets.len(), || Memo::Todo);
        scratch.rules.resize_with(rule_memos, || Memo::Todo);
        scratch.locals.resize(c.locals.len(), Value::Absent);
        scratch.effects.resize(c.effects.len(), None);
        scratch
    }

    /// Empties the scratch and gives its memory back to the thread.
    fn recycle(mut self: Box<Self>) {
        self.lets.clear();
        self.rules.clear();
        self.rule_effects.clear();
        self.locals.clear();
        self.effects.clear();
        self.pending.clear();
        // SAFETY: every vector is empty, so no value borrowing for `'a`
        // remains: only the allocations are kept, and `Scratch<'a>` and
        // `Scratch<'static>` have the same layout.
        let empty = unsafe { std::mem::transmute::<Box<Scratch<'a>>, Box<Scratch<'static>>>(self) };
        SCRATCH.with(|cell| cell.set(Some(empty)));
    }
}

thread_local! {
    /// The thread's idle scratch: taken by an evaluation (a nested one, by
    /// a host function, finds none and makes its own) and given back after.
    /// Boxed, so taking and giving back move one pointer.
    static SCRATCH: Cell<Option<Box<Scratch<'static>>>> = const { Cell::new(None) };
}

/// One evaluation: `'p` is the program's lifetime (names in the result),
/// `'a` the shorter one of the values (the input's).
struct Frame<'p, 'a> {
    p: &'p Program,
    /// The interpreter's code of the program's nodes.
    code: &'p Code,
    schema: Schema<'p>,
    hosts: &'p [HostFn],
    input: RecordRef<'a>,
    /// The record's window values.
    signals: Signals<'a>,
    now: Option<i64>,
    /// Given back to the thread when the frame drops.
    scratch: ManuallyDrop<Box<Scratch<'a>>>,
    /// The result's errors, one per failing let or rule.
    errors: Vec<ErrorEntry<'p>>,
    /// Below this stack address, nested evaluation grows the stack
    /// first (`ir::stack::floor`).
    stack_floor: usize,
    /// Keep every rule's outcome, each in the memo at the rule's index
    /// (for `--explain`); otherwise only the rules some expression refers
    /// to have memos, at their `RulePlan::memo`.
    memoise_all: bool,
    /// Work left before the budget is asked for more (`crate::semantics::budget`).
    fuel: i64,
    budget: &'a Budget,
    /// The fault typed code left for its boundary (`compile.rs`).
    fault: Option<Fault>,
    /// Says that the program outlives the values, so the compiled code's
    /// closures (`compile.rs`), generic over both lifetimes, may rely on it.
    _outlives: PhantomData<&'a &'p ()>,
}

impl Drop for Frame<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and nothing uses the scratch after it.
        unsafe { ManuallyDrop::take(&mut self.scratch) }.recycle();
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    fn new(
        interpreter: Interpreter<'p>,
        context: &Context,
        input: RecordRef<'a>,
        signals: Signals<'a>,
        memoise_all: bool,
        budget: &'a Budget,
    ) -> Self {
        let Interpreter { program: p, code, hosts } = interpreter;
        let c = &p.contract;
        Frame {
            p,
            code,
            schema: p.schema(),
            hosts,
            input,
            signals,
            now: context.now,
            scratch: ManuallyDrop::new(Scratch::take(
                c,
                if memoise_all { c.rules.len() } else { p.referenced_rules },
            )),
            errors: Vec::new(),
            stack_floor: ir::stack::floor(),
            memoise_all,
            fuel: crate::semantics::budget::FUEL_STEP,
            budget,
            fault: None,
            _outlives: PhantomData,
        }
    }

    /// Spends `units` of fuel on work that may repeat (a loop's element,
    /// string work) and stops the evaluation when the budget is spent.
    #[inline(always)]
    fn tick(&mut self, units: i64) -> Result<(), Fault> {
        self.fuel -= units;
        if self.fuel < 0 { self.refuel() } else { Ok(()) }
    }

    /// Spends fuel without checking it: the next [`Frame::tick`] does.
    #[inline(always)]
    fn charge(&mut self, units: i64) {
        self.fuel -= units;
    }

    #[cold]
    #[inline(never)]
    fn refuel(&mut self) -> Result<(), Fault> {
        match self.budget.refuel() {
            Ok(fuel) => {
                self.fuel = fuel;
                Ok(())
            }
            Err(_) => Err(EvalError::OutOfTime.into()),
        }
    }

    /// Runs the rules under the contract's decision mode; stops at the
    /// first rule after the budget ran out.
    fn run(&mut self, context: &Context) -> Result<Evaluation<'p>, OutOfTime> {
        let c: &'p ir::Contract = &self.p.contract;
        let mut tally = Tally::default();
        for (i, (rule, plan)) in c.rules.iter().zip(&self.p.rules).enumerate() {
            if self.fuel < 0 && self.refuel().is_err() || self.budget.is_exhausted() {
                return Err(self.budget.out_of_time());
            }
            if !plan.applies(context) {
                continue;
            }
            // `i` fits: the verifier bounds a contract's rules by `RuleId`.
            let id = RuleId(i as u32);
            let outcome = if self.memoise_all || plan.referenced() {
                self.rule(id).and_then(|fired| {
                    if fired { self.commit(id, &mut tally).map(|()| true) } else { Ok(false) }
                })
            } else {
                self.turn(id, &mut tally)
            };
            match outcome {
                Ok(true) if c.decision == DecisionMode::FirstMatch && rule.verdict.is_some() => {
                    tally.decided = rule.verdict.as_ref().map(|v| v.verdict);
                    break;
                }
                Ok(_) => {}
                Err(()) if c.decision == DecisionMode::FirstMatch && c.on_error == OnError::Deny => break,
                Err(()) => {}
            }
        }
        if self.budget.is_exhausted() {
            return Err(self.budget.out_of_time());
        }
        tally.failed_closed = c.on_error == OnError::Deny && !self.errors.is_empty();
        Ok(self.result(tally))
    }

    /// Whether a rule fired: its condition holds and its messages and
    /// effect values compute. Computed once, for its own turn or for a
    /// `rules.<id>` reference; a rule that fails counts as not fired and
    /// its error is listed (once).
    fn rule(&mut self, id: RuleId) -> Result<bool, ()> {
        let memo = self.memo(id);
        match &self.scratch.rules[memo] {
            Memo::Done(done) => return Ok(done.fired),
            Memo::Failed(_) => return Err(()),
            Memo::Busy => return Ok(false),
            Memo::Todo => {}
        }
        self.scratch.rules[memo].set(Memo::Busy);
        let computed = self.compute_rule(id);
        let failed = computed.is_err();
        let memo_now = match computed {
            Ok(done) => Memo::Done(done),
            Err(fault) => {
                self.record_error(id, fault.error());
                Memo::Failed(fault)
            }
        };
        self.scratch.rules[memo].set(memo_now);
        if failed { Err(()) } else { Ok(matches!(&self.scratch.rules[memo], Memo::Done(d) if d.fired)) }
    }

    /// Where a memoised rule's memo is (`Frame::memoise_all`).
    #[inline(always)]
    fn memo(&self, id: RuleId) -> usize {
        match self.p.rules[id.index()].memo {
            Some(memo) if !self.memoise_all => memo as usize,
            _ => id.index(),
        }
    }

    fn compute_rule(&mut self, id: RuleId) -> Result<RuleDone, Fault> {
        let rule: &'p ir::Rule = &self.p.contract.rules[id.index()];
        if !self.eval_bool(rule.when.0)? {
            return Ok(RuleDone::default());
        }
        self.fired(rule)
    }

    /// A rule whose condition holds: its messages and effect values.
    #[inline(never)]
    fn fired(&mut self, rule: &'p ir::Rule) -> Result<RuleDone, Fault> {
        let message = match &rule.verdict {
            Some(v) => Some(self.template(&v.message)?),
            None => None,
        };
        let finding = match &rule.finding {
            Some(f) => Some(self.template(&f.message)?),
            None => None,
        };
        // The rule's places are taken before its values are computed: a
        // value may refer to another rule (`rules.x`), whose own effect
        // values must land after this rule's range, not inside it.
        let start = self.scratch.rule_effects.len();
        for assign in &rule.effects {
            self.scratch.rule_effects.push((assign.effect.index(), Value::Absent));
        }
        for (k, assign) in rule.effects.iter().enumerate() {
            let value = self.eval(assign.value.0)?;
            self.scratch.rule_effects[start + k].1 = value;
        }
        let end = start + rule.effects.len();
        Ok(RuleDone { fired: true, message, finding, effects: (start as u32, end as u32) })
    }

    /// The turn of a rule no expression refers to: computed and committed
    /// at once, without a trip through its memo.
    fn turn(&mut self, id: RuleId, tally: &mut Tally<'p>) -> Result<bool, ()> {
        let rule: &'p ir::Rule = &self.p.contract.rules[id.index()];
        let done = match self.eval_bool(rule.when.0) {
            Ok(false) => return Ok(false),
            Ok(true) => self.fired(rule),
            Err(fault) => Err(fault),
        };
        match done {
            Ok(done) => self.commit_done(id, done, tally).map(|()| true),
            Err(error) => {
                self.record_error(id, error.error());
                Err(())
            }
        }
    }

    /// Lists an error once, under the let that hit it or else the rule.
    fn record_error(&mut self, rule: RuleId, error: &EvalError) {
        let (name, message): (&'p str, String) = match error {
            EvalError::Let { id, error } => (&self.p.contract.lets[*id as usize].name, error.to_string()),
            other => (&self.p.contract.rules[rule.index()].name, other.to_string()),
        };
        if !self.errors.iter().any(|e| e.rule == name) {
            self.errors.push(ErrorEntry { rule: name, message });
        }
    }

    /// Adds a fired rule's outcomes to the result: its effects first, all
    /// or nothing (a sum may overflow), then its reason and finding.
    fn commit(&mut self, id: RuleId, tally: &mut Tally<'p>) -> Result<(), ()> {
        let memo = self.memo(id);
        let Memo::Done(done) = &mut self.scratch.rules[memo] else { return Ok(()) };
        let done =
            RuleDone { fired: true, message: done.message.take(), finding: done.finding.take(), ..*done };
        self.commit_done(id, done, tally)
    }

    /// Commits a fired rule's computed outcomes.
    fn commit_done(&mut self, id: RuleId, done: RuleDone, tally: &mut Tally<'p>) -> Result<(), ()> {
        let rule: &'p ir::Rule = &self.p.contract.rules[id.index()];
        let RuleDone { message, finding, effects: (start, end), .. } = done;
        if start < end {
            self.commit_effects(id, start as usize..end as usize)?;
        }
        tally.outcomes.add(rule, message, finding);
        Ok(())
    }

    /// Combines a fired rule's effect values (`range` of
    /// `Scratch::rule_effects`) into the effects, all or none.
    fn commit_effects(&mut self, id: RuleId, range: std::ops::Range<usize>) -> Result<(), ()> {
        let mut pending = std::mem::take(&mut self.scratch.pending);
        let mut combined = Ok(());
        for i in range {
            let (effect, value) = self.scratch.rule_effects[i].clone();
            let next = match &self.scratch.effects[effect] {
                None => Ok(value),
                Some(old) => semantics::combine(
                    self.p.contract.effects[effect].combine,
                    self.p.effect_adds[effect],
                    old,
                    &value,
                ),
            };
            match next {
                Ok(v) => pending.push((effect, v)),
                Err(e) => {
                    combined = Err(e);
                    break;
                }
            }
        }
        let outcome = match combined {
            Ok(()) => {
                for (effect, value) in pending.drain(..) {
                    self.scratch.effects[effect] = Some(value);
                }
                Ok(())
            }
            Err(error) => {
                self.record_error(id, &error);
                Err(())
            }
        };
        pending.clear();
        self.scratch.pending = pending;
        outcome
    }

    /// Builds the result from the tally and the combined effects.
    fn result(&mut self, tally: Tally<'p>) -> Evaluation<'p> {
        let c: &'p ir::Contract = &self.p.contract;
        let mut effects = Vec::new();
        for (i, value) in self.scratch.effects.iter().enumerate() {
            if let Some(v) = value {
                let effect = &c.effects[i];
                effects.push(EffectResult {
                    name: &effect.name,
                    value: semantics::owned(&self.schema, effect.ty, v),
                });
            }
        }
        let errors = std::mem::take(&mut self.errors);
        tally.outcomes.evaluation(c, tally.decided, tally.failed_closed, effects, errors)
    }

    fn template(&mut self, template: &ir::Template) -> Result<String, Fault> {
        render_template(template, |id, out| {
            let value = self.eval(id.0)?;
            render(&self.schema, self.p.contract.expr(id).ty, &value, out);
            Ok(())
        })
    }

    fn let_value(&mut self, id: u32) -> Result<Value<'a>, Fault> {
        match &self.scratch.lets[id as usize] {
            Memo::Done(v) => Ok(v.clone()),
            Memo::Failed(e) => Err(e.clone()),
            Memo::Busy => Err(EvalError::Argument("lets depend on each other in a cycle".into()).into()),
            Memo::Todo => self.compute_let(id),
        }
    }

    /// A let's first use: computes and memoises it.
    #[inline(never)]
    fn compute_let(&mut self, id: u32) -> Result<Value<'a>, Fault> {
        let value = self.start_let(id);
        let result = self.eval(value);
        self.memoise_let(id, result)
    }

    /// Marks a let as being computed and returns the node of its value.
    #[inline(always)]
    fn start_let(&mut self, id: u32) -> NodeId {
        self.scratch.lets[id as usize].set(Memo::Busy);
        self.p.contract.lets[id as usize].value.0
    }

    /// Keeps a let's computed value or fault and returns it.
    fn memoise_let(&mut self, id: u32, result: Result<Value<'a>, Fault>) -> Result<Value<'a>, Fault> {
        let result = result.map_err(|fault| self.let_fault(id, fault));
        self.scratch.lets[id as usize].set(match &result {
            Ok(v) => Memo::Done(v.clone()),
            Err(e) => Memo::Failed(e.clone()),
        });
        result
    }

    /// The fault of a let that failed: it names the let that hit it, the
    /// innermost one.
    fn let_fault(&self, id: u32, fault: Fault) -> Fault {
        match fault.error() {
            EvalError::Let { .. } => fault,
            _ => Fault::from(EvalError::Let { id, error: Box::new(fault.into_error()) }),
        }
    }

    fn now(&mut self) -> i64 {
        *self.now.get_or_insert_with(ops::clock_now)
    }
}
