//! Expressions: a typed arena of nodes, children before parents.
//!
//! Every operator is resolved by the type checker to a monomorphic form
//! (`AddDecimal`, not `+`), and implicit conversions are explicit nodes
//! (`IntToDecimal`), so an engine never inspects a type to know what an
//! operator means. The typing rules of builtins live here, in
//! [`Builtin::result_type`], so the type checker and the verifier share them.

use crate::ids::{ExprId, ExternId, LetId, LocalId, ModelId, RegexId, RuleId, TableId, TypeId, WindowId};
use crate::types::{TypeKind, TypeTable};
use crate::value::Const;

/// One node of the expression arena.
#[derive(Clone, PartialEq, Debug)]
pub struct Expr {
    pub ty: TypeId,
    pub kind: ExprKind,
}

/// What an expression node computes.
#[derive(Clone, PartialEq, Debug)]
pub enum ExprKind {
    /// A literal or folded constant.
    Const(Const),
    /// The request's input record.
    Input,
    /// Field `index` of the record `base`.
    Field {
        base: ExprId,
        index: u32,
    },
    /// The value of a `let`.
    Let(LetId),
    /// Whether a rule fired (`rules.<id>`).
    RuleFired(RuleId),
    /// A lambda parameter.
    Local(LocalId),
    /// A list literal.
    List(Vec<ExprId>),
    Unary {
        op: UnaryOp,
        arg: ExprId,
    },
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// A comparison of two values of the same type (string and enum values
    /// compare as strings). Ordering needs an ordered type.
    Compare {
        op: CmpOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// Short-circuit `&&`.
    And {
        lhs: ExprId,
        rhs: ExprId,
    },
    /// Short-circuit `||`.
    Or {
        lhs: ExprId,
        rhs: ExprId,
    },
    /// `cond ? then : otherwise`.
    Cond {
        cond: ExprId,
        then: ExprId,
        otherwise: ExprId,
    },
    /// `value ?? default`: the default when `value` is an absent optional,
    /// or when evaluating `value` looks up a missing table key or a list
    /// index out of range (other errors pass through). `value` is
    /// optional, or contains a `TableGet` or `Index` outside any nested
    /// `Coalesce` (not counting lets, which are separate values).
    Coalesce {
        value: ExprId,
        default: ExprId,
    },
    /// `has(value)` on an optional `value`.
    Present(ExprId),
    /// `table[key]`; an absent key is a *missing* evaluation error, which
    /// an enclosing `Coalesce` catches.
    TableGet {
        table: TableId,
        key: ExprId,
    },
    /// `key in table`: a key of a keyed table or an element of a set.
    TableHas {
        table: TableId,
        key: ExprId,
    },
    /// `list[index]`; an index out of range is a *missing* evaluation
    /// error, which an enclosing `Coalesce` catches.
    Index {
        list: ExprId,
        index: ExprId,
    },
    /// `item in list`.
    InList {
        item: ExprId,
        list: ExprId,
    },
    /// A built-in function.
    Call {
        func: Builtin,
        args: Vec<ExprId>,
    },
    /// `matches(subject, "pattern")` with the contract's regex `regex`.
    Matches {
        subject: ExprId,
        regex: RegexId,
    },
    /// `any/all/count/sum(list, param => body)`.
    Lambda {
        kind: LambdaKind,
        list: ExprId,
        param: LocalId,
        body: ExprId,
    },
    /// A host function declared under `extern:`.
    Extern {
        func: ExternId,
        args: Vec<ExprId>,
    },
    /// `windows.<w>.<a>`: aggregate `aggregate` (its position in the
    /// window's list) of window `window`, over the record's window.
    Window {
        window: WindowId,
        aggregate: u32,
    },
    /// `score(model, features)`: the model's score of a `list<float>`.
    Score {
        model: ModelId,
        features: ExprId,
    },
}

impl ExprKind {
    /// The direct children of this node, in evaluation order.
    pub fn children(&self) -> Vec<ExprId> {
        let mut out = Vec::new();
        self.for_each_child(|child| out.push(child));
        out
    }

    /// Calls `f` on a mutable reference to each direct child id.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut ExprId)) {
        match self {
            ExprKind::Const(_)
            | ExprKind::Input
            | ExprKind::Let(_)
            | ExprKind::RuleFired(_)
            | ExprKind::Local(_)
            | ExprKind::Window { .. } => {}
            ExprKind::Field { base: a, .. }
            | ExprKind::Score { features: a, .. }
            | ExprKind::Present(a)
            | ExprKind::Unary { arg: a, .. }
            | ExprKind::TableHas { key: a, .. }
            | ExprKind::TableGet { key: a, .. }
            | ExprKind::Matches { subject: a, .. } => f(a),
            ExprKind::List(items)
            | ExprKind::Call { args: items, .. }
            | ExprKind::Extern { args: items, .. } => items.iter_mut().for_each(f),
            ExprKind::Binary { lhs: a, rhs: b, .. }
            | ExprKind::Compare { lhs: a, rhs: b, .. }
            | ExprKind::And { lhs: a, rhs: b }
            | ExprKind::Or { lhs: a, rhs: b }
            | ExprKind::Coalesce { value: a, default: b }
            | ExprKind::InList { item: a, list: b }
            | ExprKind::Index { list: a, index: b }
            | ExprKind::Lambda { list: a, body: b, .. } => {
                f(a);
                f(b);
            }
            ExprKind::Cond { cond, then, otherwise } => {
                f(cond);
                f(then);
                f(otherwise);
            }
        }
    }

    /// Calls `f` on each direct child, in evaluation order.
    pub fn for_each_child(&self, mut f: impl FnMut(ExprId)) {
        match self {
            ExprKind::Const(_)
            | ExprKind::Input
            | ExprKind::Let(_)
            | ExprKind::RuleFired(_)
            | ExprKind::Local(_)
            | ExprKind::Window { .. } => {}
            ExprKind::Field { base, .. } | ExprKind::Score { features: base, .. } => f(*base),
            ExprKind::Present(arg) | ExprKind::Unary { arg, .. } => f(*arg),
            ExprKind::List(items)
            | ExprKind::Call { args: items, .. }
            | ExprKind::Extern { args: items, .. } => items.iter().copied().for_each(f),
            ExprKind::Binary { lhs, rhs, .. }
            | ExprKind::Compare { lhs, rhs, .. }
            | ExprKind::And { lhs, rhs }
            | ExprKind::Or { lhs, rhs } => {
                f(*lhs);
                f(*rhs);
            }
            ExprKind::Cond { cond, then, otherwise } => {
                f(*cond);
                f(*then);
                f(*otherwise);
            }
            ExprKind::Coalesce { value, default } => {
                f(*value);
                f(*default);
            }
            ExprKind::TableGet { key, .. } | ExprKind::TableHas { key, .. } => f(*key),
            ExprKind::Index { list, index } => {
                f(*list);
                f(*index);
            }
            ExprKind::InList { item, list } => {
                f(*item);
                f(*list);
            }
            ExprKind::Matches { subject, .. } => f(*subject),
            ExprKind::Lambda { list, body, .. } => {
                f(*list);
                f(*body);
            }
        }
    }
}

/// Unary operators and implicit conversions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    Not,
    NegInt,
    NegDecimal,
    NegFloat,
    NegDuration,
    /// The implicit widening of an `int` to a `decimal`.
    IntToDecimal,
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 6] = [
        UnaryOp::Not,
        UnaryOp::NegInt,
        UnaryOp::NegDecimal,
        UnaryOp::NegFloat,
        UnaryOp::NegDuration,
        UnaryOp::IntToDecimal,
    ];

    /// `(operand, result)` types.
    pub fn signature(self) -> (TypeId, TypeId) {
        use TypeTable as T;
        match self {
            UnaryOp::Not => (T::BOOL, T::BOOL),
            UnaryOp::NegInt => (T::INT, T::INT),
            UnaryOp::NegDecimal => (T::DECIMAL, T::DECIMAL),
            UnaryOp::NegFloat => (T::FLOAT, T::FLOAT),
            UnaryOp::NegDuration => (T::DURATION, T::DURATION),
            UnaryOp::IntToDecimal => (T::INT, T::DECIMAL),
        }
    }

    /// The name used by the IR printer and the bundle.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Not => "not",
            UnaryOp::NegInt => "int.neg",
            UnaryOp::NegDecimal => "dec.neg",
            UnaryOp::NegFloat => "float.neg",
            UnaryOp::NegDuration => "duration.neg",
            UnaryOp::IntToDecimal => "int.to_dec",
        }
    }
}

/// Binary arithmetic operators, one per operand type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    AddInt,
    SubInt,
    MulInt,
    DivInt,
    RemInt,
    AddDecimal,
    SubDecimal,
    MulDecimal,
    DivDecimal,
    RemDecimal,
    AddFloat,
    SubFloat,
    MulFloat,
    DivFloat,
    RemFloat,
    /// String concatenation with `+`.
    Concat,
    AddDuration,
    SubDuration,
    /// `timestamp + duration`.
    AddTimestamp,
    /// `timestamp - duration`.
    SubTimestamp,
    /// `timestamp - timestamp`, a duration.
    DiffTimestamps,
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 21] = [
        BinaryOp::AddInt,
        BinaryOp::SubInt,
        BinaryOp::MulInt,
        BinaryOp::DivInt,
        BinaryOp::RemInt,
        BinaryOp::AddDecimal,
        BinaryOp::SubDecimal,
        BinaryOp::MulDecimal,
        BinaryOp::DivDecimal,
        BinaryOp::RemDecimal,
        BinaryOp::AddFloat,
        BinaryOp::SubFloat,
        BinaryOp::MulFloat,
        BinaryOp::DivFloat,
        BinaryOp::RemFloat,
        BinaryOp::Concat,
        BinaryOp::AddDuration,
        BinaryOp::SubDuration,
        BinaryOp::AddTimestamp,
        BinaryOp::SubTimestamp,
        BinaryOp::DiffTimestamps,
    ];

    /// The addition that `sum(...)` and an effect's `combine: sum` use on
    /// values of type `ty` (an int, decimal, float or duration; the
    /// checker allows no other): chosen here once for both engines.
    pub fn add_for(ty: TypeId) -> BinaryOp {
        match ty {
            TypeTable::DECIMAL => BinaryOp::AddDecimal,
            TypeTable::FLOAT => BinaryOp::AddFloat,
            TypeTable::DURATION => BinaryOp::AddDuration,
            _ => BinaryOp::AddInt,
        }
    }

    /// `(lhs, rhs, result)` types. `Concat` also takes enum operands.
    pub fn signature(self) -> (TypeId, TypeId, TypeId) {
        use BinaryOp::*;
        use TypeTable as T;
        match self {
            AddInt | SubInt | MulInt | DivInt | RemInt => (T::INT, T::INT, T::INT),
            AddDecimal | SubDecimal | MulDecimal | DivDecimal | RemDecimal => {
                (T::DECIMAL, T::DECIMAL, T::DECIMAL)
            }
            AddFloat | SubFloat | MulFloat | DivFloat | RemFloat => (T::FLOAT, T::FLOAT, T::FLOAT),
            Concat => (T::STRING, T::STRING, T::STRING),
            AddDuration | SubDuration => (T::DURATION, T::DURATION, T::DURATION),
            AddTimestamp | SubTimestamp => (T::TIMESTAMP, T::DURATION, T::TIMESTAMP),
            DiffTimestamps => (T::TIMESTAMP, T::TIMESTAMP, T::DURATION),
        }
    }

    /// The name used by the IR printer and the bundle.
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            AddInt => "int.add",
            SubInt => "int.sub",
            MulInt => "int.mul",
            DivInt => "int.div",
            RemInt => "int.rem",
            AddDecimal => "dec.add",
            SubDecimal => "dec.sub",
            MulDecimal => "dec.mul",
            DivDecimal => "dec.div",
            RemDecimal => "dec.rem",
            AddFloat => "float.add",
            SubFloat => "float.sub",
            MulFloat => "float.mul",
            DivFloat => "float.div",
            RemFloat => "float.rem",
            Concat => "str.concat",
            AddDuration => "duration.add",
            SubDuration => "duration.sub",
            AddTimestamp => "timestamp.add",
            SubTimestamp => "timestamp.sub",
            DiffTimestamps => "timestamp.diff",
        }
    }
}

/// Comparison operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

    /// Whether the operator needs an ordered type (`<`, `<=`, `>`, `>=`).
    pub fn is_ordering(self) -> bool {
        !matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    /// The operator as written in the contract language.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The name used by the IR printer and the bundle.
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }

    /// Whether `ordering` (of lhs against rhs) satisfies the operator.
    pub fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => ordering == Equal,
            CmpOp::Ne => ordering != Equal,
            CmpOp::Lt => ordering == Less,
            CmpOp::Le => ordering != Greater,
            CmpOp::Gt => ordering == Greater,
            CmpOp::Ge => ordering != Less,
        }
    }
}

/// The list functions that take a lambda.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum LambdaKind {
    Any,
    All,
    Count,
    Sum,
}

impl LambdaKind {
    pub const ALL: [LambdaKind; 4] = [LambdaKind::Any, LambdaKind::All, LambdaKind::Count, LambdaKind::Sum];

    pub fn name(self) -> &'static str {
        match self {
            LambdaKind::Any => "any",
            LambdaKind::All => "all",
            LambdaKind::Count => "count",
            LambdaKind::Sum => "sum",
        }
    }

    /// The node's type given the body's type, or why the body does not fit.
    pub fn result_type(self, body: TypeId) -> Result<TypeId, String> {
        match self {
            LambdaKind::Any | LambdaKind::All if body == TypeTable::BOOL => Ok(TypeTable::BOOL),
            LambdaKind::Count if body == TypeTable::BOOL => Ok(TypeTable::INT),
            LambdaKind::Any | LambdaKind::All | LambdaKind::Count => {
                Err(format!("the lambda of `{}` must return bool", self.name()))
            }
            LambdaKind::Sum
                if matches!(
                    body,
                    TypeTable::INT | TypeTable::DECIMAL | TypeTable::FLOAT | TypeTable::DURATION
                ) =>
            {
                Ok(body)
            }
            LambdaKind::Sum => Err("the lambda of `sum` must return int, decimal, float or duration".into()),
        }
    }
}

/// Built-in functions, other than the lambda ones and `matches`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Builtin {
    Abs,
    Min,
    Max,
    /// Half away from zero.
    Round,
    RoundHalfEven,
    /// `round_half_down(x, places)`: a midpoint goes toward zero.
    RoundHalfDown,
    Floor,
    Ceil,
    ToInt,
    ToDecimal,
    ToFloat,
    ToString,
    Len,
    Lower,
    Upper,
    Trim,
    StartsWith,
    EndsWith,
    Contains,
    Now,
    Days,
    Hours,
    ToTimestamp,
    ToDuration,
    Dot,
    Cosine,
    L2,
}

impl Builtin {
    pub const ALL: [Builtin; 27] = [
        Builtin::Abs,
        Builtin::Min,
        Builtin::Max,
        Builtin::Round,
        Builtin::RoundHalfEven,
        Builtin::RoundHalfDown,
        Builtin::Floor,
        Builtin::Ceil,
        Builtin::ToInt,
        Builtin::ToDecimal,
        Builtin::ToFloat,
        Builtin::ToString,
        Builtin::Len,
        Builtin::Lower,
        Builtin::Upper,
        Builtin::Trim,
        Builtin::StartsWith,
        Builtin::EndsWith,
        Builtin::Contains,
        Builtin::Now,
        Builtin::Days,
        Builtin::Hours,
        Builtin::ToTimestamp,
        Builtin::ToDuration,
        Builtin::Dot,
        Builtin::Cosine,
        Builtin::L2,
    ];

    /// The function's name in the contract language.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Abs => "abs",
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Round => "round",
            Builtin::RoundHalfEven => "round_half_even",
            Builtin::RoundHalfDown => "round_half_down",
            Builtin::Floor => "floor",
            Builtin::Ceil => "ceil",
            Builtin::ToInt => "int",
            Builtin::ToDecimal => "decimal",
            Builtin::ToFloat => "float",
            Builtin::ToString => "string",
            Builtin::Len => "len",
            Builtin::Lower => "lower",
            Builtin::Upper => "upper",
            Builtin::Trim => "trim",
            Builtin::StartsWith => "starts_with",
            Builtin::EndsWith => "ends_with",
            Builtin::Contains => "contains",
            Builtin::Now => "now",
            Builtin::Days => "days",
            Builtin::Hours => "hours",
            Builtin::ToTimestamp => "timestamp",
            Builtin::ToDuration => "duration",
            Builtin::Dot => "dot",
            Builtin::Cosine => "cosine",
            Builtin::L2 => "l2",
        }
    }

    /// The built-in called `name`.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }

    /// How the function is called, for error messages.
    pub fn usage(self) -> &'static str {
        match self {
            Builtin::Abs => "abs(x): int, decimal, float or duration",
            Builtin::Min => "min(a, b, ...): values of one ordered type",
            Builtin::Max => "max(a, b, ...): values of one ordered type",
            Builtin::Round => "round(x, places): decimal or float, int places",
            Builtin::RoundHalfEven => "round_half_even(x, places): decimal or float, int places",
            Builtin::RoundHalfDown => "round_half_down(x, places): decimal or float, int places",
            Builtin::Floor => "floor(x): decimal or float",
            Builtin::Ceil => "ceil(x): decimal or float",
            Builtin::ToInt => "int(x): int, decimal, float or string",
            Builtin::ToDecimal => "decimal(x): int, decimal, float or string",
            Builtin::ToFloat => "float(x): int, decimal, float or string",
            Builtin::ToString => "string(x): any value a message can show",
            Builtin::Len => "len(x): string or list",
            Builtin::Lower => "lower(s): string",
            Builtin::Upper => "upper(s): string",
            Builtin::Trim => "trim(s): string",
            Builtin::StartsWith => "starts_with(s, prefix): strings",
            Builtin::EndsWith => "ends_with(s, suffix): strings",
            Builtin::Contains => "contains(s, part): strings",
            Builtin::Now => "now(): no arguments",
            Builtin::Days => "days(d): duration, whole days",
            Builtin::Hours => "hours(d): duration, whole hours",
            Builtin::ToTimestamp => "timestamp(s): an RFC 3339 string",
            Builtin::ToDuration => "duration(s): a duration string such as \"24h\"",
            Builtin::Dot => "dot(a, b): list<float>",
            Builtin::Cosine => "cosine(a, b): list<float>",
            Builtin::L2 => "l2(a, b): list<float>",
        }
    }

    /// The fewest and most arguments the function takes (`None`: no limit).
    pub fn arity(self) -> (usize, Option<usize>) {
        match self {
            Builtin::Now => (0, Some(0)),
            Builtin::Min | Builtin::Max => (2, None),
            Builtin::Round
            | Builtin::RoundHalfEven
            | Builtin::RoundHalfDown
            | Builtin::StartsWith
            | Builtin::EndsWith
            | Builtin::Contains
            | Builtin::Dot
            | Builtin::Cosine
            | Builtin::L2 => (2, Some(2)),
            _ => (1, Some(1)),
        }
    }

    /// The result type for arguments of types `args`, or why they do not fit.
    ///
    /// Implicit widening is the caller's job: this sees the final types.
    pub fn result_type(self, types: &TypeTable, args: &[TypeId]) -> Result<TypeId, String> {
        use TypeTable as T;
        let (min, max) = self.arity();
        if args.len() < min || max.is_some_and(|max| args.len() > max) {
            let wanted = match max {
                Some(max) if max == min => format!("{min}"),
                _ => format!("at least {min}"),
            };
            return Err(format!("`{}` takes {wanted} argument(s), got {}", self.name(), args.len()));
        }
        let kind = |i: usize| types.get(args[i]);
        let wrong = || Err(format!("expected {}", self.usage()));
        match self {
            Builtin::Abs => match kind(0) {
                Some(TypeKind::Int | TypeKind::Decimal | TypeKind::Float | TypeKind::Duration) => Ok(args[0]),
                _ => wrong(),
            },
            Builtin::Min | Builtin::Max => {
                let first = args[0];
                let all_stringy = args.iter().all(|&a| types.get(a).is_some() && types.is_stringy(a));
                if all_stringy {
                    return Ok(if args.iter().all(|&a| a == first) { first } else { T::STRING });
                }
                if args.iter().all(|&a| a == first) && types.get(first).is_some() && types.is_ordered(first) {
                    Ok(first)
                } else {
                    wrong()
                }
            }
            Builtin::Round | Builtin::RoundHalfEven | Builtin::RoundHalfDown => match (args[0], args[1]) {
                (T::DECIMAL, T::INT) => Ok(T::DECIMAL),
                (T::FLOAT, T::INT) => Ok(T::FLOAT),
                _ => wrong(),
            },
            Builtin::Floor | Builtin::Ceil => match args[0] {
                T::DECIMAL | T::FLOAT => Ok(args[0]),
                _ => wrong(),
            },
            Builtin::ToInt | Builtin::ToDecimal | Builtin::ToFloat => {
                let numeric_or_string = matches!(
                    kind(0),
                    Some(
                        TypeKind::Int
                            | TypeKind::Decimal
                            | TypeKind::Float
                            | TypeKind::String
                            | TypeKind::Enum(_)
                    )
                );
                if !numeric_or_string {
                    return wrong();
                }
                Ok(match self {
                    Builtin::ToInt => T::INT,
                    Builtin::ToDecimal => T::DECIMAL,
                    _ => T::FLOAT,
                })
            }
            Builtin::ToString => {
                if is_renderable(types, args[0]) {
                    Ok(T::STRING)
                } else {
                    wrong()
                }
            }
            Builtin::Len => match kind(0) {
                Some(TypeKind::String | TypeKind::Enum(_) | TypeKind::List(_)) => Ok(T::INT),
                _ => wrong(),
            },
            Builtin::Lower | Builtin::Upper | Builtin::Trim => {
                if types.get(args[0]).is_some() && types.is_stringy(args[0]) {
                    Ok(T::STRING)
                } else {
                    wrong()
                }
            }
            Builtin::StartsWith | Builtin::EndsWith | Builtin::Contains => {
                let stringy = args.iter().all(|&a| types.get(a).is_some() && types.is_stringy(a));
                if stringy { Ok(T::BOOL) } else { wrong() }
            }
            Builtin::Now => Ok(T::TIMESTAMP),
            Builtin::Days | Builtin::Hours => {
                if args[0] == T::DURATION {
                    Ok(T::INT)
                } else {
                    wrong()
                }
            }
            Builtin::ToTimestamp | Builtin::ToDuration => {
                if types.get(args[0]).is_some() && types.is_stringy(args[0]) {
                    Ok(if self == Builtin::ToTimestamp { T::TIMESTAMP } else { T::DURATION })
                } else {
                    wrong()
                }
            }
            Builtin::Dot | Builtin::Cosine | Builtin::L2 => {
                let float_list = types.lookup(&TypeKind::List(T::FLOAT));
                if float_list.is_some() && args.iter().all(|&a| Some(a) == float_list) {
                    Ok(T::FLOAT)
                } else {
                    wrong()
                }
            }
        }
    }
}

/// Whether a message template or `string(x)` can show values of `ty`:
/// scalars and lists of them; not records, not optionals.
pub fn is_renderable(types: &TypeTable, ty: TypeId) -> bool {
    match types.get(ty) {
        Some(TypeKind::List(element)) => is_renderable(types, *element),
        Some(TypeKind::Record(_) | TypeKind::Optional(_)) | None => false,
        Some(_) => true,
    }
}
