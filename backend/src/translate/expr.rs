//! Expressions: the dispatch over the IR, constants, reads of inputs and
//! records, lets, `??`, and table lookups.

use super::*;

impl Translator<'_, '_> {
    // ----- expressions -----

    pub(super) fn expr(&mut self, id: ExprId) -> NVal {
        ir::stack::guard(|| self.expr_unguarded(id))
    }

    pub(super) fn expr_unguarded(&mut self, id: ExprId) -> NVal {
        let c = self.c;
        let node = c.expr(id);
        let ty = node.ty;
        match &node.kind {
            ExprKind::Const(_) => self.constant(id, ty),
            ExprKind::Input => {
                let input = self.ctx_field(NativeCtx::INPUT);
                self.word(input)
            }
            ExprKind::Field { base, index } => {
                if let Some(offset) = self.program.input_offset(id) {
                    let input = self.ctx_field(NativeCtx::INPUT);
                    return self.read_at(input, offset as i64, ty);
                }
                let record = self.expr(*base);
                let offset = self.program.layouts.field_offset(c.expr(*base).ty, *index) as i64;
                self.read_at(record.a, offset, ty)
            }
            ExprKind::Let(l) => self.let_value(l.index(), ty),
            ExprKind::RuleFired(r) => {
                let fired = self.call_rule(r.index());
                self.word(fired)
            }
            ExprKind::Unary { op, arg } => {
                let v = self.expr(*arg);
                self.unary(*op, v)
            }
            ExprKind::Binary { op: BinaryOp::RemFloat | BinaryOp::Concat, lhs, rhs } => {
                let operands = [(self.expr(*lhs), c.expr(*lhs).ty), (self.expr(*rhs), c.expr(*rhs).ty)];
                self.apply(id, &operands)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(*lhs), self.expr(*rhs));
                self.binary(*op, l, r)
            }
            ExprKind::Compare { op, lhs, rhs } => {
                let operand = c.expr(*lhs).ty;
                let (l, r) = (self.expr(*lhs), self.expr(*rhs));
                let holds = self.compare(*op, operand, l, r);
                let w = self.bool_word(holds);
                self.word(w)
            }
            ExprKind::And { lhs, rhs } => {
                let l = self.expr(*lhs);
                let rhs = *rhs;
                self.join(
                    T::BOOL,
                    l.a,
                    move |t| t.expr(rhs),
                    |t| {
                        let z = t.iconst(0);
                        t.word(z)
                    },
                )
            }
            ExprKind::Or { lhs, rhs } => {
                let l = self.expr(*lhs);
                let rhs = *rhs;
                self.join(
                    T::BOOL,
                    l.a,
                    |t| {
                        let one = t.iconst(1);
                        t.word(one)
                    },
                    move |t| t.expr(rhs),
                )
            }
            ExprKind::Cond { cond, then, otherwise } => {
                let cv = self.expr(*cond);
                let (then, otherwise) = (*then, *otherwise);
                self.join(ty, cv.a, move |t| t.expr(then), move |t| t.expr(otherwise))
            }
            ExprKind::Coalesce { value, default } => self.coalesce(*value, *default, ty),
            ExprKind::Present(value) => {
                let v = self.expr(*value);
                let present = match v.present {
                    Some(flag) => self.bool_word(flag),
                    None => self.iconst(1),
                };
                self.word(present)
            }
            ExprKind::TableGet { table, key } => self.table_get(table.index(), *key, ty),
            ExprKind::TableHas { table, key } => {
                let row = self.table_row(table.index(), *key);
                let found = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, row, 0);
                let w = self.bool_word(found);
                self.word(w)
            }
            ExprKind::Index { list, index } => {
                let (l, i) = (self.expr(*list), self.expr(*index));
                let in_range = self.b.ins().icmp(IntCC::UnsignedLessThan, i.a, l.b);
                self.found_or_missing(in_range);
                let stride = self.program.layouts.width(ty) as i64 * SLOT;
                let step = self.b.ins().imul_imm_s(i.a, stride);
                let at = self.b.ins().iadd(l.a, step);
                self.read_at(at, 0, ty)
            }
            ExprKind::Call { func, args } => self.call(id, *func, args, ty),
            ExprKind::Matches { subject, regex } => {
                let s = self.expr(*subject);
                self.charge_bytes(s.b, runtime::semantics::budget::REGEX_SHIFT);
                let program = self.ctx_field(NativeCtx::PROGRAM);
                let r = self.iconst(i64::from(regex.0));
                let hit = self.helper(Helper::RegexMatch, &[program, r, s.a, s.b], W);
                self.word(hit)
            }
            ExprKind::Local(local) => match self.locals.get(&local.0) {
                Some(v) => *v,
                None => self.unsupported_of(ty),
            },
            ExprKind::List(items) => self.list_literal(items, ty),
            ExprKind::InList { item, list } => self.in_list(*item, *list),
            ExprKind::Lambda { kind, list, param, body } => self.lambda(*kind, *list, *param, *body, ty),
            ExprKind::Extern { args, .. } => self.extern_call(id, args, ty),
            ExprKind::Window { window, aggregate } => {
                self.signal(self.program.aggregate_slot(window.0, *aggregate), ty)
            }
            ExprKind::Score { .. } => match self.program.score_signal(id) {
                Some(slot) => self.signal(slot, ty),
                // Scored where it stands (its features read a lambda's
                // parameter): the interpreter does that.
                None => self.unsupported_of(ty),
            },
        }
    }

    /// A constant from the program's prepared node.
    pub(super) fn constant(&mut self, id: ExprId, ty: TypeId) -> NVal {
        let Some(slot) = self.program.constant(id) else { return self.unsupported() };
        let (a, b) = slot.words();
        if slot.is_absent() {
            let z = self.iconst(0);
            let absent = self.b.ins().iconst(types::I8, 0);
            return NVal { a: z, b: z, present: Some(absent) };
        }
        let b = self.iconst(b as i64);
        let a = if let Some(place) = self.plan.addresses.constant(id.index()) {
            // A string or a list: its address is read, not embedded.
            self.address(place)
        } else if self.c.types.optional_inner(ty).unwrap_or(ty) == T::FLOAT {
            self.b.ins().f64const(f64::from_bits(a))
        } else {
            self.iconst(a as i64)
        };
        let present = self.c.types.optional_inner(ty).map(|_| self.b.ins().iconst(types::I8, 1));
        NVal { a, b, present }
    }

    /// Reads a value of type `ty` laid out at slot `offset` from `base`.
    pub(super) fn read_at(&mut self, base: Value, offset: i64, ty: TypeId) -> NVal {
        let byte = (offset * SLOT) as i32;
        if runtime::native::is_record(self.program, ty) {
            let at = self.b.ins().iadd_imm_s(base, i64::from(byte));
            return self.word(at);
        }
        let optional = self.c.types.optional_inner(ty).is_some();
        let inner = self.c.types.optional_inner(ty).unwrap_or(ty);
        let a = if inner == T::FLOAT {
            self.b.ins().load(types::F64, MemFlagsData::trusted(), base, byte + SLOT_A)
        } else {
            self.b.ins().load(W, MemFlagsData::trusted(), base, byte + SLOT_A)
        };
        let b = self.b.ins().load(W, MemFlagsData::trusted(), base, byte + SLOT_B);
        let present = if optional {
            let tag = self.b.ins().load(W, MemFlagsData::trusted(), base, byte + SLOT_TAG);
            Some(self.b.ins().icmp_imm_s(IntCC::NotEqual, tag, 0))
        } else {
            None
        };
        NVal { a, b, present }
    }

    pub(super) fn let_value(&mut self, i: usize, ty: TypeId) -> NVal {
        let at = self.plan.lets[i];
        let flag = self.load_word(at);
        let (compute, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(flag, done, &[], compute, &[]);
        self.b.switch_to_block(compute);
        let function = self.callees.import(self.callees.lets[i], self.b.func);
        let call = self.b.ins().call(function, &[self.ctx]);
        let status = self.b.inst_results(call)[0];
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, i64::from(OK));
        self.check(ok);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        let value = self.plan.let_values[i];
        let (a, b) = (self.load_word(value), self.load_word(value + 1));
        let mut v = self.loaded_value(a, b, ty);
        if self.c.types.optional_inner(ty).is_some() {
            let flag = self.load_word(at);
            v.present = Some(self.b.ins().icmp_imm_s(IntCC::Equal, flag, 1));
        }
        v
    }

    pub(super) fn coalesce(&mut self, value: ExprId, default: ExprId, ty: TypeId) -> NVal {
        let optional = self.c.types.optional_inner(self.c.expr(value).ty).is_some();
        let (default_block, done) = (self.b.create_block(), self.b.create_block());
        let a_ty = if ty == T::FLOAT { types::F64 } else { W };
        self.b.append_block_param(done, a_ty);
        self.b.append_block_param(done, W);
        let outer = self.missing.replace(default_block);
        let v = self.expr(value);
        self.missing = outer;
        if optional {
            let present = v.present.unwrap_or_else(|| self.b.ins().iconst(types::I8, 1));
            self.b.ins().brif(present, done, &args(&[v.a, v.b]), default_block, &[]);
        } else {
            self.b.ins().jump(done, &args(&[v.a, v.b]));
        }
        self.b.switch_to_block(default_block);
        let d = self.expr(default);
        self.b.ins().jump(done, &args(&[d.a, d.b]));
        self.b.switch_to_block(done);
        let params = self.b.block_params(done).to_vec();
        NVal { a: params[0], b: params[1], present: None }
    }
}
