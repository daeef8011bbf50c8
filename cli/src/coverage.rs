//! `rulec test --coverage`: what a contract's tests left untried. Rules
//! that never fired or fired in every test, the operands of a condition's
//! `&&`/`||` that were never true or never false, lets never read and
//! table rows never matched; each gap at its line in the contract's YAML.
//! As text for people, JSON for CI, lcov for coverage viewers.
//!
//! The interpreter records coverage (`runtime::engine::contract_tests::
//! cover`); native code reports which rules it fired, and the two must
//! agree test by test (a disagreement is a failure, as any engine
//! difference is in `rulec test`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use frontend::ast;
use runtime::engine::contract_tests::TestCoverage;
use serde_json::{Value, json};

use crate::written::{Written, leaves};

/// How the report is written.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
    Lcov,
}

/// One item a test can cover, with how often it was seen each way.
#[derive(Debug)]
struct Item {
    kind: &'static str,
    /// What it is, for people: `rule single_limit`, a condition's text.
    name: String,
    line: usize,
    /// Tests where it was true (fired, read, matched) and false.
    yes: usize,
    no: usize,
    /// Which gaps count: a rule or condition should be seen both ways, a
    /// let or a row at least once.
    both_ways: bool,
}

impl Item {
    fn gap(&self) -> Option<String> {
        let what = &self.name;
        match (self.kind, self.yes, self.no) {
            ("rule", 0, _) => Some(format!("{what} never fired")),
            ("rule", _, 0) => Some(format!("{what} fired in every test that reached it")),
            ("condition", 0, 0) => Some(format!("{what} was never evaluated: an earlier operand decided")),
            ("condition", 0, _) => Some(format!("{what} was never true")),
            ("condition", _, 0) => Some(format!("{what} was never false")),
            ("let", 0, _) => Some(format!("{what} was never read")),
            ("row", 0, _) => Some(format!("{what} was never matched")),
            _ => None,
        }
    }
}

/// The coverage of one contract's tests.
pub struct Report {
    contract: String,
    file: PathBuf,
    source: Option<String>,
    tests: usize,
    items: Vec<Item>,
    /// Tests where native code fired other rules than the interpreter.
    disagreements: Vec<String>,
    /// Tests whose fired rules native code reported (and agreed on).
    native: usize,
}

/// Builds the report of `contract`'s tests; `path` is the file it came
/// from (its YAML gives lines; a bundle gives none).
pub fn report(contract: &ir::Contract, path: &Path, tests: &[TestCoverage]) -> Report {
    let written = Written::read(path);
    let ast = written.as_ref().map(|w| &w.ast);
    let line = |span: frontend::Span| written.as_ref().map_or(0, |w| w.line(span));
    let mut items = Vec::new();
    let covered: Vec<&runtime::result::Coverage> = tests.iter().filter_map(|t| t.coverage.as_ref()).collect();
    let count = |f: &dyn Fn(&runtime::result::Coverage) -> Option<bool>| {
        covered.iter().fold((0, 0), |(y, n), c| match f(c) {
            Some(true) => (y + 1, n),
            Some(false) => (y, n + 1),
            None => (y, n),
        })
    };
    for (i, rule) in contract.rules.iter().enumerate() {
        let decl = written.as_ref().and_then(|w| w.rule(&rule.name));
        let (yes, no) = count(&|c| c.rules[i]);
        let at = decl.map_or(0, |d| line(d.id.span));
        items.push(Item {
            kind: "rule",
            name: format!("rule `{}`", rule.name),
            line: at,
            yes,
            no,
            both_ways: true,
        });
        // The operands, from a test that evaluated the rule.
        let operands =
            covered.iter().map(|c| &c.conditions[i][..]).find(|o| !o.is_empty()).unwrap_or_default();
        if operands.len() < 2 {
            continue;
        }
        let leaves = decl.and_then(|d| d.when.as_ref()).map(leaves).unwrap_or_default();
        for (k, (expr, _)) in operands.iter().enumerate() {
            let (text, at) = match leaves.get(k).filter(|_| leaves.len() == operands.len()) {
                Some(leaf) => {
                    (written.as_ref().map(|w| w.snippet(leaf.span)).unwrap_or_default(), line(leaf.span))
                }
                None => (ir::print::expr(contract, *expr), decl.map_or(0, |d| line(d.id.span))),
            };
            let (yes, no) = count(&|c| c.conditions[i].get(k).and_then(|(_, v)| *v));
            let name = format!("`{text}` in rule `{}`", rule.name);
            items.push(Item { kind: "condition", name, line: at, yes, no, both_ways: true });
        }
    }
    for (l, decl) in contract.lets.iter().enumerate() {
        if written.as_ref().is_some_and(|w| w.made_by_compiler(&decl.name)) {
            continue;
        }
        let declared = ast.and_then(|a| a.lets.iter().find(|x| x.name.value == decl.name));
        let (yes, _) = count(&|c| Some(c.lets[l]));
        let at = declared.map_or(0, |w| line(w.name.span));
        items.push(Item {
            kind: "let",
            name: format!("let `{}`", decl.name),
            line: at,
            yes,
            no: 0,
            both_ways: false,
        });
    }
    for (t, table) in contract.tables.iter().enumerate() {
        let rows = row_lines(ast, &table.name, &line);
        let keys: Vec<String> = match &table.kind {
            ir::TableKind::Map { rows, .. } => rows.iter().map(|(k, _)| k.to_string()).collect(),
            ir::TableKind::Set { rows, .. } => rows.iter().map(|k| k.to_string()).collect(),
        };
        for (r, key) in keys.iter().enumerate() {
            let matched = covered.iter().filter(|c| c.rows.contains(&(t as u32, r as u32))).count();
            let name = format!("row {key} of table `{}`", table.name);
            let at = rows.get(r).copied().unwrap_or(0);
            items.push(Item { kind: "row", name, line: at, yes: matched, no: 0, both_ways: false });
        }
    }
    let disagreements = tests
        .iter()
        .filter_map(|t| {
            let native = t.native_fired.as_ref()?;
            let interp: Vec<usize> = t
                .coverage
                .as_ref()?
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| **r == Some(true))
                .map(|(i, _)| i)
                .collect();
            (*native != interp).then(|| t.name.clone())
        })
        .collect();
    let native = tests.iter().filter(|t| t.native_fired.is_some()).count();
    Report {
        contract: contract.name.clone(),
        file: path.to_path_buf(),
        source: written.map(|w| w.text),
        tests: tests.len(),
        items,
        disagreements,
        native,
    }
}

/// The line of each row of table `name`, in file order.
fn row_lines(ast: Option<&ast::Contract>, name: &str, line: &dyn Fn(frontend::Span) -> usize) -> Vec<usize> {
    let Some(table) = ast.and_then(|a| a.tables.iter().find(|t| t.name.value == name)) else {
        return Vec::new();
    };
    match &table.kind {
        ast::TableDeclKind::Map { rows, .. } => rows.iter().map(|(k, _)| line(k.span)).collect(),
        ast::TableDeclKind::Set { rows, .. } => rows.iter().map(|r| line(r.span)).collect(),
        ast::TableDeclKind::Invalid => Vec::new(),
    }
}

impl Report {
    pub fn disagreements(&self) -> &[String] {
        &self.disagreements
    }

    /// The gaps, in file order.
    fn gaps(&self) -> Vec<(&Item, String)> {
        let mut gaps: Vec<(&Item, String)> =
            self.items.iter().filter_map(|i| i.gap().map(|gap| (i, gap))).collect();
        gaps.sort_by_key(|(item, _)| item.line);
        gaps
    }

    /// For people: a summary line, then each gap at its source line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let kinds = ["rule", "condition", "let", "row"];
        let summary: Vec<String> = kinds
            .iter()
            .filter(|k| self.items.iter().any(|i| i.kind == **k))
            .map(|k| {
                let all = self.items.iter().filter(|i| i.kind == *k);
                let done = all.clone().filter(|i| i.gap().is_none()).count();
                format!("{done}/{} {k}s", all.count())
            })
            .collect();
        let _ = writeln!(out, "coverage of {} ({} tests): {}", self.contract, self.tests, summary.join(", "));
        let agreed = self.native - self.disagreements.len();
        let _ =
            writeln!(out, "  native code fired the interpreter's rules in {agreed} of {} tests", self.tests);
        for (item, gap) in self.gaps() {
            let _ = writeln!(out, "  {}:{}: {gap}", self.file.display(), item.line);
            if let Some(text) = self.source.as_deref().and_then(|s| s.lines().nth(item.line.wrapping_sub(1)))
            {
                let _ = writeln!(out, "      {}", text.trim());
            }
        }
        for test in &self.disagreements {
            let _ = writeln!(
                out,
                "  engines differ: native code fired other rules than the interpreter in `{test}`"
            );
        }
        out
    }

    /// For CI: every item with its counts, and the gaps.
    pub fn json(&self) -> Value {
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|i| {
                let mut v = json!({ "kind": i.kind, "name": i.name, "line": i.line, "true": i.yes });
                if i.both_ways {
                    v["false"] = json!(i.no);
                }
                if let Some(gap) = i.gap() {
                    v["gap"] = json!(gap);
                }
                v
            })
            .collect();
        json!({
            "contract": self.contract,
            "file": self.file.display().to_string(),
            "tests": self.tests,
            "items": items,
            "gaps": self.gaps().len(),
            "native_checked": self.native,
            "engines_differ": self.disagreements,
        })
    }

    /// lcov: rules as functions (hit when fired), each condition as a
    /// branch pair (true, false), every item's line with its count.
    pub fn lcov(&self) -> String {
        let mut out = format!("TN:\nSF:{}\n", self.file.display());
        let rules: Vec<&Item> = self.items.iter().filter(|i| i.kind == "rule").collect();
        for rule in &rules {
            let _ = writeln!(out, "FN:{},{}", rule.line, rule.name);
            let _ = writeln!(out, "FNDA:{},{}", rule.yes, rule.name);
        }
        let _ = writeln!(out, "FNF:{}\nFNH:{}", rules.len(), rules.iter().filter(|r| r.yes > 0).count());
        let conditions: Vec<&Item> = self.items.iter().filter(|i| i.kind == "condition").collect();
        // lcov's `-`: the branch's block was never run (an operand that
        // short-circuit evaluation never reached), not run and not taken.
        for (block, c) in conditions.iter().enumerate() {
            let taken = |n: usize| if c.yes + c.no == 0 { "-".to_string() } else { n.to_string() };
            let _ = writeln!(out, "BRDA:{},{block},0,{}", c.line, taken(c.yes));
            let _ = writeln!(out, "BRDA:{},{block},1,{}", c.line, taken(c.no));
        }
        let taken = conditions.iter().map(|c| usize::from(c.yes > 0) + usize::from(c.no > 0)).sum::<usize>();
        let _ = writeln!(out, "BRF:{}\nBRH:{taken}", conditions.len() * 2);
        let mut lines: Vec<(usize, usize)> =
            self.items.iter().filter(|i| i.line > 0).map(|i| (i.line, i.yes)).collect();
        lines.sort_unstable();
        lines.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 = a.1.max(b.1);
            }
            same
        });
        for (line, count) in &lines {
            let _ = writeln!(out, "DA:{line},{count}");
        }
        let _ = writeln!(
            out,
            "LF:{}\nLH:{}\nend_of_record",
            lines.len(),
            lines.iter().filter(|(_, c)| *c > 0).count()
        );
        out
    }
}
