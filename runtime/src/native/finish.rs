//! Building the result from the state area native code left: the
//! decision, the reasons and findings whose messages are rendered only
//! when reported, and the effects.

use ir::{DecisionMode, TypeId, TypeTable, Verdict};

use crate::program::Program;
use crate::result::{Parts, ResultSink};
use crate::semantics;
use crate::value::{Schema, render, render_template_into};

use super::NativeProgram;
use super::words::{text, word_value};

thread_local! {
    /// The buffer [`finish`] renders messages in, kept between results.
    static MESSAGE: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// Gives the result native code left in the state area to `sink`: the
/// decision (decided as every engine decides, `result::decide`), then
/// the parts the sink asks for. A message is rendered only when it is
/// reported: a fired rule's verdict message when its verdict won, its
/// finding's when findings are asked for.
pub fn finish<'p>(
    program: &'p Program,
    native: &NativeProgram,
    state: &[u64],
    sink: &mut dyn ResultSink<'p>,
) {
    let c: &'p ir::Contract = &program.contract;
    let layout = &native.layout;
    let fired = || fired_rules(&state[layout.fired..], c.rules.len());
    let decided = match state[layout.decided] {
        0 => None,
        n => c.rules.get(n as usize - 1).and_then(|r| r.verdict.as_ref()).map(|v| v.verdict),
    };
    let verdicts = || fired().filter_map(|i| c.rules[i].verdict.as_ref().map(|v| v.verdict));
    let denied = verdicts().any(|v| v == Verdict::Deny);
    let allowed = verdicts().any(|v| v == Verdict::Allow);
    // Native code never fails closed: an error falls back to the
    // interpreter.
    let decided = decided.filter(|_| c.decision == DecisionMode::FirstMatch);
    let decision = crate::result::decide(c, decided, false, denied, allowed);
    sink.decision(&c.name, &c.version, decision);
    let parts = sink.parts();
    let schema = program.schema();
    // One buffer for every message of the thread's results.
    let mut text = MESSAGE.with(|cell| cell.take());
    let render = |template: &ir::Template, at: &[usize], text: &mut String| {
        text.clear();
        let mut at = at.iter();
        let _ = render_template_into(template, text, |id, out| {
            let word = at.next().copied().unwrap_or(0);
            render_words(program, &schema, c.expr(id).ty, (state[word], state[word + 1]), out);
            Ok::<(), std::convert::Infallible>(())
        });
    };
    if parts.has(Parts::FIRED) {
        fired().for_each(|i| sink.fired(i));
    }
    if parts.has(Parts::REASONS) {
        for i in fired() {
            let rule = &c.rules[i];
            if let Some(v) = rule.verdict.as_ref().filter(|v| v.verdict == decision) {
                render(&v.message, &layout.parts[i], &mut text);
                sink.reason(&rule.name, v.verdict, &text);
            }
        }
    }
    if parts.has(Parts::FINDINGS) {
        for i in fired() {
            let rule = &c.rules[i];
            if let Some(f) = &rule.finding {
                let skipped = rule.verdict.as_ref().map_or(0, |v| v.message.expr_count());
                render(&f.message, &layout.parts[i][skipped..], &mut text);
                sink.finding(&rule.name, &f.code, f.severity.name(), &text);
            }
        }
    }
    if parts.has(Parts::EFFECTS) {
        for (i, effect) in c.effects.iter().enumerate() {
            let at = layout.effects[i];
            if state[at] != 0 {
                let value = word_value(program, effect.ty, state[at + 1], state[at + 2]);
                sink.effect(&effect.name, &semantics::owned(&schema, effect.ty, &value));
            }
        }
    }
    MESSAGE.with(|cell| cell.set(text));
    sink.end();
}

/// Appends a message part of type `ty` kept in two words: ints, decimals,
/// bools and strings straight from the words, the rest through a value
/// and the renderer every engine uses.
fn render_words(program: &Program, schema: &Schema<'_>, ty: TypeId, (a, b): (u64, u64), out: &mut String) {
    match ty {
        TypeTable::INT => out.push_str(itoa::Buffer::new().format(a as i64)),
        TypeTable::DECIMAL => crate::value::decimal::write_words(a, b, out),
        TypeTable::BOOL => out.push_str(if a != 0 { "true" } else { "false" }),
        // SAFETY: a string's words point at text in the input, the
        // program's constants or the arena, all alive while the result is
        // built.
        _ if program.contract.types.is_stringy(ty) => out.push_str(unsafe { text(a as *const u8, b) }),
        _ => render(schema, ty, &word_value(program, ty, a, b), out),
    }
}

/// The rules whose bit is set in `bits` (one bit per rule, 64 per word),
/// in rule order.
fn fired_rules(bits: &[u64], rules: usize) -> impl Iterator<Item = usize> + '_ {
    bits.iter().take(rules.div_ceil(64)).enumerate().flat_map(|(word, &bits)| {
        let mut rest = bits;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                word * 64 + bit
            })
        })
    })
}
