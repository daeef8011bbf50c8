//! Where generated code keeps things in the state area, in 64-bit words.
//!
//! The area's flags come first: the fired bits, the decision, the
//! effects' presence words (with their values), the lets' and rules'
//! memo words. The runtime zeroes only those before each evaluation
//! (`NativeLayout::zeroed`), so every flag starts clear; the values after
//! them (message parts, lets' values, rules' effect values) are written
//! before they are read. A contract of 504 rules has thousands of words,
//! and zeroing them all cost more than a small evaluation. The public
//! part ([`NativeLayout`]) tells the runtime where results are; the rest
//! is private to the generated code.

use std::collections::HashMap;

use runtime::native::NativeLayout;
use runtime::program::Program;
use runtime::value::data::Tag;

use crate::guards::{Guard, guards};

/// A rule's memo word: not computed yet.
pub const RULE_TODO: i64 = 0;
/// Computed, and the condition is false.
pub const RULE_NOT_FIRED: i64 = 2;
/// Computed, the condition holds, messages and effect values are stored.
pub const RULE_FIRED: i64 = 3;

/// The addresses generated code reads by index
/// (`NativeProgram::addresses`): each table's first value slot, then every
/// string or list constant.
#[derive(Clone, Debug, Default)]
pub struct Addresses {
    pub words: Vec<u64>,
    /// Expression index to its constant's place in `words`.
    constants: HashMap<usize, usize>,
}

impl Addresses {
    pub fn new(program: &Program) -> Addresses {
        let mut words: Vec<u64> = program.tables.iter().map(|t| t.value_slots(0) as u64).collect();
        let mut constants = HashMap::new();
        for (i, slot) in program.constants() {
            if matches!(slot.tag(), Tag::Str | Tag::List) {
                constants.insert(i, words.len());
                words.push(slot.words().0);
            }
        }
        Addresses { words, constants }
    }

    /// The place of table `table`'s first value slot.
    pub fn table(&self, table: usize) -> usize {
        table
    }

    /// The place of the pointer of constant expression `expr`, if it has one.
    pub fn constant(&self, expr: usize) -> Option<usize> {
        self.constants.get(&expr).copied()
    }
}

/// The state area of one contract.
#[derive(Clone, Debug)]
pub struct Plan {
    pub layout: NativeLayout,
    /// Per let: its computed flag (1 present, 2 absent).
    pub lets: Vec<usize>,
    /// Per let: its value's two words.
    pub let_values: Vec<usize>,
    /// Per rule: the memo word.
    pub rules: Vec<usize>,
    /// Per rule, per effect it sets: the value's two words.
    pub rule_effects: Vec<Vec<usize>>,
    /// The rules' guards, and the word where the batch entry's vector
    /// pass leaves the bits of those definitely false (zero when a
    /// request is evaluated alone); no word when there are none.
    pub guards: Vec<Guard>,
    pub guard_word: Option<usize>,
    pub words: usize,
    pub addresses: Addresses,
    /// Whether let and rule functions compare the stack with the
    /// context's floor: only when their calls can nest deeper than
    /// [`UNCHECKED_CALL_DEPTH`].
    pub checks_stack: bool,
}

/// How deep let and rule functions may call each other without checking
/// the stack: no deeper than ordinary Rust calls, which rely on the guard
/// page. A chain of calls visits each such function at most once (the
/// verifier refuses cycles), so contracts with at most this many lets and
/// referenced rules need no check.
pub const UNCHECKED_CALL_DEPTH: usize = 32;

impl Plan {
    pub fn new(program: &Program) -> Plan {
        let c = &program.contract;
        let mut next = 0usize;
        let mut take = |n: usize| {
            let at = next;
            next += n;
            at
        };
        let fired = take(c.rules.len().div_ceil(64).max(1));
        let decided = take(1);
        let effects = c.effects.iter().map(|_| take(3)).collect();
        let lets = c.lets.iter().map(|_| take(1)).collect();
        let rules = c.rules.iter().map(|_| take(1)).collect();
        let guards = guards(program);
        let guard_word = (!guards.is_empty()).then(|| take(1));
        let zeroed = take(0);
        let parts = c
            .rules
            .iter()
            .map(|rule| {
                let templates =
                    rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
                templates.flat_map(ir::Template::exprs).map(|_| take(2)).collect()
            })
            .collect();
        let let_values = c.lets.iter().map(|_| take(2)).collect();
        let rule_effects =
            c.rules.iter().map(|rule| rule.effects.iter().map(|_| take(2)).collect()).collect();
        Plan {
            layout: NativeLayout { fired, decided, effects, parts, zeroed },
            lets,
            let_values,
            rules,
            rule_effects,
            guards,
            guard_word,
            words: next,
            addresses: Addresses::new(program),
            checks_stack: c.lets.len() + program.rules.iter().filter(|r| r.referenced()).count()
                > UNCHECKED_CALL_DEPTH,
        }
    }
}
