//! Preparing a verified contract for evaluation: names resolved to slot
//! offsets, tables indexed, regexes compiled, constants laid out, and one
//! [`Node`] per IR expression. Done once per contract, at load.

pub mod context;
pub mod matcher;

pub mod plans;

use std::sync::Arc;

use ir::{
    BinaryOp, Builtin, CmpOp, Const, ExprId, ExprKind, LambdaKind, TableKind, TypeId, TypeKind, TypeTable,
    UnaryOp,
};
use rustc_hash::FxHashMap;

use crate::program::context::RulePlan;
use crate::program::matcher::Matcher;
use crate::value::data::{RecordRef, Slot, Store};
use crate::value::layout::{Layouts, Shape};
use crate::value::{Schema, Value, read};

/// A node id: the IR expression's id.
pub type NodeId = u32;

/// How two values of one type compare.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CmpKind {
    Bool,
    Int,
    Decimal,
    Float,
    Str,
    Timestamp,
    Duration,
    /// Lists, records and optionals of this type: part by part.
    Structural(TypeId),
}

/// How to read a field's value, decided at load so the hot path does not
/// look at layouts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReadKind {
    Bool,
    Int,
    Decimal,
    Float,
    Str,
    Timestamp,
    Duration,
    /// Records, lists and optionals: through the layout of this type.
    Layout(TypeId),
}

impl ReadKind {
    pub fn of(layouts: &Layouts, ty: TypeId) -> ReadKind {
        match layouts.of(ty).shape {
            Shape::Bool => ReadKind::Bool,
            Shape::Int => ReadKind::Int,
            Shape::Decimal => ReadKind::Decimal,
            Shape::Float => ReadKind::Float,
            Shape::Str => ReadKind::Str,
            Shape::Timestamp => ReadKind::Timestamp,
            Shape::Duration => ReadKind::Duration,
            Shape::List { .. } | Shape::Optional { .. } | Shape::Record { .. } => ReadKind::Layout(ty),
        }
    }

    /// Reads the value at `offset` of `record`.
    #[inline(always)]
    pub fn read<'a>(self, layouts: &Layouts, record: RecordRef<'a>, offset: usize) -> Value<'a> {
        let slot = record.slot(offset);
        match self {
            ReadKind::Bool => Value::Bool(slot.as_bool()),
            ReadKind::Int => Value::Int(slot.as_int()),
            ReadKind::Decimal => Value::Decimal(slot.as_decimal()),
            ReadKind::Float => Value::Float(slot.as_float()),
            ReadKind::Str => Value::Str(record.str(offset)),
            ReadKind::Timestamp => Value::Timestamp(slot.as_int()),
            ReadKind::Duration => Value::Duration(slot.as_int()),
            ReadKind::Layout(ty) => read(layouts, record, offset, ty),
        }
    }
}

/// One prepared expression node.
#[derive(Clone, Debug)]
pub enum Node {
    /// A constant laid out in the program's constant store.
    Const {
        slot: Slot,
        ty: TypeId,
    },
    /// A field of the input, at an absolute slot offset.
    Input {
        offset: u32,
        read: ReadKind,
    },
    /// The whole input record.
    InputRecord,
    /// A field of a computed record.
    Field {
        base: NodeId,
        offset: u32,
        read: ReadKind,
    },
    Let(u32),
    Rule(u32),
    Local(u32),
    List {
        items: Box<[NodeId]>,
    },
    Unary(UnaryOp, NodeId),
    Binary(BinaryOp, NodeId, NodeId),
    Compare {
        op: CmpOp,
        kind: CmpKind,
        lhs: NodeId,
        rhs: NodeId,
    },
    And(NodeId, NodeId),
    Or(NodeId, NodeId),
    Cond(NodeId, NodeId, NodeId),
    Coalesce(NodeId, NodeId),
    Present(NodeId),
    TableGet {
        table: u32,
        key: NodeId,
        /// The key is a plain `int`: looked up without a `Value`.
        int_key: bool,
    },
    TableHas {
        table: u32,
        key: NodeId,
    },
    Index {
        list: NodeId,
        index: NodeId,
        element: TypeId,
    },
    InList {
        item: NodeId,
        list: NodeId,
        kind: CmpKind,
        element: TypeId,
    },
    Call {
        func: Builtin,
        args: Box<[NodeId]>,
        /// For a `min` or `max` of two or more arguments of exactly one
        /// type (not optionals), that type: the typed paths take it.
        extremum_of: Option<TypeId>,
    },
    Matches {
        subject: NodeId,
        regex: u32,
    },
    Lambda {
        kind: LambdaKind,
        list: NodeId,
        param: u32,
        body: NodeId,
        /// The addition of `sum` (`BinaryOp::add_for` of its type).
        add: BinaryOp,
    },
    Extern {
        func: u32,
        args: Box<[NodeId]>,
    },
    /// `windows.<w>.<a>`.
    Window {
        window: u32,
        aggregate: u32,
    },
    /// `score(model, features)`; `site` is its place among the scores
    /// computed ahead ([`Program::scores`]), `None` when its features
    /// read a lambda's parameter.
    Score {
        model: u32,
        features: NodeId,
        site: Option<u32>,
    },
}

/// A table's rows, indexed by key.
#[derive(Debug)]
pub struct Table {
    pub name: String,
    /// The value type (keyed tables) or `None` (sets).
    pub value: Option<TypeId>,
    width: usize,
    /// Row `r`'s value at `r * width`.
    values: Vec<Slot>,
    index: KeyIndex,
}

/// Key to row number.
#[derive(Debug)]
enum KeyIndex {
    /// At most a few string keys: a linear scan beats hashing.
    FewStrings(Vec<FewKey>),
    Strings(FxHashMap<Box<str>, u32>),
    /// Int keys in a small range: a direct array (`u32::MAX` = no row).
    DenseInts {
        min: i64,
        rows: Vec<u32>,
    },
    Ints(FxHashMap<i64, u32>),
}

const FEW: usize = 8;

/// A key of a small table, with its length and first eight bytes as a
/// word: most keys (codes, countries, currencies) are decided by one
/// comparison, without a call to `memcmp`.
#[derive(Debug)]
struct FewKey {
    text: Box<str>,
    head: (usize, u64),
    row: u32,
}

/// A string's length and first eight bytes (zero-padded).
#[inline]
fn head(text: &str) -> (usize, u64) {
    let bytes = text.as_bytes();
    let word = match bytes.first_chunk::<8>() {
        Some(first) => u64::from_le_bytes(*first),
        // Short keys byte by byte: a `memcpy` call costs more.
        None => bytes.iter().rev().fold(0, |word, b| word << 8 | u64::from(*b)),
    };
    (bytes.len(), word)
}

/// The row of `key` among `keys`.
#[inline]
fn find_few(keys: &[FewKey], key: &str) -> Option<u32> {
    let wanted = head(key);
    keys.iter().find(|k| k.head == wanted && (wanted.0 <= 8 || *k.text == *key)).map(|k| k.row)
}

impl Table {
    /// The row of a key, if there is one.
    pub fn row(&self, key: &Value<'_>) -> Option<u32> {
        match (&self.index, key) {
            (KeyIndex::FewStrings(keys), Value::Str(_) | Value::Text(_)) => find_few(keys, key.as_str()),
            (KeyIndex::Strings(rows), Value::Str(_) | Value::Text(_)) => rows.get(key.as_str()).copied(),
            (KeyIndex::DenseInts { min, rows }, Value::Int(i)) => {
                let at = i.checked_sub(*min).and_then(|d| usize::try_from(d).ok())?;
                rows.get(at).copied().filter(|r| *r != u32::MAX)
            }
            (KeyIndex::Ints(rows), Value::Int(i)) => rows.get(i).copied(),
            _ => None,
        }
    }

    /// The row of a string key.
    pub fn row_str(&self, key: &str) -> Option<u32> {
        match &self.index {
            KeyIndex::FewStrings(keys) => find_few(keys, key),
            KeyIndex::Strings(rows) => rows.get(key).copied(),
            _ => None,
        }
    }

    /// The row of an int key.
    pub fn row_int(&self, key: i64) -> Option<u32> {
        match &self.index {
            KeyIndex::DenseInts { min, rows } => {
                let at = key.checked_sub(*min).and_then(|d| usize::try_from(d).ok())?;
                rows.get(at).copied().filter(|r| *r != u32::MAX)
            }
            KeyIndex::Ints(rows) => rows.get(&key).copied(),
            _ => None,
        }
    }

    /// Every string key with its row (`None` for int-keyed tables), for
    /// code generators that match keys inline.
    pub fn string_keys(&self) -> Option<Vec<(&str, u32)>> {
        match &self.index {
            KeyIndex::FewStrings(keys) => Some(keys.iter().map(|k| (&*k.text, k.row)).collect()),
            KeyIndex::Strings(rows) => Some(rows.iter().map(|(k, r)| (&**k, *r)).collect()),
            _ => None,
        }
    }

    /// `Some(min)` when the int keys are exactly `min, min + 1, ...` and
    /// key `min + i` is row `i`: a lookup is a subtraction and a bounds
    /// check.
    pub fn dense_identity(&self) -> Option<(i64, usize)> {
        match &self.index {
            KeyIndex::DenseInts { min, rows } => {
                rows.iter().enumerate().all(|(i, r)| *r as usize == i).then_some((*min, rows.len()))
            }
            _ => None,
        }
    }

    /// Slots per row value.
    pub fn width(&self) -> usize {
        self.width
    }

    /// A pointer to row `row`'s value slots (null when out of range).
    pub fn value_slots(&self, row: u32) -> *const Slot {
        self.values.get(row as usize * self.width).map_or(std::ptr::null(), |s| s as *const Slot)
    }

    /// The value of row `row`, read as `ty`.
    pub fn value<'a>(&'a self, layouts: &Layouts, row: u32, ty: TypeId) -> Value<'a> {
        let start = row as usize * self.width;
        // SAFETY: the slots belong to the program's constant store, which
        // lives as long as the program (and so as `'a`).
        let record = unsafe { RecordRef::new(&self.values[start..start + self.width]) };
        read(layouts, record, 0, ty)
    }
}

/// Everything an engine needs to evaluate one contract.
#[derive(Debug)]
pub struct Program {
    pub contract: Arc<ir::Contract>,
    pub layouts: Layouts,
    pub(crate) nodes: Vec<Node>,
    pub tables: Vec<Table>,
    pub regexes: Vec<Matcher>,
    /// Per rule: its channels, component and whether it is referenced,
    /// as both engines schedule it.
    pub rules: Vec<RulePlan>,
    /// How many rules some expression refers to (`rules.<id>`).
    pub referenced_rules: usize,
    /// Per effect: the addition `combine: sum` uses on its type
    /// (`BinaryOp::add_for`; read under that policy only).
    pub effect_adds: Vec<BinaryOp>,
    /// Unique among the programs of the process: records and requests laid
    /// out for this program carry it.
    pub id: u64,
    /// Per window: its roots and where its aggregates are in a record's
    /// signals (`crate::signals`).
    pub windows: Vec<plans::WindowPlan>,
    /// The `score` sites computed before the rules (`crate::signals`).
    pub scores: Vec<plans::ScorePlan>,
    /// The contract's models, in declaration order, once an engine with a
    /// model runtime loaded them (`Engine::load`); empty otherwise.
    pub models: Vec<Arc<dyn crate::model::LoadedModel>>,
    /// Field name to index, for records wider than a few fields.
    field_maps: FxHashMap<TypeId, FxHashMap<String, usize>>,
    /// Per slot of the input: whether some expression reads it.
    input_read: Vec<bool>,
    /// Owns what constant slots point at.
    _constants: Store<'static>,
}

/// The next [`Program::id`].
static NEXT_PROGRAM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Program {
    /// Prepares a verified contract; fails only on a regex the engine
    /// cannot build (a bundle made by another compiler).
    pub fn new(contract: Arc<ir::Contract>) -> Result<Program, String> {
        let layouts = Layouts::new(&contract.types);
        let mut constants = Store::new();
        let regexes = contract
            .regexes
            .iter()
            .map(|pattern| {
                ir::pattern::compile(pattern).map(Matcher::new).map_err(|e| format!("regex `{pattern}`: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tables = contract.tables.iter().map(|t| table(&contract, &layouts, t, &mut constants)).collect();
        let mut nodes = Vec::with_capacity(contract.exprs.len());
        for i in 0..contract.exprs.len() {
            let node = node(&contract, &layouts, &nodes, ExprId::from_index(i), &mut constants);
            nodes.push(node);
        }
        let field_maps = contract
            .types
            .iter()
            .filter_map(|(id, kind)| match kind {
                TypeKind::Record(fields) if fields.len() > FEW => {
                    Some((id, fields.iter().enumerate().map(|(i, f)| (f.name.clone(), i)).collect()))
                }
                _ => None,
            })
            .collect();
        let referenced = contract.referenced_rules();
        let mut referenced_rules = 0;
        let rules = contract
            .rules
            .iter()
            .zip(&referenced)
            .map(|(rule, &is_referenced)| {
                let memo = is_referenced.then(|| {
                    referenced_rules += 1;
                    referenced_rules as u32 - 1
                });
                RulePlan::new(rule, memo)
            })
            .collect();
        let effect_adds = contract.effects.iter().map(|e| BinaryOp::add_for(e.ty)).collect();
        let scores = plans::ScorePlan::of(&contract);
        for (at, site) in scores.iter().enumerate() {
            if let Node::Score { site: place, .. } = &mut nodes[site.node as usize] {
                *place = Some(at as u32);
            }
        }
        let input_read = input_read(&contract, &layouts, &nodes);
        let windows = plans::WindowPlan::of(&contract);
        Ok(Program {
            id: NEXT_PROGRAM.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            contract,
            layouts,
            nodes,
            tables,
            regexes,
            rules,
            referenced_rules,
            effect_adds,
            windows,
            scores,
            models: Vec::new(),
            field_maps,
            input_read,
            _constants: constants,
        })
    }

    /// How many slots a record's signals have: one per window aggregate,
    /// then one per score computed ahead ([`crate::signals::Signals::slots`]).
    pub fn signal_slots(&self) -> usize {
        self.windows.iter().map(|w| w.aggregates.len()).sum::<usize>() + self.scores.len()
    }

    /// Where aggregate `aggregate` of window `window` is among a record's
    /// signal slots.
    pub fn aggregate_slot(&self, window: u32, aggregate: u32) -> usize {
        self.windows[window as usize].first + aggregate as usize
    }

    /// The input offset that expression `id` reads, when it reads a field
    /// of the input (a path from the input resolved at load).
    pub fn input_offset(&self, id: ExprId) -> Option<u32> {
        match self.nodes.get(id.index()) {
            Some(Node::Input { offset, .. }) => Some(*offset),
            _ => None,
        }
    }

    /// The slot of constant expression `id`, as prepared at load.
    pub fn constant(&self, id: ExprId) -> Option<&Slot> {
        match self.nodes.get(id.index()) {
            Some(Node::Const { slot, .. }) => Some(slot),
            _ => None,
        }
    }

    /// Every constant expression's index and slot, in expression order.
    pub fn constants(&self) -> impl Iterator<Item = (usize, &Slot)> {
        self.nodes.iter().enumerate().filter_map(|(i, node)| match node {
            Node::Const { slot, .. } => Some((i, slot)),
            _ => None,
        })
    }

    /// The slot among a record's signals of `score` expression `id`, when
    /// it is computed ahead (`None` when its features read a lambda's
    /// parameter: it is scored where it stands).
    pub fn score_signal(&self, id: ExprId) -> Option<usize> {
        match self.nodes.get(id.index()) {
            Some(Node::Score { site: Some(site), .. }) => Some(self.score_slot(*site)),
            _ => None,
        }
    }

    /// Where score site `site` is among a record's signal slots.
    pub fn score_slot(&self, site: u32) -> usize {
        self.windows.iter().map(|w| w.aggregates.len()).sum::<usize>() + site as usize
    }

    /// Whether some expression reads a slot of the input's `offset ..
    /// offset + width` (batch input lays out only those, and validates
    /// the rest).
    pub fn reads_input(&self, offset: usize, width: usize) -> bool {
        self.input_read.get(offset..offset + width).is_some_and(|slots| slots.contains(&true))
    }

    /// The index of the field called `name` in record type `ty`.
    pub fn field_index(&self, ty: TypeId, name: &str) -> Option<usize> {
        if let Some(map) = self.field_maps.get(&ty) {
            return map.get(name).copied();
        }
        self.contract.types.record_fields(ty)?.iter().position(|f| f.name == name)
    }

    pub fn schema(&self) -> Schema<'_> {
        Schema { types: &self.contract.types, layouts: &self.layouts }
    }

    /// The width of the input record in slots.
    pub fn input_width(&self) -> usize {
        self.layouts.width(self.contract.input)
    }
}

/// Which input slots the nodes read: each input read covers its value's
/// slots; the input as a whole value (anywhere but as the base of a field,
/// which is folded into the field's read) covers them all.
fn input_read(contract: &ir::Contract, layouts: &Layouts, nodes: &[Node]) -> Vec<bool> {
    let mut read = vec![false; layouts.width(contract.input)];
    let mut field_bases = vec![false; contract.exprs.len()];
    for expr in &contract.exprs {
        match &expr.kind {
            ExprKind::Field { base, .. } => field_bases[base.index()] = true,
            kind => {
                if kind.children().iter().any(|c| matches!(contract.expr(*c).kind, ExprKind::Input)) {
                    return vec![true; read.len()];
                }
            }
        }
    }
    for (i, node) in nodes.iter().enumerate() {
        match node {
            Node::Input { offset, .. } => {
                let (start, width) = (*offset as usize, layouts.width(contract.exprs[i].ty));
                for slot in read.iter_mut().skip(start).take(width.max(1)) {
                    *slot = true;
                }
            }
            Node::InputRecord if !field_bases[i] => read.fill(true),
            _ => {}
        }
    }
    read
}

fn table(contract: &ir::Contract, layouts: &Layouts, t: &ir::Table, store: &mut Store<'static>) -> Table {
    let (keys, value, width, values): (Vec<&Const>, Option<TypeId>, usize, Vec<Slot>) = match &t.kind {
        TableKind::Map { value, rows, .. } => {
            let width = layouts.width(*value);
            let mut slots = Vec::with_capacity(rows.len() * width);
            for (_, v) in rows {
                lay_out(contract, layouts, *value, v, store, &mut slots);
            }
            (rows.iter().map(|(k, _)| k).collect(), Some(*value), width, slots)
        }
        TableKind::Set { rows, .. } => (rows.iter().collect(), None, 0, Vec::new()),
    };
    let index = key_index(&keys);
    Table { name: t.name.clone(), value, width, values, index }
}

fn key_index(keys: &[&Const]) -> KeyIndex {
    let ints: Vec<(i64, u32)> = keys
        .iter()
        .enumerate()
        .filter_map(|(r, k)| if let Const::Int(i) = k { Some((*i, r as u32)) } else { None })
        .collect();
    if !ints.is_empty() {
        let min = ints.iter().map(|(k, _)| *k).min().unwrap_or(0);
        let max = ints.iter().map(|(k, _)| *k).max().unwrap_or(0);
        let span = max.checked_sub(min).and_then(|s| usize::try_from(s).ok()).unwrap_or(usize::MAX);
        if span < 256.max(ints.len() * 4) {
            let mut rows = vec![u32::MAX; span + 1];
            for (k, r) in ints {
                rows[(k - min) as usize] = r;
            }
            return KeyIndex::DenseInts { min, rows };
        }
        return KeyIndex::Ints(ints.into_iter().collect());
    }
    let strings: Vec<(Box<str>, u32)> = keys
        .iter()
        .enumerate()
        .filter_map(|(r, k)| {
            if let Const::String(s) = k { Some((s.clone().into_boxed_str(), r as u32)) } else { None }
        })
        .collect();
    if strings.len() <= FEW {
        KeyIndex::FewStrings(
            strings.into_iter().map(|(text, row)| FewKey { head: head(&text), text, row }).collect(),
        )
    } else {
        KeyIndex::Strings(strings.into_iter().collect())
    }
}

/// Appends the slots of constant `value` of type `ty`.
fn lay_out(
    contract: &ir::Contract,
    layouts: &Layouts,
    ty: TypeId,
    value: &Const,
    store: &mut Store<'static>,
    out: &mut Vec<Slot>,
) {
    match (value, contract.types.kind(ty)) {
        (Const::Record(fields), TypeKind::Record(defs)) => {
            for (v, def) in fields.iter().zip(defs) {
                lay_out(contract, layouts, def.ty, v, store, out);
            }
        }
        (value, _) => out.push(const_slot(contract, layouts, ty, value, store)),
    }
}

/// The slot of a scalar, optional or list constant.
fn const_slot(
    contract: &ir::Contract,
    layouts: &Layouts,
    ty: TypeId,
    value: &Const,
    store: &mut Store<'static>,
) -> Slot {
    match value {
        Const::Absent => Slot::ABSENT,
        Const::Bool(b) => Slot::bool(*b),
        Const::Int(i) => Slot::int(*i),
        Const::Decimal(d) => Slot::decimal(*d),
        Const::Float(f) => Slot::float(*f),
        Const::String(s) => store.owned_str(s.as_str()),
        Const::Timestamp(t) => Slot::timestamp(*t),
        Const::Duration(d) => Slot::duration(*d),
        Const::List(items) => {
            let list_ty = match contract.types.kind(ty) {
                TypeKind::Optional(inner) => *inner,
                _ => ty,
            };
            let element = contract.types.list_element(list_ty).unwrap_or(ty);
            let mut slots = Vec::with_capacity(items.len() * layouts.width(element));
            for item in items {
                lay_out(contract, layouts, element, item, store, &mut slots);
            }
            store.list(slots, items.len())
        }
        // Records are laid out inline by `lay_out`, never as one slot.
        Const::Record(_) => Slot::ABSENT,
    }
}

/// The one type of a `min` or `max` call's two or more arguments, when
/// they all have exactly that type.
fn extremum_of(contract: &ir::Contract, func: Builtin, args: &[ExprId]) -> Option<TypeId> {
    let first = contract.expr(*args.first()?).ty;
    let same = args.iter().all(|arg| contract.expr(*arg).ty == first);
    (matches!(func, Builtin::Min | Builtin::Max) && args.len() >= 2 && same).then_some(first)
}

/// How values of `ty` compare.
pub fn cmp_kind(contract: &ir::Contract, ty: TypeId) -> CmpKind {
    match contract.types.kind(ty) {
        TypeKind::Bool => CmpKind::Bool,
        TypeKind::Int => CmpKind::Int,
        TypeKind::Decimal => CmpKind::Decimal,
        TypeKind::Float => CmpKind::Float,
        TypeKind::String | TypeKind::Enum(_) => CmpKind::Str,
        TypeKind::Timestamp => CmpKind::Timestamp,
        TypeKind::Duration => CmpKind::Duration,
        TypeKind::List(_) | TypeKind::Optional(_) | TypeKind::Record(_) => CmpKind::Structural(ty),
    }
}

fn node(
    contract: &ir::Contract,
    layouts: &Layouts,
    done: &[Node],
    id: ExprId,
    store: &mut Store<'static>,
) -> Node {
    let expr = contract.expr(id);
    let ty = expr.ty;
    let ty_of = |e: &ExprId| contract.expr(*e).ty;
    let ids = |args: &[ExprId]| args.iter().map(|a| a.0).collect::<Box<[NodeId]>>();
    match &expr.kind {
        ExprKind::Const(value) => Node::Const { slot: const_slot(contract, layouts, ty, value, store), ty },
        ExprKind::Input => Node::InputRecord,
        ExprKind::Field { base, index } => {
            let offset = layouts.field_offset(ty_of(base), *index) as u32;
            let read = ReadKind::of(layouts, ty);
            match &done[base.index()] {
                Node::InputRecord => Node::Input { offset, read },
                Node::Input { offset: base_offset, .. } => Node::Input { offset: base_offset + offset, read },
                _ => Node::Field { base: base.0, offset, read },
            }
        }
        ExprKind::Let(l) => Node::Let(l.0),
        ExprKind::RuleFired(r) => Node::Rule(r.0),
        ExprKind::Local(l) => Node::Local(l.0),
        ExprKind::List(items) => Node::List { items: ids(items) },
        ExprKind::Unary { op, arg } => Node::Unary(*op, arg.0),
        ExprKind::Binary { op, lhs, rhs } => Node::Binary(*op, lhs.0, rhs.0),
        ExprKind::Compare { op, lhs, rhs } => {
            Node::Compare { op: *op, kind: cmp_kind(contract, ty_of(lhs)), lhs: lhs.0, rhs: rhs.0 }
        }
        ExprKind::And { lhs, rhs } => Node::And(lhs.0, rhs.0),
        ExprKind::Or { lhs, rhs } => Node::Or(lhs.0, rhs.0),
        ExprKind::Cond { cond, then, otherwise } => Node::Cond(cond.0, then.0, otherwise.0),
        ExprKind::Coalesce { value, default } => Node::Coalesce(value.0, default.0),
        ExprKind::Present(value) => Node::Present(value.0),
        ExprKind::TableGet { table, key } => {
            Node::TableGet { table: table.0, key: key.0, int_key: contract.expr(*key).ty == TypeTable::INT }
        }
        ExprKind::TableHas { table, key } => Node::TableHas { table: table.0, key: key.0 },
        ExprKind::Index { list, index } => Node::Index { list: list.0, index: index.0, element: ty },
        ExprKind::InList { item, list } => Node::InList {
            item: item.0,
            list: list.0,
            kind: cmp_kind(contract, ty_of(item)),
            element: contract.types.list_element(ty_of(list)).unwrap_or(ty),
        },
        ExprKind::Call { func, args } => {
            Node::Call { func: *func, args: ids(args), extremum_of: extremum_of(contract, *func, args) }
        }
        ExprKind::Matches { subject, regex } => Node::Matches { subject: subject.0, regex: regex.0 },
        ExprKind::Lambda { kind, list, param, body } => {
            let add = BinaryOp::add_for(ty);
            Node::Lambda { kind: *kind, list: list.0, param: param.0, body: body.0, add }
        }
        ExprKind::Extern { func, args } => Node::Extern { func: func.0, args: ids(args) },
        ExprKind::Window { window, aggregate } => Node::Window { window: window.0, aggregate: *aggregate },
        ExprKind::Score { model, features } => {
            Node::Score { model: model.0, features: features.0, site: None }
        }
    }
}

/// Whether a layout shape is a record (its values are views, not slots).
pub fn is_record(layouts: &Layouts, ty: TypeId) -> bool {
    matches!(layouts.of(ty).shape, Shape::Record { .. })
}
