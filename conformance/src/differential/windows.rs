//! Windows in the differential generator (SIGNALS.md): which contracts
//! declare them, their `windows:` section, the `windows.<w>.<a>` reads
//! expressions draw, and the stream of records a windowed contract is
//! evaluated over.
//!
//! A window's key (a string, int or enum), time and aggregate arguments
//! are input fields, small expressions or lets declared before the
//! windows, so none reads a window; lets declared after them, rules and
//! messages read the aggregates in expressions of the aggregate's type.
//! A stream's records share a few keys; their times mostly increase, some
//! are late or within the grace, some jump days ahead (so keys leave
//! their windows), and their values include sums that overflow.

use std::fmt::Write as _;

use super::{Gen, Pools, Rng, Ty, quote};

/// Whether the contract of `seed` declares windows: about one in five.
/// Drawn apart from the contract's own generator, so a contract without
/// windows is the one its seed gave before windows were generated.
pub fn windowed(seed: u64) -> bool {
    Rng::new(seed.rotate_left(32) ^ 0x5749_4E44_4F57_5321).chance(20)
}

/// Spans of windows: from a second (which a record's neighbours rarely
/// share) to a week (which only a jump of days leaves).
const SPANS: [&str; 8] = ["1s", "30s", "90s", "2m", "10m", "1h", "1d", "7d"];

/// Graces, `0s` the most common (as when `grace:` is left out).
const GRACES: [&str; 7] = ["0s", "0s", "0s", "5s", "1m", "30m", "2h"];

impl Gen {
    /// The `windows:` section: one to three windows, whose aggregates
    /// expressions may read from then on.
    pub(super) fn windows(&mut self, out: &mut String) {
        out.push_str("windows:\n");
        let mut reads = Vec::new();
        for w in 0..1 + self.rng.below(3) {
            reads.extend(self.window(w, out));
        }
        self.aggregates = reads;
    }

    /// Window `w{w}`'s declaration, and its aggregates' reads.
    fn window(&mut self, w: usize, out: &mut String) -> Vec<(String, Ty)> {
        let key = self.window_key();
        let time = self.window_time();
        let span = self.rng.pick(&SPANS);
        let _ =
            writeln!(out, "  w{w}:\n    key: {}\n    time: {}\n    span: {span}", quote(&key), quote(&time));
        if self.rng.chance(70) {
            let _ = writeln!(out, "    grace: {}", self.rng.pick(&GRACES));
        }
        out.push_str("    aggregates:\n");
        let mut reads = Vec::new();
        for a in 0..1 + self.rng.below(4) {
            let (kind, arg, ty) = self.aggregate();
            let _ = writeln!(out, "      {kind}{a}: {}", quote(&format!("{kind}({arg})")));
            reads.push((format!("windows.w{w}.{kind}{a}"), ty));
        }
        reads
    }

    /// A key: mostly an input field, else a let (which reads no window)
    /// or an expression, some of which fail.
    fn window_key(&mut self) -> String {
        let lets = self.lets_of(&[Ty::Int, Ty::Str]);
        match self.rng.below(10) {
            0..=5 => self.rng.pick(&["s", "r.s", "t", "i", "j", "r.a"]).to_string(),
            6 if !lets.is_empty() => lets[self.rng.below(lets.len())].clone(),
            6 | 7 => {
                let keys = ["lower(s)", "(i % 3)", "string(t)", "(o ?? 4)", "(i / j)", "(s + r.s)"];
                self.rng.pick(&keys).to_string()
            }
            _ => {
                let ty = self.rng.pick(&[Ty::Int, Ty::Str]);
                self.expr(ty)
            }
        }
    }

    /// A time: mostly `at`, else `at` moved by the record's own `wait`
    /// (which reorders records), a fixed shift, or a let.
    fn window_time(&mut self) -> String {
        let lets = self.lets_of(&[Ty::Time]);
        match self.rng.below(20) {
            0..=14 => "at".to_string(),
            15 | 16 => "(at + wait)".to_string(),
            17 => "(at - duration(\"90s\"))".to_string(),
            18 if !lets.is_empty() => lets[self.rng.below(lets.len())].clone(),
            _ => self.expr(Ty::Time),
        }
    }

    /// The names of the lets so far of one of `types`.
    fn lets_of(&self, types: &[Ty]) -> Vec<String> {
        self.lets.iter().filter(|(_, t)| types.contains(t)).map(|(n, _)| n.clone()).collect()
    }

    /// An aggregate: its kind, its argument and the type it reads as.
    fn aggregate(&mut self) -> (&'static str, String, Ty) {
        match self.rng.below(5) {
            0 => ("count", String::new(), Ty::Int),
            1 => {
                let ty = self.rng.pick(&[Ty::Int, Ty::Dec, Ty::Float]);
                ("sum", self.window_arg(ty), ty)
            }
            2 => {
                // The enum `t` among the strings, ints and bools.
                let arg = match self.rng.below(4) {
                    0 => "t".to_string(),
                    k => self.window_arg([Ty::Str, Ty::Int, Ty::Bool][k - 1]),
                };
                ("distinct", arg, Ty::Int)
            }
            k => {
                let ty = self.rng.pick(&[Ty::Int, Ty::Dec, Ty::Float, Ty::Time, Ty::Dur]);
                (if k == 3 { "max" } else { "min" }, self.window_arg(ty), ty)
            }
        }
    }

    /// An aggregate's argument of type `ty`: an input field, or any
    /// expression (which may fail, and may read the lets so far).
    fn window_arg(&mut self, ty: Ty) -> String {
        if self.rng.chance(40) {
            return self.expr(ty);
        }
        let fields: &[&str] = match ty {
            Ty::Int => &["i", "j", "r.a", "len(xs)", "(o ?? 4)"],
            Ty::Dec => &["d", "e", "r.d"],
            Ty::Float => &["f", "float(i)"],
            Ty::Time => &["at", "(at + wait)"],
            Ty::Dur => &["wait", "(now() - at)"],
            Ty::Str => &["s", "r.s", "string(t)"],
            Ty::Bool => &["b", "has(o)"],
        };
        self.rng.pick(fields).to_string()
    }

    /// Sometimes, a read of an aggregate of type `ty`.
    pub(super) fn window_read(&mut self, ty: Ty) -> Option<String> {
        let reads: Vec<&String> = self.aggregates.iter().filter(|(_, t)| *t == ty).map(|(r, _)| r).collect();
        (!reads.is_empty() && self.rng.chance(40)).then(|| reads[self.rng.below(reads.len())].clone())
    }

    /// Sometimes, a read of any aggregate, for a message.
    pub(super) fn window_mention(&mut self) -> Option<String> {
        (!self.aggregates.is_empty() && self.rng.chance(50))
            .then(|| self.aggregates[self.rng.below(self.aggregates.len())].0.clone())
    }

    /// Sometimes, a comparison of an aggregate, to put before a rule's
    /// condition: counts with small numbers, the others with an
    /// expression of their type.
    pub(super) fn window_guard(&mut self) -> Option<String> {
        if self.aggregates.is_empty() || !self.rng.chance(50) {
            return None;
        }
        let (read, ty) = self.aggregates[self.rng.below(self.aggregates.len())].clone();
        let op = self.cmp();
        let other =
            if ty == Ty::Int { self.rng.pick(&["1", "2", "3", "5"]).to_string() } else { self.expr(ty) };
        Some(format!("({read} {op} {other})"))
    }
}

/// A stream's values: few keys (`i`, `j`, `s`, `t`...), edge values that
/// make sums overflow (an int near `i64::MAX`, the largest decimal, a
/// float near `f64::MAX`).
const STREAM: Pools = Pools {
    ints: &["1", "7", "1", "-42", "9223372036854775807", "7", "-9223372036854775808"],
    decimals: &["\"1.50\"", "\"-2.125\"", "\"79228162514264337593543950335\"", "\"100.00\"", "12.5"],
    floats: &["0.5", "-1.25", "1e300", "1.7976931348623157e308", "3"],
    texts: &["\"ann\"", "\"bo\"", "\"Zoë\"", "\"ann\""],
    bools: &["true", "false"],
};

/// A stream's invalid record (a bool that is not one): it enters no
/// window.
const INVALID: Pools = Pools { bools: &["\"yes\""], ..STREAM };

/// The first event time of a stream, in nanoseconds.
const START: i64 = 1_770_091_506_000_000_000;

const SECOND: i64 = 1_000_000_000;

/// `len` request lines for a windowed contract, to evaluate in order.
pub fn stream(rng: &mut Rng, len: usize) -> Vec<String> {
    let mut clock = START;
    (0..len)
        .map(|_| {
            let at = ir::time::format_timestamp(next_time(rng, &mut clock));
            let pools = if rng.chance(3) { &INVALID } else { &STREAM };
            super::request_from(rng, pools, &at)
        })
        .collect()
}

/// The next record's time: mostly seconds after the latest so far (or the
/// same time), sometimes minutes or days after it, milliseconds after
/// it, or up to a quarter of an hour before it (late, or within the
/// grace), which does not move the clock; now and then far in the future
/// (up to the greatest timestamp, 2262), which does not move the clock
/// either, so the records after it are of the present again (SIGNALS.md:
/// a record far in the future of one key changes no other key's window).
fn next_time(rng: &mut Rng, clock: &mut i64) -> i64 {
    let step = match rng.below(100) {
        0..=58 => rng.below(91) as i64 * SECOND,
        59 => return i64::MAX - rng.below(1_000) as i64 * 86_400 * SECOND,
        60..=71 => return *clock - (1 + rng.below(900) as i64) * SECOND,
        72..=81 => (2 + rng.below(59) as i64) * 60 * SECOND,
        82..=89 => (1 + rng.below(30) as i64) * 86_400 * SECOND,
        _ => rng.below(1000) as i64 * 1_000_000,
    };
    *clock += step;
    *clock
}
