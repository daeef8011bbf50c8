//! The three kinds of generated function: a let's, a rule's, and the
//! entry point that runs the applying rules and commits their outcomes.

use super::*;

impl Translator<'_, '_> {
    // ----- units -----

    pub(super) fn let_body(&mut self, i: usize) {
        self.check_stack();
        let l = &self.c.lets[i];
        let v = self.expr(l.value);
        let (a, b) = self.stored_words(v, l.ty);
        let (at, value) = (self.plan.lets[i], self.plan.let_values[i]);
        self.store_word(value, a);
        self.store_word(value + 1, b);
        // The flag: 1 computed and present, 2 computed and absent.
        let flag = match v.present {
            Some(present) => {
                let two = self.iconst(2);
                let one = self.iconst(1);
                self.b.ins().select(present, one, two)
            }
            None => self.iconst(1),
        };
        self.store_word(at, flag);
        self.status(OK);
    }

    /// A referenced rule's function: computes it once (memo word), for its
    /// own turn or for the first `rules.<id>` that asks.
    pub(super) fn rule_body(&mut self, i: usize) {
        self.check_stack();
        let memo = self.plan.rules[i];
        let current = self.load_word(memo);
        let (compute, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(current, done, &[], compute, &[]);
        self.b.switch_to_block(done);
        self.status(OK);
        self.b.switch_to_block(compute);
        let (fired, not_fired) = (self.b.create_block(), self.b.create_block());
        self.rule_outcome(i, fired, not_fired);
        self.b.switch_to_block(not_fired);
        let v = self.iconst(RULE_NOT_FIRED);
        self.store_word(memo, v);
        self.status(OK);
        self.b.switch_to_block(fired);
        let v = self.iconst(RULE_FIRED);
        self.store_word(memo, v);
        self.status(OK);
    }

    /// Falls back when the stack is below the context's floor: lets and
    /// referenced rules call each other, one native frame per link (only
    /// in contracts where such chains can be long: `Plan::checks_stack`).
    fn check_stack(&mut self) {
        if !self.plan.checks_stack {
            return;
        }
        let sp = self.b.ins().get_stack_pointer(W);
        let floor = self.ctx_field(NativeCtx::STACK_FLOOR);
        let ok = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, sp, floor);
        self.check(ok);
    }

    /// Computes rule `i`'s condition and, when it holds, its message and
    /// effect values into the state area; continues in `fired` or
    /// `not_fired`.
    fn rule_outcome(&mut self, i: usize, fired: Block, not_fired: Block) {
        let rule = &self.c.rules[i];
        let when = self.expr(rule.when);
        let computed = self.b.create_block();
        self.b.ins().brif(when.a, computed, &[], not_fired, &[]);
        self.b.switch_to_block(computed);
        let templates =
            rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
        let parts: Vec<ExprId> = templates.flat_map(ir::Template::exprs).collect();
        for (k, id) in parts.into_iter().enumerate() {
            let v = self.expr(id);
            let (a, b) = self.stored_words(v, self.c.expr(id).ty);
            let at = self.plan.layout.parts[i][k];
            self.store_word(at, a);
            self.store_word(at + 1, b);
        }
        for (k, assign) in rule.effects.iter().enumerate() {
            let v = self.expr(assign.value);
            let (a, b) = self.stored_words(v, self.c.effects[assign.effect.index()].ty);
            let at = self.plan.rule_effects[i][k];
            self.store_word(at, a);
            self.store_word(at + 1, b);
        }
        self.b.ins().jump(fired, &[]);
    }

    /// Calls rule `i`'s function; returns whether it fired.
    pub(super) fn call_rule(&mut self, i: usize) -> Value {
        let Some(callee) = self.callees.rules[i] else {
            self.unsupported();
            return self.iconst(0);
        };
        let function = self.callees.import(callee, self.b.func);
        let call = self.b.ins().call(function, &[self.ctx]);
        let status = self.b.inst_results(call)[0];
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        self.check(ok);
        let memo = self.load_word(self.plan.rules[i]);
        let fired = self.b.ins().icmp_imm_s(IntCC::Equal, memo, RULE_FIRED);
        self.bool_word(fired)
    }

    pub(super) fn entry_body(&mut self) {
        let c = self.c;
        let mut guard_bits = vec![None; c.rules.len()];
        for (bit, guard) in self.plan.guards.iter().enumerate() {
            guard_bits[guard.rule] = Some(bit);
        }
        let guarded = self.plan.guard_word.map(|word| self.load_word(word));
        for (i, rule) in c.rules.iter().enumerate() {
            let (apply, skip) = (self.b.create_block(), self.b.create_block());
            let applies = self.applies(self.program.rules[i]);
            self.b.ins().brif(applies, apply, &[], skip, &[]);
            self.b.switch_to_block(apply);
            if let (Some(word), Some(bit)) = (guarded, guard_bits[i]) {
                // The batch entry found the rule's guard false: it cannot fire.
                let run = self.b.create_block();
                let false_guard = self.b.ins().band_imm_s(word, (1u64 << bit) as i64);
                self.b.ins().brif(false_guard, skip, &[], run, &[]);
                self.b.switch_to_block(run);
            }
            let commit = self.b.create_block();
            if self.callees.rules[i].is_some() {
                let fired = self.call_rule(i);
                self.b.ins().brif(fired, commit, &[], skip, &[]);
            } else {
                self.rule_outcome(i, commit, skip);
            }
            self.b.switch_to_block(commit);
            self.commit(i);
            if c.decision == ir::DecisionMode::FirstMatch && rule.verdict.is_some() {
                let n = self.iconst(i as i64 + 1);
                let at = self.plan.layout.decided;
                self.store_word(at, n);
                self.status(OK);
            } else {
                self.b.ins().jump(skip, &[]);
            }
            self.b.switch_to_block(skip);
        }
        self.status(OK);
    }

    /// Whether a rule applies to the request's channel and component, as
    /// `RulePlan::applies` decides.
    pub(super) fn applies(&mut self, rule: runtime::program::context::RulePlan) -> Value {
        let channel_ok = match rule.channels {
            None => self.iconst(1),
            Some(mask) => {
                let mask = mask as i64;
                let bit = self.ctx_field(NativeCtx::CHANNEL_BIT);
                let hit = self.b.ins().band_imm_s(bit, mask);
                let ok = self.b.ins().icmp_imm_s(IntCC::NotEqual, hit, 0);
                self.bool_word(ok)
            }
        };
        let component = self.ctx_field(NativeCtx::COMPONENT);
        let none = self.b.ins().icmp_imm_s(IntCC::Equal, component, 0);
        let same = match rule.component {
            Some(id) => self.b.ins().icmp_imm_s(IntCC::Equal, component, i64::from(id.0) + 1),
            None => self.b.ins().iconst(types::I8, 0),
        };
        let component_ok = self.b.ins().bor(none, same);
        let component_ok = self.bool_word(component_ok);
        self.fold_band(channel_ok, component_ok)
    }

    /// Sets rule `i`'s fired bit and folds its effects in.
    pub(super) fn commit(&mut self, i: usize) {
        let word = self.plan.layout.fired + i / 64;
        let bits = self.load_word(word);
        let bits = self.b.ins().bor_imm_s(bits, (1u64 << (i % 64)) as i64);
        self.store_word(word, bits);
        let rule = &self.c.rules[i];
        for (k, assign) in rule.effects.iter().enumerate() {
            let at = self.plan.layout.effects[assign.effect.index()];
            let source = self.plan.rule_effects[i][k];
            let (a, b) = (self.load_word(source), self.load_word(source + 1));
            let present = self.load_word(at);
            let (first, combine, done) =
                (self.b.create_block(), self.b.create_block(), self.b.create_block());
            self.b.ins().brif(present, combine, &[], first, &[]);
            self.b.switch_to_block(first);
            self.store_word(at + 1, a);
            self.store_word(at + 2, b);
            let one = self.iconst(1);
            self.store_word(at, one);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(combine);
            let (old_a, old_b) = (self.load_word(at + 1), self.load_word(at + 2));
            let (new_a, new_b) = self.combine(assign.effect.index(), (old_a, old_b), (a, b));
            self.store_word(at + 1, new_a);
            self.store_word(at + 2, new_b);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        }
    }

    /// The combination of effect `effect`'s old and new words.
    pub(super) fn combine(
        &mut self,
        effect: usize,
        old: (Value, Value),
        new: (Value, Value),
    ) -> (Value, Value) {
        let (policy, ty) = (self.c.effects[effect].combine, self.c.effects[effect].ty);
        match policy {
            Combine::Last => new,
            Combine::Any => (self.b.ins().bor(old.0, new.0), old.1),
            Combine::All => (self.b.ins().band(old.0, new.0), old.1),
            Combine::Max | Combine::Min => {
                let o = self.loaded_value(old.0, old.1, ty);
                let n = self.loaded_value(new.0, new.1, ty);
                let op = if policy == Combine::Max { CmpOp::Gt } else { CmpOp::Lt };
                let better = self.compare(op, ty, n, o);
                let a = self.b.ins().select(better, new.0, old.0);
                let b = self.b.ins().select(better, new.1, old.1);
                (a, b)
            }
            Combine::Sum => {
                let o = self.loaded_value(old.0, old.1, ty);
                let n = self.loaded_value(new.0, new.1, ty);
                let sum = self.binary(self.program.effect_adds[effect], o, n);
                self.stored_words(sum, ty)
            }
        }
    }
}
