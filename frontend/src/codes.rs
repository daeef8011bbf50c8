//! Every diagnostic code rulec emits, with its explanation.
//!
//! This list is the single source of `docs/errors.md`: a test regenerates
//! the file and fails when it is stale, and every code has a fixture
//! named after it: `tests/fixtures/err/E0400_*.yaml` for an error,
//! `tests/fixtures/warn/W0001_*.yaml` for a warning.

/// A diagnostic code: an index into [`ALL`], two bytes so diagnostics
/// stay small.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Code(u16);

/// What a code means.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CodeInfo {
    /// `E0400`, `W0001`.
    pub id: &'static str,
    /// A short title.
    pub title: &'static str,
    /// One or two sentences for `docs/errors.md`.
    pub explanation: &'static str,
}

impl Code {
    pub fn info(self) -> &'static CodeInfo {
        &ALL[self.0 as usize]
    }

    /// `E0400`, `W0001`.
    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// Whether the code is a warning (`W....`).
    pub fn is_warning(self) -> bool {
        self.id().starts_with('W')
    }
}

macro_rules! codes {
    ($($name:ident = $id:literal, $title:literal, $explanation:literal;)*) => {
        codes!(@consts 0u16; $($name)*);
        /// Every code, in order.
        pub const ALL: &[CodeInfo] = &[$(CodeInfo { id: $id, title: $title, explanation: $explanation }),*];
    };
    (@consts $n:expr; $name:ident $($rest:ident)*) => {
        pub const $name: Code = Code($n);
        codes!(@consts $n + 1; $($rest)*);
    };
    (@consts $n:expr;) => {};
}

codes! {
    YAML_SYNTAX = "E0001", "invalid YAML",
        "The file is not well-formed YAML. The message is the YAML parser's; the location is where it stopped. A character YAML does not allow (a NUL, another control character, U+FFFE or U+FFFF) is reported at its place.";
    YAML_ANCHOR = "E0002", "anchors and aliases are not allowed",
        "Contracts are read exactly as written: `&anchor` and `*alias` are refused so that no value is defined in one place and used in another.";
    YAML_TAG = "E0003", "tags are not allowed",
        "YAML tags such as `!!str` are not part of the language: a scalar's type comes from the declared type.";
    DUPLICATE_KEY = "E0004", "duplicate key",
        "A mapping has the same key twice. YAML parsers disagree on which one wins, so rulec refuses both.";
    TOO_DEEP = "E0005", "nesting too deep",
        "The document nests mappings and lists deeper than rulec allows (64 levels).";
    YAML_DOCUMENTS = "E0006", "not exactly one document",
        "A contract file holds one YAML document: it is empty, or it has several separated by `---`.";
    COMPLEX_KEY = "E0007", "a mapping key must be a plain value",
        "Keys of mappings are names or values, never lists or mappings.";
    FILE_TOO_LARGE = "E0008", "file too large",
        "The contract file is larger than rulec reads (64 MiB).";
    BUNDLE_TOO_LARGE = "E0009", "bundle too large",
        "The bundle the contract compiles to would be larger than a bundle loads (256 MiB). Model files take most of a large bundle: each is held in it as base64, a third larger than the file.";
    WRONG_SHAPE = "E0100", "wrong kind of YAML value",
        "A section expects a mapping, a list or a single value and got another kind.";
    UNKNOWN_KEY = "E0101", "unknown key",
        "The key is not part of this section of a contract; it is often a misspelling.";
    MISSING_KEY = "E0102", "missing key",
        "A required key is absent: a contract needs `contract`, `version`, `input` and `rules`; a rule needs `id` and `when`.";
    BAD_NAME = "E0103", "invalid name",
        "Ids (rules, lets, tables, effects, channels, components, externs) are `[a-z][a-z0-9_]*`; field names `[A-Za-z_][A-Za-z0-9_]*`; contract names dotted ids; finding codes `[A-Z][A-Z0-9_]*`.";
    BAD_VERSION = "E0104", "invalid version",
        "`version` must be a semantic version such as `1.0.0`.";
    DUPLICATE_ID = "E0105", "declared twice",
        "Two declarations share one name: rule ids, lets, tables, effects, channels, components, externs, fields and enum values are each unique.";
    BAD_OPTION = "E0106", "not one of the allowed values",
        "A setting takes one of a fixed set of values (`decision`, `default`, `on_error`, `severity`, `combine`, a test's `decision`).";
    UNDECLARED_CHANNEL = "E0107", "undeclared channel",
        "A rule or test names a channel that is not listed under `channels`.";
    UNDECLARED_COMPONENT = "E0108", "undeclared component",
        "A rule or test names a component that is not listed under `components`.";
    NO_OUTCOME = "E0109", "rule without an outcome",
        "A rule needs at least one of `deny`, `allow`, `finding` or `effects`, or it can never matter.";
    CONFLICTING_VERDICT = "E0110", "both deny and allow",
        "A rule has one verdict: either `deny` or `allow`.";
    UNDECLARED_EFFECT = "E0111", "undeclared effect",
        "A rule or test sets an effect that is not declared under `effects`.";
    TOO_MANY = "E0112", "too many declarations",
        "A contract may declare at most 64 channels.";
    BAD_TYPE = "E0200", "unknown or malformed type",
        "Types are `bool int decimal float string timestamp duration`, `list<T>`, `T?`, `{ enum: [...] }` or a nested mapping (a record).";
    VALUE_TYPE = "E0201", "value does not have the declared type",
        "A table row, a test input or an expected effect is not a value of its declared type. Scalars are read by that type from their text.";
    BAD_TABLE = "E0202", "invalid table",
        "A table is `{ key: K, value: V, rows: {...} }` or `{ set: T, rows: [...] }`; keys and set elements are `string`, `int` or an enum.";
    DUPLICATE_ROW = "E0203", "duplicate table key",
        "Two rows of a table have the same key (for example `1` and `01` in an int-keyed table).";
    BAD_COMBINE = "E0204", "combine policy does not fit the effect's type",
        "`max` and `min` need an ordered, non-string type; `sum` a number or duration; `any` and `all` a bool.";
    BAD_EXTERN = "E0205", "invalid extern signature",
        "An extern is declared as `name: \"(T1, T2) -> R\"` with language types.";
    EXPR_SYNTAX = "E0300", "expression syntax error",
        "The expression does not follow the grammar of LANGUAGE.md (operators, literals, calls, lambdas).";
    EXPR_LIMIT = "E0301", "expression too large",
        "An expression is longer than 64 KiB or more than 200 levels deep (each operation, parenthesis, call and list is a level).";
    BAD_LITERAL = "E0302", "invalid literal",
        "A literal cannot be read: an int beyond 64 bits, a decimal that does not fit exactly (96-bit mantissa, at most 28 places), a malformed duration or timestamp, or a bad escape in a string.";
    BAD_TEMPLATE = "E0303", "invalid message template",
        "Message templates interpolate `{expression}`; a literal brace is written `{{` or `}}`.";
    UNKNOWN_NAME = "E0400", "unknown name",
        "A name is not a lambda parameter, a let, an input field or a table.";
    UNKNOWN_FIELD = "E0401", "unknown field",
        "The record has no field of that name.";
    UNKNOWN_FUNCTION = "E0402", "unknown function",
        "The function is neither a built-in nor declared under `extern`.";
    UNKNOWN_RULE = "E0403", "unknown rule",
        "`rules.<id>` names a rule that does not exist.";
    SHADOWING = "E0404", "name already taken",
        "A let may not shadow an input field or a table, a table may not shadow an input field, and `rules`, `windows`, `true` and `false` are reserved.";
    CYCLE = "E0405", "cycle",
        "Lets and `rules.<id>` references depend on each other in a circle, so none of them can be computed first.";
    TABLE_AS_VALUE = "E0406", "a table is not a value",
        "A table is used through `table[key]` or `key in table`, never on its own.";
    TYPE_MISMATCH = "E0500", "mismatched types",
        "A value has a different type from the one its place requires.";
    BAD_OPERANDS = "E0501", "operator not defined for these types",
        "The operator does not apply to the operands' types, or nothing implicit converts between them.";
    DECIMAL_FLOAT_MIX = "E0502", "decimal and float mixed",
        "Money never silently becomes binary floating point: convert with `float(x)` or `decimal(x)`.";
    OPTIONAL_UNCHECKED = "E0503", "optional value used directly",
        "An optional (`T?`) is used through `x ?? default` or guarded by `has(x)`.";
    ENUM_VALUE = "E0504", "not a value of the enum",
        "A string literal is compared with, or given to, an enum that does not list it: the comparison could never hold.";
    ARITY = "E0505", "wrong number of arguments",
        "A function is called with too many or too few arguments.";
    BAD_REGEX = "E0506", "invalid regex",
        "The pattern of `matches` must be a string literal that compiles with the engine's limits: at most 4096 bytes, 64 levels of nesting and 256 KiB compiled (matching costs up to the compiled size per byte of the subject, so this bounds the slowest match).";
    NOT_OPTIONAL = "E0507", "value is never absent",
        "`??` needs an optional value, a table lookup or a list index on its left; `has` needs an optional value.";
    LAMBDA_MISUSE = "E0508", "lambda misplaced",
        "A lambda `x => expr` is only the last argument of `any`, `all`, `count` and `sum`, which need one.";
    NOT_RENDERABLE = "E0509", "value cannot be shown",
        "Messages and `string(x)` show scalars and lists of them, not records or optionals.";
    BAD_ARGUMENT = "E0510", "wrong argument types",
        "A built-in or extern function is called with arguments of types it does not take.";
    BAD_TEST = "E0600", "invalid test",
        "A test names a rule, finding code or channel that does not exist, or lacks something it needs.";
    UNKNOWN_WINDOW = "E0700", "unknown window or aggregate",
        "A window's aggregate is read as `windows.<window>.<aggregate>`, naming a window declared under `windows:` and one of its aggregates.";
    BAD_WINDOW = "E0701", "invalid window",
        "A window has a `key` (a string, int or enum expression), a `time` (a timestamp expression), a positive `span`, an optional `grace` that is not negative, and at least one aggregate.";
    BAD_AGGREGATE = "E0702", "invalid aggregate",
        "An aggregate is `count()`, `sum(x)` of an int, decimal or float, `distinct(x)` of a string, int, enum or bool, or `max(x)`/`min(x)` of an int, decimal, float, timestamp or duration.";
    WINDOW_READS_SIGNAL = "E0703", "a window reads a window or a rule",
        "A window's key, time and aggregates are computed before any rule, from input fields and lets that read neither windows nor rules.";
    UNKNOWN_MODEL = "E0704", "unknown model",
        "`score(model, features)` names a model declared under `models:`.";
    BAD_MODEL = "E0705", "invalid model",
        "A model has an `onnx` file (a path relative to the contract that can be read), a positive number of `features` and an `output` of `probability` or `value`.";
    FEATURE_COUNT = "E0706", "wrong number of features",
        "A list literal given to `score` has as many items as the model's `features`.";
    INTERNAL = "E0900", "internal compiler error",
        "The compiler produced IR its own verifier refused. This is a bug in rulec: please report it with the contract.";
    UNUSED_LET = "W0001", "unused let",
        "A let is never used by a rule, a message or another let.";
    UNUSED_TABLE = "W0002", "unused table",
        "A table is never looked up.";
}

/// The contents of `docs/errors.md`.
pub fn errors_markdown() -> String {
    let mut out = String::from(
        "# rulec diagnostic codes\n\n\
         Generated from `frontend/src/codes.rs` by `cargo test -p frontend` \
         (`RULEC_BLESS=1` rewrites it). Every code has a fixture named after it, \
         `frontend/tests/fixtures/err/<CODE>_*.yaml` for an error and \
         `frontend/tests/fixtures/warn/<CODE>_*.yaml` for a warning, \
         whose snapshot shows the message.\n",
    );
    for code in ALL {
        out.push_str(&format!("\n## {}: {}\n\n{}\n", code.id, code.title, code.explanation));
    }
    out
}
