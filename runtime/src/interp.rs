//! The interpreter: the reference semantics of LANGUAGE.md's Evaluation.
//!
//! It walks the prepared nodes of a [`Program`]. Lets are computed at most
//! once, when first used; a rule's condition is computed once, whether for
//! its own turn or for a `rules.<id>` reference. Errors never panic: they
//! become [`Fault`]s, which `??` may catch (a missing key or index) and
//! which otherwise become the rule's entry in `errors`.

use std::cell::Cell;
use std::cmp::Ordering;
use std::mem::ManuallyDrop;
use std::rc::Rc;

use ir::{
    BinaryOp, Builtin, ChannelId, Combine, ComponentId, DecisionMode, LambdaKind, OnError, RuleId, TypeId,
    TypeTable, UnaryOp, Verdict,
};
use rust_decimal::Decimal;

mod typed;

use crate::budget::{Budget, Limit, OutOfTime, string_cost};
use crate::data::RecordRef;
use crate::error::{EvalError, Fault};
use crate::host::{HostFn, call_host, to_host};
use crate::ops;
use crate::program::{CmpKind, Node, NodeId, Program, ReadKind};
use crate::result::{EffectResult, ErrorEntry, Evaluation, Outcomes, Owned, RuleTrace};
use crate::value::{Schema, Value, read, render, render_template};

/// The request-level settings of one evaluation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    pub channel: Option<ChannelId>,
    pub component: Option<ComponentId>,
    /// What `now()` returns; the clock when absent.
    pub now: Option<i64>,
    /// How long the evaluation may run (`crate::budget`); no limit when
    /// absent. Both engines of one evaluation share one [`Budget`].
    pub limit: Option<Limit>,
}

/// Evaluates a request's input and builds its result; stops when
/// `budget` runs out.
pub fn evaluate<'p>(
    program: &'p Program,
    hosts: &'p [HostFn],
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
) -> Result<Evaluation<'p>, OutOfTime> {
    let mut frame = Frame::new(program, hosts, context, input, false, budget);
    frame.run(context)
}

/// Evaluates and also traces each rule for `--explain`.
pub fn explain<'p>(
    program: &'p Program,
    hosts: &'p [HostFn],
    context: &Context,
    input: RecordRef<'_>,
    budget: &Budget,
) -> Result<(Evaluation<'p>, Vec<RuleTrace>), OutOfTime> {
    let mut frame = Frame::new(program, hosts, context, input, true, budget);
    let evaluation = frame.run(context)?;
    let traces =
        (0..program.contract.rules.len()).map(|i| frame.trace(context, RuleId::from_index(i))).collect();
    Ok((evaluation, traces))
}

/// A let or rule condition's state during one evaluation.
#[derive(Clone, Debug)]
enum Memo<T> {
    Todo,
    Busy,
    Done(T),
    Failed(Fault),
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
    /// host function evaluating another contract) sized for `c`, with a
    /// memo for every rule when `rule_memos`.
    fn take(c: &ir::Contract, rule_memos: bool) -> Box<Scratch<'a>> {
        let mut scratch: Box<Scratch<'a>> = SCRATCH.with(Cell::take).unwrap_or_default();
        scratch.lets.resize_with(c.lets.len(), || Memo::Todo);
        if rule_memos {
            scratch.rules.resize_with(c.rules.len(), || Memo::Todo);
        }
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
    schema: Schema<'p>,
    hosts: &'p [HostFn],
    input: RecordRef<'a>,
    now: Option<i64>,
    /// Given back to the thread when the frame drops.
    scratch: ManuallyDrop<Box<Scratch<'a>>>,
    /// The result's errors, one per failing let or rule.
    errors: Vec<ErrorEntry<'p>>,
    /// Below this stack address, nested evaluation grows the stack
    /// first (`ir::stack::floor`).
    stack_floor: usize,
    /// Keep every rule's outcome in its memo (for `--explain`), not only
    /// those of the rules some expression refers to.
    memoise_all: bool,
    /// Work left before the budget is asked for more (`crate::budget`).
    fuel: i64,
    budget: &'a Budget,
}

impl Drop for Frame<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once, and nothing uses the scratch after it.
        unsafe { ManuallyDrop::take(&mut self.scratch) }.recycle();
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    fn new(
        p: &'p Program,
        hosts: &'p [HostFn],
        context: &Context,
        input: RecordRef<'a>,
        memoise_all: bool,
        budget: &'a Budget,
    ) -> Self {
        let c = &p.contract;
        Frame {
            p,
            schema: p.schema(),
            hosts,
            input,
            now: context.now,
            scratch: ManuallyDrop::new(Scratch::take(c, memoise_all || p.any_rule_referenced)),
            errors: Vec::new(),
            stack_floor: ir::stack::floor(),
            memoise_all,
            fuel: crate::budget::FUEL_STEP,
            budget,
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

    fn applies(&self, context: &Context, rule: &ir::Rule) -> bool {
        let channel_ok = match (&rule.channels, context.channel) {
            (None, _) => true,
            (Some(channels), Some(channel)) => channels.contains(&channel),
            (Some(_), None) => false,
        };
        channel_ok && context.component.is_none_or(|component| rule.component == Some(component))
    }

    /// Runs the rules under the contract's decision mode; stops at the
    /// first rule after the budget ran out.
    fn run(&mut self, context: &Context) -> Result<Evaluation<'p>, OutOfTime> {
        let c: &'p ir::Contract = &self.p.contract;
        let mut tally = Tally::default();
        for (i, rule) in c.rules.iter().enumerate() {
            if self.fuel < 0 && self.refuel().is_err() || self.budget.is_exhausted() {
                return Err(self.budget.out_of_time());
            }
            if !self.applies(context, rule) {
                continue;
            }
            let id = RuleId::from_index(i);
            let outcome = if self.memoise_all || self.p.referenced_rules[i] {
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
        match &self.scratch.rules[id.index()] {
            Memo::Done(done) => return Ok(done.fired),
            Memo::Failed(_) => return Err(()),
            Memo::Busy => return Ok(false),
            Memo::Todo => {}
        }
        self.scratch.rules[id.index()] = Memo::Busy;
        let computed = self.compute_rule(id);
        let failed = computed.is_err();
        self.scratch.rules[id.index()] = match computed {
            Ok(done) => Memo::Done(done),
            Err(fault) => {
                self.record_error(id, fault.error());
                Memo::Failed(fault)
            }
        };
        if failed { Err(()) } else { Ok(matches!(&self.scratch.rules[id.index()], Memo::Done(d) if d.fired)) }
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
        let Memo::Done(done) = &mut self.scratch.rules[id.index()] else { return Ok(()) };
        let done =
            RuleDone { fired: true, message: done.message.take(), finding: done.finding.take(), ..*done };
        self.commit_done(id, done, tally)
    }

    /// Commits a fired rule's computed outcomes.
    fn commit_done(&mut self, id: RuleId, done: RuleDone, tally: &mut Tally<'p>) -> Result<(), ()> {
        let rule: &'p ir::Rule = &self.p.contract.rules[id.index()];
        let RuleDone { message, finding, effects: (start, end), .. } = done;
        let mut pending = std::mem::take(&mut self.scratch.pending);
        let mut combined = Ok(());
        for i in start as usize..end as usize {
            let (effect, value) = self.scratch.rule_effects[i].clone();
            let next = match &self.scratch.effects[effect] {
                None => Ok(value),
                Some(old) => combine_values(self.p.contract.effects[effect].combine, old, &value),
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
        outcome?;
        tally.outcomes.add(rule, message, finding);
        Ok(())
    }

    /// Builds the result from the tally and the combined effects.
    fn result(&mut self, tally: Tally<'p>) -> Evaluation<'p> {
        let c: &'p ir::Contract = &self.p.contract;
        let mut effects = Vec::new();
        for (i, value) in self.scratch.effects.iter().enumerate() {
            if let Some(v) = value {
                let effect = &c.effects[i];
                effects.push(EffectResult { name: &effect.name, value: self.owned(effect.ty, v) });
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
        let index = id as usize;
        self.scratch.lets[index] = Memo::Busy;
        let l = &self.p.contract.lets[index];
        let result = self.eval(l.value.0).map_err(|fault| match fault.error() {
            EvalError::Let { .. } => fault,
            _ => Fault::from(EvalError::Let { id, error: Box::new(fault.into_error()) }),
        });
        self.scratch.lets[index] = match &result {
            Ok(v) => Memo::Done(v.clone()),
            Err(e) => Memo::Failed(e.clone()),
        };
        result
    }

    fn now(&mut self) -> i64 {
        *self.now.get_or_insert_with(ops::clock_now)
    }

    /// Evaluates a node to a value. The commonest leaves, an input string
    /// and a computed let, are read here without a trip through the
    /// evaluator.
    fn eval(&mut self, id: NodeId) -> Result<Value<'a>, Fault> {
        match &self.p.nodes[id as usize] {
            Node::Input { offset, read: ReadKind::Str } => Ok(Value::Str(self.input.str(*offset as usize))),
            Node::Let(l) if let Memo::Done(v) = &self.scratch.lets[*l as usize] => Ok(v.clone()),
            _ => self.nested(|frame| frame.eval_node(id)),
        }
    }

    /// Runs one level of nested evaluation, growing the stack first when
    /// little is left, so no expression can overflow it.
    #[inline(always)]
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        if ir::stack::here() < self.stack_floor { self.grown(f) } else { f(self) }
    }

    /// Runs `f` on a fresh stack segment, with that segment's floor.
    #[cold]
    #[inline(never)]
    fn grown<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        ir::stack::guard(|| {
            let outer = std::mem::replace(&mut self.stack_floor, ir::stack::floor());
            let result = f(self);
            self.stack_floor = outer;
            result
        })
    }

    fn eval_node(&mut self, id: NodeId) -> Result<Value<'a>, Fault> {
        let p: &'p Program = self.p;
        match &p.nodes[id as usize] {
            Node::Const { slot, ty } => {
                // SAFETY: constant slots point into the program's store,
                // which lives as long as the program.
                let record = unsafe { RecordRef::new(std::slice::from_ref(slot)) };
                Ok(read(&p.layouts, record, 0, *ty))
            }
            Node::Input { offset, read } => Ok(read.read(&p.layouts, self.input, *offset as usize)),
            Node::InputRecord => Ok(Value::Record(self.input)),
            Node::Field { base, offset, read } => match self.eval(*base)? {
                Value::Record(record) => Ok(read.read(&p.layouts, record, *offset as usize)),
                _ => Ok(Value::Absent),
            },
            Node::Let(l) => self.let_value(*l),
            Node::Rule(r) => Ok(Value::Bool(self.rule(RuleId(*r)).unwrap_or(false))),
            Node::Local(l) => Ok(self.scratch.locals[*l as usize].clone()),
            Node::List { items } => self.list(items),
            Node::Unary(op, arg) => {
                let value = self.eval(*arg)?;
                unary(*op, value).map_err(Fault::from)
            }
            Node::Binary(op, lhs, rhs) => {
                let (l, r) = (self.eval(*lhs)?, self.eval(*rhs)?);
                if *op == BinaryOp::Concat {
                    self.charge(work(&l) + work(&r));
                }
                binary(*op, l, r).map_err(Fault::from)
            }
            Node::Compare { .. } | Node::And(..) | Node::Or(..) => self.bool_node(id).map(Value::Bool),
            Node::Cond(cond, then, otherwise) => {
                let branch = if truthy(&self.eval(*cond)?) { *then } else { *otherwise };
                self.eval(branch)
            }
            Node::Coalesce(value, default) => match self.eval(*value) {
                Ok(Value::Absent) => self.eval(*default),
                Err(fault) if fault.is_missing() => self.eval(*default),
                other => other,
            },
            Node::Present(value) => Ok(Value::Bool(!self.eval(*value)?.is_absent())),
            Node::TableGet { table, key: key_node, int_key: true } => {
                let key = self.eval_int(*key_node)?;
                let table = &p.tables[*table as usize];
                match (table.row_int(key), table.value) {
                    (Some(row), Some(ty)) => Ok(table.value(&p.layouts, row, ty)),
                    _ => Err(self.missing_key(*key_node, &Value::Int(key), &table.name)),
                }
            }
            Node::TableGet { table, key: key_node, int_key: false } => {
                let key = self.eval(*key_node)?;
                let table = &p.tables[*table as usize];
                match (table.row(&key), table.value) {
                    (Some(row), Some(ty)) => Ok(table.value(&p.layouts, row, ty)),
                    _ => Err(self.missing_key(*key_node, &key, &table.name)),
                }
            }
            Node::TableHas { table, key } => {
                let key = self.eval(*key)?;
                Ok(Value::Bool(p.tables[*table as usize].row(&key).is_some()))
            }
            Node::Index { list, index, element } => {
                let list = self.eval(*list)?;
                let Value::Int(i) = self.eval(*index)? else { return Ok(Value::Absent) };
                match usize::try_from(i) {
                    Ok(at) if at < list.list_len() => Ok(list.list_get(&p.layouts, *element, at)),
                    _ => Err(index_out_of_range(i, list.list_len())),
                }
            }
            Node::InList { item, list, kind, element } => {
                let (item, list) = (self.eval(*item)?, self.eval(*list)?);
                self.tick(list.list_len() as i64)?;
                let found = (0..list.list_len()).any(|i| {
                    self.compare(*kind, &item, &list.list_get(&p.layouts, *element, i)) == Ordering::Equal
                });
                Ok(Value::Bool(found))
            }
            Node::Call { func, args, .. } => self.call(id, *func, args),
            Node::Matches { subject, regex } => {
                let subject = self.eval(*subject)?;
                self.tick(crate::budget::regex_cost(subject.as_str().len()))?;
                Ok(Value::Bool(p.regexes[*regex as usize].is_match(subject.as_str())))
            }
            Node::Lambda { kind, list, param, body } => self.lambda(id, *kind, *list, *param, *body),
            Node::Extern { func, args } => self.host(*func, args),
        }
    }

    /// A value of type `ty` for an error message: strings quoted.
    #[cold]
    fn show(&self, ty: TypeId, value: &Value<'_>) -> String {
        let mut text = String::new();
        render(&self.schema, ty, value, &mut text);
        match value {
            Value::Str(_) | Value::Text(_) => format!("{text:?}"),
            _ => text,
        }
    }

    #[inline(never)]
    fn list(&mut self, items: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            values.push(self.eval(*item)?);
        }
        Ok(Value::Items(Rc::from(values)))
    }

    /// The fault of a table lookup whose key is not in the table.
    #[cold]
    fn missing_key(&self, key_node: NodeId, key: &Value<'_>, table: &str) -> Fault {
        // The key may be a request's string: show a short prefix of it.
        let shown = match key {
            Value::Str(_) | Value::Text(_) => ir::quote::quote(key.as_str()),
            _ => self.show(self.p.contract.exprs[key_node as usize].ty, key),
        };
        Fault::missing(format!("key {shown} is not in table `{table}`"))
    }

    fn compare(&self, kind: CmpKind, l: &Value<'_>, r: &Value<'_>) -> Ordering {
        match kind {
            CmpKind::Structural(ty) => {
                if structural_eq(&self.schema, ty, l, r) {
                    Ordering::Equal
                } else {
                    Ordering::Less
                }
            }
            _ => order(l, r),
        }
    }

    #[inline(never)]
    fn lambda(
        &mut self,
        id: NodeId,
        kind: LambdaKind,
        list: NodeId,
        param: u32,
        body: NodeId,
    ) -> Result<Value<'a>, Fault> {
        let list = self.eval(list)?;
        let element = self.p.contract.locals[param as usize];
        let ty = self.p.contract.exprs[id as usize].ty;
        let body_ty = self.p.contract.exprs[body as usize].ty;
        let mut count = 0i64;
        let mut sum = zero_of(ty);
        for i in 0..list.list_len() {
            self.tick(1)?;
            self.scratch.locals[param as usize] = list.list_get(&self.p.layouts, element, i);
            match kind {
                LambdaKind::Any if self.eval_bool(body)? => return Ok(Value::Bool(true)),
                LambdaKind::All if !self.eval_bool(body)? => return Ok(Value::Bool(false)),
                LambdaKind::Count if self.eval_bool(body)? => count += 1,
                LambdaKind::Sum => sum = self.add_to_sum(ty, body_ty, sum, body)?,
                _ => {}
            }
        }
        Ok(match kind {
            LambdaKind::Any => Value::Bool(false),
            LambdaKind::All => Value::Bool(true),
            LambdaKind::Count => Value::Int(count),
            LambdaKind::Sum => sum,
        })
    }

    /// One step of `sum`: the body's value for the current element added
    /// to the sum so far, on the typed paths when the body is a plain
    /// decimal or int.
    fn add_to_sum(
        &mut self,
        ty: TypeId,
        body_ty: TypeId,
        sum: Value<'a>,
        body: NodeId,
    ) -> Result<Value<'a>, Fault> {
        Ok(match (&sum, ty == body_ty) {
            (Value::Decimal(s), true) if ty == TypeTable::DECIMAL => {
                Value::Decimal(ops::dec_add(*s, self.eval_dec(body)?)?)
            }
            (Value::Int(s), true) if ty == TypeTable::INT => {
                Value::Int(ops::int_add(*s, self.eval_int(body)?)?)
            }
            _ => binary(sum_op(ty), sum, self.eval(body)?)?,
        })
    }

    /// A call of a host function: the arguments in order, then the call.
    #[inline(never)]
    fn host(&mut self, func: u32, args: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            let value = self.eval(*arg)?;
            values.push(to_host(&self.schema, self.p.contract.exprs[*arg as usize].ty, &value));
        }
        Ok(call_host(&self.hosts[func as usize], &values)?)
    }

    /// An effect value that outlives the request.
    fn owned(&self, ty: TypeId, value: &Value<'_>) -> Owned {
        owned(&self.schema, ty, value)
    }

    #[inline(never)]
    fn call(&mut self, id: NodeId, func: Builtin, args: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values: [Value<'a>; 2] = [Value::Absent, Value::Absent];
        let mut extra = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let value = self.eval(*arg)?;
            if i < 2 { values[i] = value } else { extra.push(value) }
        }
        let [a, b] = values;
        self.charge(work(&a) + work(&b));
        let result = match func {
            Builtin::Min | Builtin::Max => {
                let mut best = a;
                for candidate in std::iter::once(b).chain(extra) {
                    let better = match func {
                        Builtin::Min => order(&candidate, &best) == Ordering::Less,
                        _ => order(&candidate, &best) == Ordering::Greater,
                    };
                    if better {
                        best = candidate;
                    }
                }
                Ok(best)
            }
            Builtin::Now => Ok(Value::Timestamp(self.now())),
            Builtin::ToString => {
                let mut text = String::new();
                render(&self.schema, self.p.contract.exprs[args[0] as usize].ty, &a, &mut text);
                Ok(Value::Text(Rc::from(text)))
            }
            Builtin::Dot | Builtin::Cosine | Builtin::L2 => {
                let (x, y) = (self.floats(&a), self.floats(&b));
                let f = match func {
                    Builtin::Dot => ops::dot(&x, &y),
                    Builtin::Cosine => ops::cosine(&x, &y),
                    _ => ops::l2(&x, &y),
                };
                f.map(Value::Float)
            }
            _ => builtin(func, a, b, self.p.contract.exprs[id as usize].ty),
        };
        result.map_err(Fault::from)
    }

    fn floats(&self, list: &Value<'_>) -> Vec<f64> {
        (0..list.list_len())
            .map(|i| match list.list_get(&self.p.layouts, TypeTable::FLOAT, i) {
                Value::Float(f) => f,
                _ => 0.0,
            })
            .collect()
    }

    /// The `--explain` trace of one rule, after the evaluation ran.
    fn trace(&mut self, context: &Context, id: RuleId) -> RuleTrace {
        let rule = &self.p.contract.rules[id.index()];
        let applied = self.applies(context, rule);
        let fired = match &self.scratch.rules[id.index()] {
            Memo::Done(done) => Some(Ok(done.fired)),
            Memo::Failed(fault) => Some(Err(fault.error().to_string())),
            Memo::Todo | Memo::Busy => None,
        };
        let mut conditions = Vec::new();
        if fired.is_some() {
            let mut parts = vec![rule.when];
            conjuncts(&self.p.contract, rule.when, &mut parts);
            for part in parts {
                let text = ir::print::expr(&self.p.contract, part);
                let value = match self.eval(part.0) {
                    Ok(v) => self.show(self.p.contract.expr(part).ty, &v),
                    Err(f) => format!("error: {}", f.into_error()),
                };
                conditions.push((text, value));
            }
        }
        let mut lets = Vec::new();
        let read = if fired.is_some() { lets_read(&self.p.contract, rule.when) } else { Vec::new() };
        for l in read {
            let value = match &self.scratch.lets[l as usize] {
                Memo::Done(v) => self.show(self.p.contract.lets[l as usize].ty, v),
                Memo::Failed(fault) => format!("error: {}", fault.error()),
                Memo::Todo | Memo::Busy => "not computed".to_string(),
            };
            lets.push((self.p.contract.lets[l as usize].name.clone(), value));
        }
        RuleTrace { rule: id, applied, fired, conditions, lets }
    }
}

/// The fault of a list index past the end.
#[cold]
fn index_out_of_range(i: i64, len: usize) -> Fault {
    Fault::missing(format!("index {i} is out of range for a list of {len}"))
}

/// An effect value that outlives the request, as a value of type `ty`.
pub(crate) fn owned(schema: &Schema<'_>, ty: TypeId, value: &Value<'_>) -> Owned {
    match value {
        Value::Bool(b) => Owned::Bool(*b),
        Value::Int(i) => Owned::Int(*i),
        Value::Decimal(d) => Owned::Decimal(*d),
        Value::Float(f) => Owned::Float(*f),
        Value::Timestamp(t) => Owned::Timestamp(*t),
        Value::Duration(d) => Owned::Duration(*d),
        Value::Str(_) | Value::Text(_) => Owned::String(value.as_str().to_string()),
        Value::List(..) | Value::Items(_) => {
            let element = schema.types.list_element(ty).unwrap_or(ty);
            Owned::List(
                (0..value.list_len())
                    .map(|i| owned(schema, element, &value.list_get(schema.layouts, element, i)))
                    .collect(),
            )
        }
        Value::Record(record) => {
            let fields = schema.types.record_fields(ty).unwrap_or(&[]);
            let field = |(i, f): (usize, &ir::FieldDef)| {
                let offset = schema.layouts.field_offset(ty, i as u32);
                (f.name.clone(), owned(schema, f.ty, &read(schema.layouts, *record, offset, f.ty)))
            };
            Owned::Record(fields.iter().enumerate().map(field).collect())
        }
        Value::Absent => Owned::List(Vec::new()),
    }
}

/// The operands of top-level `&&` and `||` chains under `root`.
fn conjuncts(c: &ir::Contract, root: ir::ExprId, out: &mut Vec<ir::ExprId>) {
    if let ir::ExprKind::And { lhs, rhs } | ir::ExprKind::Or { lhs, rhs } = &c.expr(root).kind {
        for side in [*lhs, *rhs] {
            out.push(side);
            conjuncts(c, side, out);
        }
    }
}

/// The lets an expression reads directly, in first-use order.
fn lets_read(c: &ir::Contract, root: ir::ExprId) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(id) = stack.pop() {
        let kind = &c.expr(id).kind;
        if let ir::ExprKind::Let(l) = kind
            && !out.contains(&l.0)
        {
            out.push(l.0);
        }
        let mut children = kind.children();
        children.reverse();
        stack.extend(children);
    }
    out
}

/// The fuel of work over a value: its bytes for a string, its elements
/// for a list (rendered, compared, copied), nothing for a scalar.
fn work(value: &Value<'_>) -> i64 {
    match value {
        Value::Str(_) | Value::Text(_) => string_cost(value.as_str().len()),
        Value::List(..) | Value::Items(_) => value.list_len() as i64,
        _ => 0,
    }
}

fn truthy(value: &Value<'_>) -> bool {
    matches!(value, Value::Bool(true))
}

/// Orders two scalar values of one type.
fn order(l: &Value<'_>, r: &Value<'_>) -> Ordering {
    match (l, r) {
        (Value::Int(a), Value::Int(b))
        | (Value::Timestamp(a), Value::Timestamp(b))
        | (Value::Duration(a), Value::Duration(b)) => a.cmp(b),
        (Value::Decimal(a), Value::Decimal(b)) => crate::decimal::cmp(*a, *b),
        (Value::Float(a), Value::Float(b)) => ops::float_cmp(*a, *b),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        (Value::Str(_) | Value::Text(_), Value::Str(_) | Value::Text(_)) => {
            ops::compare_str(l.as_str(), r.as_str())
        }
        (Value::Absent, Value::Absent) => Ordering::Equal,
        (Value::Absent, _) => Ordering::Less,
        (_, Value::Absent) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Equality of lists, records and optionals of type `ty`, part by part.
fn structural_eq(schema: &Schema<'_>, ty: TypeId, l: &Value<'_>, r: &Value<'_>) -> bool {
    use ir::TypeKind;
    match (schema.types.kind(ty), l, r) {
        (TypeKind::Optional(_), Value::Absent, Value::Absent) => true,
        (TypeKind::Optional(_), Value::Absent, _) | (TypeKind::Optional(_), _, Value::Absent) => false,
        (TypeKind::Optional(inner), _, _) => structural_eq(schema, *inner, l, r),
        (TypeKind::List(element), _, _) => {
            l.list_len() == r.list_len()
                && (0..l.list_len()).all(|i| {
                    let (a, b) =
                        (l.list_get(schema.layouts, *element, i), r.list_get(schema.layouts, *element, i));
                    structural_eq(schema, *element, &a, &b)
                })
        }
        (TypeKind::Record(fields), Value::Record(a), Value::Record(b)) => {
            fields.iter().enumerate().all(|(i, f)| {
                let offset = schema.layouts.field_offset(ty, i as u32);
                structural_eq(
                    schema,
                    f.ty,
                    &read(schema.layouts, *a, offset, f.ty),
                    &read(schema.layouts, *b, offset, f.ty),
                )
            })
        }
        _ => order(l, r) == Ordering::Equal,
    }
}

fn zero_of(ty: TypeId) -> Value<'static> {
    match ty {
        TypeTable::DECIMAL => Value::Decimal(Decimal::ZERO),
        TypeTable::FLOAT => Value::Float(0.0),
        TypeTable::DURATION => Value::Duration(0),
        _ => Value::Int(0),
    }
}

fn sum_op(ty: TypeId) -> BinaryOp {
    match ty {
        TypeTable::DECIMAL => BinaryOp::AddDecimal,
        TypeTable::FLOAT => BinaryOp::AddFloat,
        TypeTable::DURATION => BinaryOp::AddDuration,
        _ => BinaryOp::AddInt,
    }
}

/// Combines an effect's previous value with a newly set one.
fn combine_values<'a>(policy: Combine, old: &Value<'a>, new: &Value<'a>) -> Result<Value<'a>, EvalError> {
    Ok(match policy {
        Combine::Last => new.clone(),
        Combine::Max => {
            if order(new, old) == Ordering::Greater {
                new.clone()
            } else {
                old.clone()
            }
        }
        Combine::Min => {
            if order(new, old) == Ordering::Less {
                new.clone()
            } else {
                old.clone()
            }
        }
        Combine::Any => Value::Bool(truthy(old) || truthy(new)),
        Combine::All => Value::Bool(truthy(old) && truthy(new)),
        Combine::Sum => {
            let op = match old {
                Value::Decimal(_) => BinaryOp::AddDecimal,
                Value::Float(_) => BinaryOp::AddFloat,
                Value::Duration(_) => BinaryOp::AddDuration,
                _ => BinaryOp::AddInt,
            };
            binary(op, old.clone(), new.clone())?
        }
    })
}

fn int(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => *i,
        _ => 0,
    }
}

fn dec(v: &Value<'_>) -> Decimal {
    match v {
        Value::Decimal(d) => *d,
        _ => Decimal::ZERO,
    }
}

fn float(v: &Value<'_>) -> f64 {
    match v {
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

fn unary<'a>(op: UnaryOp, v: Value<'a>) -> Result<Value<'a>, EvalError> {
    Ok(match op {
        UnaryOp::Not => Value::Bool(!truthy(&v)),
        UnaryOp::NegInt => Value::Int(ops::int_neg(int(&v))?),
        UnaryOp::NegDecimal => Value::Decimal(ops::dec_neg(dec(&v))),
        UnaryOp::NegFloat => Value::Float(-float(&v)),
        UnaryOp::NegDuration => Value::Duration(ops::duration_neg(int(&v))?),
        UnaryOp::IntToDecimal => Value::Decimal(ops::decimal_from_int(int(&v))),
    })
}

pub(crate) fn binary<'a>(op: BinaryOp, l: Value<'a>, r: Value<'a>) -> Result<Value<'a>, EvalError> {
    use BinaryOp::*;
    Ok(match op {
        AddInt => Value::Int(ops::int_add(int(&l), int(&r))?),
        SubInt => Value::Int(ops::int_sub(int(&l), int(&r))?),
        MulInt => Value::Int(ops::int_mul(int(&l), int(&r))?),
        DivInt => Value::Int(ops::int_div(int(&l), int(&r))?),
        RemInt => Value::Int(ops::int_rem(int(&l), int(&r))?),
        AddDecimal => Value::Decimal(ops::dec_add(dec(&l), dec(&r))?),
        SubDecimal => Value::Decimal(ops::dec_sub(dec(&l), dec(&r))?),
        MulDecimal => Value::Decimal(ops::dec_mul(dec(&l), dec(&r))?),
        DivDecimal => Value::Decimal(ops::dec_div(dec(&l), dec(&r))?),
        RemDecimal => Value::Decimal(ops::dec_rem(dec(&l), dec(&r))?),
        AddFloat => Value::Float(ops::float_add(float(&l), float(&r))?),
        SubFloat => Value::Float(ops::float_sub(float(&l), float(&r))?),
        MulFloat => Value::Float(ops::float_mul(float(&l), float(&r))?),
        DivFloat => Value::Float(ops::float_div(float(&l), float(&r))?),
        RemFloat => Value::Float(ops::float_rem(float(&l), float(&r))?),
        Concat => Value::Text(Rc::from(format!("{}{}", l.as_str(), r.as_str()))),
        AddDuration => Value::Duration(ops::duration_add(int(&l), int(&r))?),
        SubDuration => Value::Duration(ops::duration_sub(int(&l), int(&r))?),
        AddTimestamp => Value::Timestamp(ops::timestamp_add(int(&l), int(&r))?),
        SubTimestamp => Value::Timestamp(ops::timestamp_sub(int(&l), int(&r))?),
        DiffTimestamps => Value::Duration(ops::timestamp_diff(int(&l), int(&r))?),
    })
}

/// The built-ins that only look at their (at most two) arguments.
pub(crate) fn builtin<'a>(
    func: Builtin,
    a: Value<'a>,
    b: Value<'a>,
    ty: TypeId,
) -> Result<Value<'a>, EvalError> {
    let text = |s: String| Value::Text(Rc::from(s));
    Ok(match (func, &a) {
        (Builtin::Abs, Value::Int(i)) => Value::Int(ops::int_abs(*i)?),
        (Builtin::Abs, Value::Decimal(d)) => Value::Decimal(d.abs()),
        (Builtin::Abs, Value::Float(f)) => Value::Float(f.abs()),
        (Builtin::Abs, Value::Duration(d)) => Value::Duration(ops::duration_abs(*d)?),
        (Builtin::Round | Builtin::RoundHalfEven, Value::Decimal(d)) => {
            Value::Decimal(ops::dec_round(*d, int(&b), func == Builtin::RoundHalfEven)?)
        }
        (Builtin::Round | Builtin::RoundHalfEven, Value::Float(f)) => {
            Value::Float(ops::float_round(*f, int(&b), func == Builtin::RoundHalfEven)?)
        }
        (Builtin::Floor, Value::Decimal(d)) => Value::Decimal(d.floor()),
        (Builtin::Ceil, Value::Decimal(d)) => Value::Decimal(d.ceil()),
        (Builtin::Floor, Value::Float(f)) => Value::Float(f.floor()),
        (Builtin::Ceil, Value::Float(f)) => Value::Float(f.ceil()),
        (Builtin::ToInt, Value::Int(i)) => Value::Int(*i),
        (Builtin::ToInt, Value::Decimal(d)) => Value::Int(ops::int_from_decimal(*d)?),
        (Builtin::ToInt, Value::Float(f)) => Value::Int(ops::int_from_float(*f)?),
        (Builtin::ToInt, _) => Value::Int(ops::int_from_str(a.as_str())?),
        (Builtin::ToDecimal, Value::Int(i)) => Value::Decimal(ops::decimal_from_int(*i)),
        (Builtin::ToDecimal, Value::Decimal(d)) => Value::Decimal(*d),
        (Builtin::ToDecimal, Value::Float(f)) => Value::Decimal(ops::decimal_from_float(*f)?),
        (Builtin::ToDecimal, _) => Value::Decimal(ops::decimal_from_str(a.as_str())?),
        (Builtin::ToFloat, Value::Int(i)) => Value::Float(*i as f64),
        (Builtin::ToFloat, Value::Decimal(d)) => Value::Float(ops::float_from_decimal(*d)),
        (Builtin::ToFloat, Value::Float(f)) => Value::Float(*f),
        (Builtin::ToFloat, _) => Value::Float(ops::float_from_str(a.as_str())?),
        (Builtin::Len, Value::Str(_) | Value::Text(_)) => Value::Int(ops::str_len(a.as_str())),
        (Builtin::Len, _) => Value::Int(a.list_len() as i64),
        (Builtin::Lower, _) => text(a.as_str().to_lowercase()),
        (Builtin::Upper, _) => text(a.as_str().to_uppercase()),
        (Builtin::Trim, Value::Str(s)) => Value::Str(s.trim()),
        (Builtin::Trim, _) => text(a.as_str().trim().to_string()),
        (Builtin::StartsWith, _) => Value::Bool(a.as_str().starts_with(b.as_str())),
        (Builtin::EndsWith, _) => Value::Bool(a.as_str().ends_with(b.as_str())),
        (Builtin::Contains, _) => Value::Bool(a.as_str().contains(b.as_str())),
        (Builtin::Days, _) => Value::Int(ops::days(int(&a))),
        (Builtin::Hours, _) => Value::Int(ops::hours(int(&a))),
        (Builtin::ToTimestamp, _) => Value::Timestamp(ops::timestamp_from_str(a.as_str())?),
        (Builtin::ToDuration, _) => Value::Duration(ops::duration_from_str(a.as_str())?),
        _ => {
            return Err(EvalError::Argument(format!(
                "internal: `{}` on a value of type #{} it does not take",
                func.name(),
                ty.0
            )));
        }
    })
}
