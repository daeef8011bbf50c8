//! The contract's `tests:`: inputs and expectations, read by their
//! declared types and stored in the IR so `rulec test` can run bundles.

use std::collections::HashMap;

use super::Checker;
use crate::ast::{self, Ident};
use crate::codes;
use crate::diagnostic::Diagnostic;

impl Checker<'_> {
    pub(super) fn cases(&mut self) {
        let mut seen = HashMap::new();
        for test in &self.ast.tests {
            if let Some(first) = seen.insert(test.name.value.clone(), test.name.span) {
                self.duplicate(&test.name, first, "test");
                continue;
            }
            if let Some(case) = self.case(test) {
                self.tests.push(case);
            }
        }
    }

    fn case(&mut self, test: &ast::TestDecl) -> Option<ir::TestCase> {
        let channel = self.test_channel(test);
        let component = match &test.component {
            Some(c) => self.test_component(c).map(Some),
            None => Some(None),
        };
        let now = match &test.now {
            Some(text) => match ir::time::parse_timestamp(&text.value) {
                Ok(nanos) => Some(Some(nanos)),
                Err(message) => {
                    self.error(
                        Diagnostic::error(codes::BAD_LITERAL, text.span, message)
                            .label("expected an RFC 3339 timestamp"),
                    );
                    None
                }
            },
            None => Some(None),
        };
        let input = test.input.as_ref().and_then(|node| self.yaml_value(node, self.input));
        let history: Option<Vec<_>> = test
            .history
            .iter()
            .map(|node| self.yaml_value(node, self.input).map(|v| v.to_json(&self.types, self.input)))
            .collect();
        let expect = self.expectation(&test.expect);
        Some(ir::TestCase {
            name: test.name.value.clone(),
            channel: channel?,
            component: component?,
            now: now?,
            history: history?,
            input: input?.to_json(&self.types, self.input),
            expect: expect?,
        })
    }

    fn test_channel(&mut self, test: &ast::TestDecl) -> Option<Option<String>> {
        match (&test.channel, self.channels.is_empty()) {
            (None, true) => Some(None),
            (None, false) => {
                self.error(
                    Diagnostic::error(
                        codes::BAD_TEST,
                        test.name.span,
                        format!("the test `{}` needs a `channel`", test.name.value),
                    )
                    .label("no channel")
                    .with_help(format!("the contract declares channels: {}", self.channels.join(", "))),
                );
                None
            }
            (Some(channel), _) => self.channel(channel).map(|_| Some(channel.value.clone())),
        }
    }

    fn test_component(&mut self, name: &Ident) -> Option<String> {
        if self.components.contains(&name.value) {
            return Some(name.value.clone());
        }
        self.error(
            Diagnostic::error(
                codes::UNDECLARED_COMPONENT,
                name.span,
                format!("the component `{}` is not declared", name.value),
            )
            .label("not under `components`")
            .suggest(&name.value, self.components.iter().map(String::as_str)),
        );
        None
    }

    fn expectation(&mut self, expect: &ast::ExpectDecl) -> Option<ir::TestExpect> {
        let decision = match &expect.decision {
            Some(_) => Some(self.setting(&expect.decision, "decision", &ir::Verdict::ALL, |v| v.name())?),
            None => None,
        };
        let reasons = self.rule_ids(&expect.reasons, false);
        let reasons = reasons.filter(|_| self.reasons_have_verdicts(&expect.reasons));
        let errors = self.rule_ids(&expect.errors, true);
        let findings = self.finding_codes(&expect.findings);
        let effects = match &expect.effects {
            Some(node) => Some(self.expected_effects(node)?),
            None => None,
        };
        Some(ir::TestExpect { decision, reasons: reasons?, findings: findings?, effects, errors: errors? })
    }

    /// Rule ids (and let names when `lets_too`) named by an expectation.
    fn rule_ids(&mut self, ids: &Option<Vec<Ident>>, lets_too: bool) -> Option<Option<Vec<String>>> {
        let Some(ids) = ids else { return Some(None) };
        let mut ok = true;
        for id in ids {
            let known = self.rule_names.contains_key(&id.value)
                || (lets_too && self.let_names.contains_key(&id.value));
            if !known {
                let candidates: Vec<&str> = self.ast.rules.iter().map(|r| r.id.value.as_str()).collect();
                self.error(
                    Diagnostic::error(codes::BAD_TEST, id.span, format!("no rule `{}`", id.value))
                        .label("not a rule id")
                        .suggest(&id.value, candidates),
                );
                ok = false;
            }
        }
        ok.then(|| Some(ids.iter().map(|i| i.value.clone()).collect()))
    }

    /// Reports expected reasons that are rules without `deny` or `allow`.
    fn reasons_have_verdicts(&mut self, reasons: &Option<Vec<Ident>>) -> bool {
        let mut ok = true;
        for id in reasons.iter().flatten() {
            let rule = self.ast.rules.iter().find(|r| r.id.value == id.value);
            if let Some(rule) = rule
                && rule.deny.is_none()
                && rule.allow.is_none()
            {
                self.error(
                    Diagnostic::error(codes::BAD_TEST, id.span, format!("the rule `{}` has no `deny` or `allow`, so it is never a reason", id.value))
                        .label("never a reason")
                        .with_help("reasons are the deny or allow rules that decided; findings are listed under `findings`"),
                );
                ok = false;
            }
        }
        ok
    }

    fn finding_codes(&mut self, codes_written: &Option<Vec<Ident>>) -> Option<Option<Vec<String>>> {
        let Some(written) = codes_written else { return Some(None) };
        let known: Vec<String> =
            self.rules.iter().filter_map(|r| r.finding.as_ref().map(|f| f.code.clone())).collect();
        let mut ok = true;
        for code in written {
            if !known.contains(&code.value) {
                self.error(
                    Diagnostic::error(
                        codes::BAD_TEST,
                        code.span,
                        format!("no rule has the finding code `{}`", code.value),
                    )
                    .label("unknown finding code")
                    .suggest(&code.value, known.iter().map(String::as_str)),
                );
                ok = false;
            }
        }
        ok.then(|| Some(written.iter().map(|c| c.value.clone()).collect()))
    }

    fn expected_effects(&mut self, node: &crate::tree::Node) -> Option<serde_json::Value> {
        let Some(entries) = node.as_map() else {
            if node.is_null() {
                return Some(serde_json::Value::Object(Default::default()));
            }
            self.error(
                Diagnostic::error(
                    codes::WRONG_SHAPE,
                    node.span,
                    format!("`expect.effects` must be a mapping, found {}", node.kind_name()),
                )
                .label("expected a mapping of effect names to values"),
            );
            return None;
        };
        let mut object = serde_json::Map::new();
        let mut ok = true;
        for (key, value) in entries {
            let name = key.text().unwrap_or_default();
            let Some(effect) = self.effects.iter().find(|e| e.name == name).cloned() else {
                let known: Vec<String> = self.effects.iter().map(|e| e.name.clone()).collect();
                self.error(
                    Diagnostic::error(
                        codes::UNDECLARED_EFFECT,
                        key.span,
                        format!("the effect `{name}` is not declared"),
                    )
                    .label("not under `effects`")
                    .suggest(name, known.iter().map(String::as_str)),
                );
                ok = false;
                continue;
            };
            match self.yaml_value(value, effect.ty) {
                Some(v) => {
                    object.insert(name.to_string(), v.to_json(&self.types, effect.ty));
                }
                None => ok = false,
            }
        }
        ok.then_some(serde_json::Value::Object(object))
    }
}
