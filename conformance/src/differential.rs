//! The differential generator: random well-typed contracts and inputs,
//! evaluated by the interpreter, by native code alone and by native
//! code's batch entry over all of a contract's requests, whose outputs must be
//! the same bytes.
//!
//! Contracts are generated as YAML text over a fixed input schema, with
//! expressions drawn type by type (every type and most built-ins), lets,
//! rule cascades, messages, effects under every combine policy, and error
//! paths (division by zero, overflow, missing keys, failed conversions).
//! Inputs mix ordinary and edge values. About one contract in five also
//! declares windows, read by its rules, lets and messages, and is evaluated
//! over a stream of records in event-time order (several keys, some late
//! records), each engine with window state of its own: the `windows`
//! module generates both. About one in five declares models, scored by
//! its lets, rules and messages (the `models` module, which also writes
//! the model files), which batch evaluation scores once per chunk. [`run`]
//! compares the engines. Everything is driven by a seed, so a mismatch is
//! reproduced by its seed alone.

mod models;
mod run;
mod windows;

use std::fmt::Write as _;

pub use models::{ModelFolder, modelled};
pub use run::{Tally, run};
pub use windows::{stream, windowed};

/// A small, fast, deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// The value types expressions are drawn from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Bool,
    Int,
    Dec,
    Float,
    Str,
    Time,
    Dur,
}

/// Every type, for picks.
const TYPES: [Ty; 7] = [Ty::Bool, Ty::Int, Ty::Dec, Ty::Float, Ty::Str, Ty::Time, Ty::Dur];

const SCHEMA: &str = "input:
  i: int
  j: int
  d: decimal
  e: decimal
  f: float
  s: string
  t: { enum: [red, green, blue] }
  b: bool
  o: int?
  xs: list<int>
  ds: list<decimal>
  ss: list<string>
  fs: list<float>
  at: timestamp
  wait: duration
  r: { a: int, s: string, d: decimal }
";

const TABLES: &str = "tables:
  rate:
    key: string
    value: decimal
    rows: { red: 1.5, green: 0.25, blue: 2, x: -3.125 }
  bonus:
    key: int
    value: { n: int, d: decimal }
    rows:
      0: { n: 1, d: 0.5 }
      1: { n: -7, d: 10.00 }
      5: { n: 100, d: -0.001 }
  names:
    set: string
    rows: [ann, bo, \"\", Zoë, x]
";

/// Generates the contract for `seed`: its YAML text.
pub fn contract(seed: u64) -> String {
    let mut g = Gen {
        rng: Rng::new(seed),
        rules: 0,
        lets: Vec::new(),
        aggregates: Vec::new(),
        models: Vec::new(),
        depth: 0,
    };
    let mut out = String::new();
    let decision = if g.rng.chance(30) { "first-match" } else { "deny-overrides" };
    let default = if g.rng.chance(50) { "allow" } else { "deny" };
    let on_error = if g.rng.chance(50) { "deny" } else { "skip" };
    let _ = writeln!(
        out,
        "contract: gen.c{seed}\nversion: 1.0.0\nchannels: [web, app]\ncomponents: [core, extra]\ndecision: {decision}\ndefault: {default}\non_error: {on_error}\n"
    );
    out.push_str(SCHEMA);
    out.push_str(TABLES);
    out.push_str("effects:\n  n: { type: int, combine: sum }\n  top: { type: decimal, combine: max }\n  low: { type: float, combine: min }\n  flag: { type: bool, combine: any }\n  every: { type: bool, combine: all }\n  last: string\n  at_last: int\n");
    if modelled(seed) {
        g.models(&mut out);
    }
    let count = g.rng.below(4);
    let mut lets = g.lets("v", count);
    if windowed(seed) {
        // Windows read the lets so far (none reads a window); the lets
        // after them may read windows.
        g.windows(&mut out);
        let count = 1 + g.rng.below(3);
        lets.push_str(&g.lets("u", count));
    }
    if !lets.is_empty() {
        out.push_str("let:\n");
        out.push_str(&lets);
    }
    out.push_str("rules:\n");
    let rules = 1 + g.rng.below(8);
    for k in 0..rules {
        g.rules = k;
        g.rule(k, &mut out);
    }
    out
}

/// A YAML scalar holding `text` exactly.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

struct Gen {
    rng: Rng,
    /// Rules before the current one (cascades refer to earlier rules only).
    rules: usize,
    lets: Vec<(String, Ty)>,
    /// The aggregates expressions may read, `windows.<w>.<a>`, with their
    /// types (none until the windows are declared).
    aggregates: Vec<(String, Ty)>,
    /// The models expressions may score, with their features.
    models: Vec<(String, usize)>,
    depth: usize,
}

impl Gen {
    /// `count` lets named `{prefix}0`, `{prefix}1`..., as YAML lines; each
    /// may read the lets before it.
    fn lets(&mut self, prefix: &str, count: usize) -> String {
        let mut out = String::new();
        for k in 0..count {
            let ty = self.rng.pick(&TYPES);
            let e = self.expr(ty);
            let _ = writeln!(out, "  {prefix}{k}: {}", quote(&e));
            self.lets.push((format!("{prefix}{k}"), ty));
        }
        out
    }

    fn rule(&mut self, k: usize, out: &mut String) {
        let _ = writeln!(out, "  - id: r{k}");
        if self.rng.chance(20) {
            let _ = writeln!(out, "    component: {}", self.rng.pick(&["core", "extra"]));
        }
        if self.rng.chance(15) {
            let _ = writeln!(out, "    channels: [{}]", self.rng.pick(&["web", "app"]));
        }
        let mut when = self.expr(Ty::Bool);
        if self.rng.chance(30) {
            when = format!("{} && ({when})", self.guard());
        }
        if let Some(guard) = self.window_guard() {
            when = format!("{guard} && ({when})");
        }
        if let Some(guard) = self.model_guard() {
            when = format!("{guard} || ({when})");
        }
        let _ = writeln!(out, "    when: {}", quote(&when));
        let mut outcome = false;
        if self.rng.chance(60) {
            let verdict = if self.rng.chance(60) { "deny" } else { "allow" };
            let _ = writeln!(out, "    {verdict}: {}", quote(&self.message()));
            outcome = true;
        }
        if self.rng.chance(40) {
            let _ = writeln!(
                out,
                "    finding: {{ code: C{k}, severity: info, message: {} }}",
                quote(&self.message())
            );
            outcome = true;
        }
        if self.rng.chance(50) || !outcome {
            out.push_str("    effects:\n");
            let effects: &[(&str, Ty)] = &[
                ("n", Ty::Int),
                ("top", Ty::Dec),
                ("low", Ty::Float),
                ("flag", Ty::Bool),
                ("every", Ty::Bool),
                ("last", Ty::Str),
                ("at_last", Ty::Int),
            ];
            let count = 1 + self.rng.below(3);
            let mut used = Vec::new();
            for _ in 0..count {
                let (name, ty) = self.rng.pick(effects);
                if used.contains(&name) {
                    continue;
                }
                used.push(name);
                let value = self.expr(ty);
                let _ = writeln!(out, "      {name}: {}", quote(&value));
            }
        }
    }

    /// A comparison of an input field with a constant, which native code's
    /// batch entry decides for two records at once (`backend::guards`).
    fn guard(&mut self) -> String {
        let (field, constants): (&str, &[&str]) = match self.rng.below(9) {
            0 => ("i", &["0", "-3", "7", "100"]),
            1 => ("r.a", &["0", "1", "-9223372036854775807"]),
            2 => ("d", &["0", "2.5", "-1.25", "100.005", "0.000000001"]),
            3 => ("e", &["0.00", "1", "-2.125", "7922816251426433759354395033.5"]),
            4 => ("r.d", &["0", "10.00", "-0.001"]),
            5 => ("f", &["0e0", "5e-1", "-1.25e0", "1e300"]),
            6 => ("at", &["timestamp(\"2025-12-31T23:59:59Z\")", "timestamp(\"1970-01-01T00:00:00Z\")"]),
            7 => ("wait", &["duration(\"24h\")", "duration(\"-90m\")", "duration(\"0s\")"]),
            _ => return self.rng.pick(&["b", "!b", "(b == false)", "(true != b)"]).to_string(),
        };
        let constant = self.rng.pick(constants);
        let op = self.cmp();
        if self.rng.chance(50) {
            format!("({field} {op} {constant})")
        } else {
            format!("({constant} {op} {field})")
        }
    }

    fn message(&mut self) -> String {
        let mut text = String::from(if self.rng.chance(20) { "m {{x}}" } else { "m" });
        for _ in 0..self.rng.below(3) {
            let ty = self.rng.pick(&TYPES);
            let e = self.expr(ty);
            let _ = write!(text, " {{{e}}} é");
        }
        if let Some(read) = self.window_mention() {
            let _ = write!(text, " {{{read}}}");
        }
        text
    }

    fn expr(&mut self, ty: Ty) -> String {
        self.depth += 1;
        let leaf = self.depth > 3 || self.rng.chance(35);
        let e = if leaf { self.leaf(ty) } else { self.node(ty) };
        self.depth -= 1;
        e
    }

    fn let_of(&mut self, ty: Ty) -> Option<String> {
        let candidates: Vec<String> =
            self.lets.iter().filter(|(_, t)| *t == ty).map(|(n, _)| n.clone()).collect();
        (!candidates.is_empty() && self.rng.chance(30))
            .then(|| candidates[self.rng.below(candidates.len())].clone())
    }

    fn leaf(&mut self, ty: Ty) -> String {
        if let Some(name) = self.let_of(ty) {
            return name;
        }
        if let Some(read) = self.window_read(ty) {
            return read;
        }
        if ty == Ty::Float
            && self.depth <= 5
            && let Some(score) = self.model_score()
        {
            return score;
        }
        let r = &mut self.rng;
        match ty {
            Ty::Bool => {
                r.pick(&["b", "true", "false", "has(o)", "(t == \"red\")", "(t != \"blue\")"]).to_string()
            }
            Ty::Int => r
                .pick(&[
                    "i",
                    "j",
                    "0",
                    "1",
                    "-3",
                    "9223372036854775807",
                    "r.a",
                    "len(xs)",
                    "days(wait)",
                    "(o ?? 4)",
                ])
                .to_string(),
            Ty::Dec => r
                .pick(&["d", "e", "0.00", "1.5", "-2.125", "r.d", "100", "7922816251426433759354395033.5"])
                .to_string(),
            Ty::Float => r.pick(&["f", "5e-1", "-1.25e0", "2.0e0", "1e300", "float(i)"]).to_string(),
            Ty::Str => r.pick(&["s", "string(t)", "r.s", "\"x\"", "\"Zoë\"", "\"\"", "' a B '"]).to_string(),
            Ty::Time => r.pick(&["at", "now()", "timestamp(\"2025-12-31T23:59:59Z\")"]).to_string(),
            Ty::Dur => {
                r.pick(&["wait", "duration(\"24h\")", "duration(\"-90m\")", "(now() - at)"]).to_string()
            }
        }
    }

    fn node(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Bool => self.bool_node(),
            Ty::Int => self.int_node(),
            Ty::Dec => self.dec_node(),
            Ty::Float => self.float_node(),
            Ty::Str => self.str_node(),
            Ty::Time => self.time_node(),
            Ty::Dur => self.dur_node(),
        }
    }

    fn bool_node(&mut self) -> String {
        match self.rng.below(23) {
            0 => format!("({} && {})", self.expr(Ty::Bool), self.expr(Ty::Bool)),
            1 => format!("({} || {})", self.expr(Ty::Bool), self.expr(Ty::Bool)),
            2 => format!("!{}", self.expr(Ty::Bool)),
            3 => format!("({} {} {})", self.expr(Ty::Int), self.cmp(), self.expr(Ty::Int)),
            4 => format!("({} {} {})", self.expr(Ty::Dec), self.cmp(), self.expr(Ty::Dec)),
            5 => format!("({} {} {})", self.expr(Ty::Float), self.cmp(), self.expr(Ty::Float)),
            6 => format!(
                "({} {} {})",
                self.expr(Ty::Str),
                self.rng.pick(&["==", "!=", "<", ">="]),
                self.expr(Ty::Str)
            ),
            7 => format!("({} in names)", self.expr(Ty::Str)),
            8 => format!("({} in rate)", self.expr(Ty::Str)),
            9 => format!("starts_with({}, {})", self.expr(Ty::Str), self.expr(Ty::Str)),
            10 if self.rules > 0 => format!("rules.r{}", self.rng.below(self.rules)),
            11 => format!("matches({}, \"^[a-z]+$\")", self.expr(Ty::Str)),
            12 => format!("any(xs, x => x > {})", self.expr(Ty::Int)),
            13 => format!("all(ds, x => x <= {})", self.expr(Ty::Dec)),
            14 => format!("({} {} {})", self.expr(Ty::Time), self.cmp(), self.expr(Ty::Time)),
            15 => format!("({} {} {})", self.expr(Ty::Dur), self.cmp(), self.expr(Ty::Dur)),
            16 => format!("ends_with({}, {})", self.expr(Ty::Str), self.expr(Ty::Str)),
            17 => format!("contains({}, {})", self.expr(Ty::Str), self.expr(Ty::Str)),
            18 => format!("({} not in names)", self.expr(Ty::Str)),
            19 => format!("({} in bonus)", self.expr(Ty::Int)),
            20 => "any(ss, x => matches(x, \"^(a|Z)\\\\w*$\"))".to_string(),
            21 => format!(
                "(xs {} [{}, {}])",
                self.rng.pick(&["==", "!="]),
                self.expr(Ty::Int),
                self.expr(Ty::Int)
            ),
            _ => format!("({} in [1, 2, {}])", self.expr(Ty::Int), self.expr(Ty::Int)),
        }
    }

    fn cmp(&mut self) -> &'static str {
        self.rng.pick(&["==", "!=", "<", "<=", ">", ">="])
    }

    fn int_node(&mut self) -> String {
        match self.rng.below(16) {
            0..=2 => format!(
                "({} {} {})",
                self.expr(Ty::Int),
                self.rng.pick(&["+", "-", "*", "/", "%"]),
                self.expr(Ty::Int)
            ),
            3 => format!("abs({})", self.expr(Ty::Int)),
            4 => format!("min({}, {})", self.expr(Ty::Int), self.expr(Ty::Int)),
            5 => format!("max({}, {})", self.expr(Ty::Int), self.expr(Ty::Int)),
            6 => format!("({} ? {} : {})", self.expr(Ty::Bool), self.expr(Ty::Int), self.expr(Ty::Int)),
            7 => format!("(bonus[{}].n ?? {})", self.expr(Ty::Int), self.expr(Ty::Int)),
            8 => format!("len({})", self.expr(Ty::Str)),
            9 => format!("(xs[{}] ?? {})", self.expr(Ty::Int), self.expr(Ty::Int)),
            10 => format!("count(xs, x => x > {})", self.expr(Ty::Int)),
            11 => format!("{}({})", self.rng.pick(&["days", "hours"]), self.expr(Ty::Dur)),
            12 => format!("sum(xs, x => x * {})", self.expr(Ty::Int)),
            13 => format!("-{}", self.expr(Ty::Int)),
            14 => format!("int({})", self.expr(Ty::Float)),
            _ => format!("int({})", self.expr(Ty::Dec)),
        }
    }

    fn dec_node(&mut self) -> String {
        match self.rng.below(16) {
            0..=2 => format!(
                "({} {} {})",
                self.expr(Ty::Dec),
                self.rng.pick(&["+", "-", "*", "/", "%"]),
                self.expr(Ty::Dec)
            ),
            3 => format!("round({}, {})", self.expr(Ty::Dec), self.rng.below(4)),
            4 => {
                let func = self.rng.pick(&["round_half_even", "round_half_down"]);
                format!("{func}({}, {})", self.expr(Ty::Dec), self.rng.below(3))
            }
            5 => format!("(rate[{}] ?? {})", self.expr(Ty::Str), self.expr(Ty::Dec)),
            6 => format!("max({}, {})", self.expr(Ty::Dec), self.expr(Ty::Dec)),
            7 => format!("({} + {})", self.expr(Ty::Dec), self.expr(Ty::Int)),
            8 => format!("abs({})", self.expr(Ty::Dec)),
            9 => format!("sum(ds, x => x * {})", self.expr(Ty::Dec)),
            10 => format!("{}({} + 0.0)", self.rng.pick(&["floor", "ceil"]), self.expr(Ty::Dec)),
            11 => format!("decimal({})", self.expr(Ty::Float)),
            12 => format!("(bonus[{}].d ?? {})", self.expr(Ty::Int), self.expr(Ty::Dec)),
            13 => format!("min({}, {})", self.expr(Ty::Dec), self.expr(Ty::Dec)),
            14 => format!("rate[{}]", self.expr(Ty::Str)),
            _ => format!("-{}", self.expr(Ty::Dec)),
        }
    }

    fn float_node(&mut self) -> String {
        match self.rng.below(10) {
            0..=2 => format!(
                "({} {} {})",
                self.expr(Ty::Float),
                self.rng.pick(&["+", "-", "*", "/"]),
                self.expr(Ty::Float)
            ),
            3 => format!("min({}, {})", self.expr(Ty::Float), self.expr(Ty::Float)),
            4 => format!("abs({})", self.expr(Ty::Float)),
            5 => format!(
                "{}(fs, [{}, 1e0, -2.5e0])",
                self.rng.pick(&["dot", "cosine", "l2"]),
                self.expr(Ty::Float)
            ),
            6 => format!("{}({})", self.rng.pick(&["floor", "ceil"]), self.expr(Ty::Float)),
            7 => format!("round({}, {})", self.expr(Ty::Float), self.rng.below(3)),
            8 => format!("sum(fs, x => x / {})", self.expr(Ty::Float)),
            _ => format!("float({})", self.expr(Ty::Dec)),
        }
    }

    fn time_node(&mut self) -> String {
        match self.rng.below(3) {
            0 => format!("({} + {})", self.expr(Ty::Time), self.expr(Ty::Dur)),
            1 => format!("({} - {})", self.expr(Ty::Time), self.expr(Ty::Dur)),
            _ => format!("({} ? {} : {})", self.expr(Ty::Bool), self.expr(Ty::Time), self.expr(Ty::Time)),
        }
    }

    fn dur_node(&mut self) -> String {
        match self.rng.below(4) {
            0 => format!("({} + {})", self.expr(Ty::Dur), self.expr(Ty::Dur)),
            1 => format!("({} - {})", self.expr(Ty::Dur), self.expr(Ty::Dur)),
            2 => format!("-{}", self.expr(Ty::Dur)),
            _ => format!("({} - {})", self.expr(Ty::Time), self.expr(Ty::Time)),
        }
    }

    fn str_node(&mut self) -> String {
        match self.rng.below(11) {
            0 => format!("lower({})", self.expr(Ty::Str)),
            5 => format!("upper({})", self.expr(Ty::Str)),
            6 => format!("trim({})", self.expr(Ty::Str)),
            7 => format!("string({})", self.expr(Ty::Dec)),
            8 => format!("string({})", self.expr(Ty::Float)),
            9 => format!("string({})", self.expr(Ty::Time)),
            1 => format!("({} + \"-\")", self.expr(Ty::Str)),
            2 => format!("({} ? {} : {})", self.expr(Ty::Bool), self.expr(Ty::Str), self.expr(Ty::Str)),
            3 => format!("string({})", self.expr(Ty::Int)),
            _ => format!("(ss[{}] ?? {})", self.expr(Ty::Int), self.expr(Ty::Str)),
        }
    }
}

/// A random request for the generated schema.
pub fn request(rng: &mut Rng) -> String {
    request_from(rng, &ORDINARY, "2026-02-03T04:05:06Z")
}

/// The JSON texts a request's scalars are drawn from, by type.
struct Pools {
    ints: &'static [&'static str],
    decimals: &'static [&'static str],
    floats: &'static [&'static str],
    texts: &'static [&'static str],
    bools: &'static [&'static str],
}

/// The values of requests to contracts without windows.
const ORDINARY: Pools = Pools {
    ints: &["0", "1", "-1", "7", "-42", "9223372036854775807", "-9223372036854775808", "3", "100"],
    decimals: &[
        "\"0\"",
        "\"1.50\"",
        "\"-2.125\"",
        "\"100.00\"",
        "\"0.001\"",
        "12.5",
        "\"79228162514264337593543950335\"",
        "\"3\"",
    ],
    floats: &["0.5", "-1.25", "0", "1e300", "3"],
    texts: &["\"ann\"", "\"Zoë\"", "\"\"", "\"red\"", "\"x\"", "\"ABC\"", "\"bo\""],
    bools: &["true", "false"],
};

/// A request drawn from `pools` whose event time `at` is given.
fn request_from(rng: &mut Rng, pools: &Pools, at: &str) -> String {
    let int = |r: &mut Rng| r.pick(pools.ints).to_string();
    let dec = |r: &mut Rng| r.pick(pools.decimals).to_string();
    let float = |r: &mut Rng| r.pick(pools.floats).to_string();
    let text = |r: &mut Rng| r.pick(pools.texts).to_string();
    let list = |r: &mut Rng, f: &dyn Fn(&mut Rng) -> String| -> String {
        let n = r.below(4);
        let items: Vec<String> = (0..n).map(|_| f(r)).collect();
        format!("[{}]", items.join(","))
    };
    let o = if rng.chance(40) { String::new() } else { format!(",\"o\":{}", int(rng)) };
    let channel = rng.pick(&["web", "app"]);
    let component = match rng.below(5) {
        0 => ",\"component\":\"core\"",
        1 => ",\"component\":\"extra\"",
        _ => "",
    };
    format!(
        "{{\"channel\":\"{channel}\"{component},\"now\":\"2026-01-01T00:00:00Z\",\"input\":{{\"i\":{},\"j\":{},\"d\":{},\"e\":{},\"f\":{},\"s\":{},\"t\":{},\"b\":{}{o},\"xs\":{},\"ds\":{},\"ss\":{},\"fs\":{},\"at\":\"{at}\",\"wait\":\"{}\",\"r\":{{\"a\":{},\"s\":{},\"d\":{}}}}}}}",
        int(rng),
        int(rng),
        dec(rng),
        dec(rng),
        float(rng),
        text(rng),
        rng.pick(&["\"red\"", "\"green\"", "\"blue\""]),
        rng.pick(pools.bools),
        list(rng, &int),
        list(rng, &dec),
        list(rng, &text),
        list(rng, &float),
        rng.pick(&["1h", "49h", "-3d", "0s"]),
        int(rng),
        text(rng),
        dec(rng),
    )
}

#[cfg(test)]
mod tests;
