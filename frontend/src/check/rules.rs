//! Rules: conditions, verdicts, findings, effects and message templates.

use std::collections::HashMap;

use ir::{ChannelId, ComponentId, EffectId, TypeTable as T};

use super::Checker;
use crate::ast::{self, Ident};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::Span;

impl Checker<'_> {
    pub(super) fn rules(&mut self) {
        for rule in &self.ast.rules {
            if let Some(checked) = self.rule(rule) {
                self.rules.push(checked);
            } else {
                // Keep ids stable for `rules.<id>`; the contract has errors.
                self.rules.push(placeholder_rule(&rule.id.value));
            }
        }
    }

    fn rule(&mut self, rule: &ast::RuleDecl) -> Option<ir::Rule> {
        let component = rule.component.as_ref().map(|c| self.component(c));
        let channels = rule.channels.as_ref().map(|chs| self.rule_channels(chs, rule.span));
        let when = rule.when.as_ref().and_then(|w| self.condition(w));
        let verdict = self.verdict(rule);
        let finding = rule.finding.as_ref().map(|f| self.finding(f));
        let effects = self.rule_effects(rule);
        if !rule.has_outcome {
            self.error(
                Diagnostic::error(
                    codes::NO_OUTCOME,
                    rule.id.span,
                    format!("the rule `{}` has no outcome", rule.id.value),
                )
                .label("this rule can never matter")
                .with_help("give it a `deny`, `allow`, `finding` or `effects`"),
            );
            return None;
        }
        Some(ir::Rule {
            name: rule.id.value.clone(),
            component: component.map_or(Some(None), |c| c.map(Some))?,
            channels: channels.map_or(Some(None), |c| c.map(Some))?,
            when: when?,
            verdict: verdict?,
            finding: finding.map_or(Some(None), |f| f.map(Some))?,
            effects: effects?,
        })
    }

    fn component(&mut self, name: &Ident) -> Option<ComponentId> {
        if let Some(i) = self.components.iter().position(|c| *c == name.value) {
            return Some(ComponentId::from_index(i));
        }
        let d = Diagnostic::error(
            codes::UNDECLARED_COMPONENT,
            name.span,
            format!("the component `{}` is not declared", name.value),
        )
        .label("not under `components`")
        .suggest(&name.value, self.components.iter().map(String::as_str))
        .with_help(format!("declare it: `components: [{}]`", self.with_new(&self.components, &name.value)));
        self.error(d);
        None
    }

    /// A comma-separated list of the declared names plus one more.
    fn with_new(&self, names: &[String], new: &str) -> String {
        names.iter().map(String::as_str).chain([new]).collect::<Vec<_>>().join(", ")
    }

    pub(super) fn channel(&mut self, name: &Ident) -> Option<ChannelId> {
        if let Some(i) = self.channels.iter().position(|c| *c == name.value) {
            return Some(ChannelId::from_index(i));
        }
        let d = Diagnostic::error(
            codes::UNDECLARED_CHANNEL,
            name.span,
            format!("the channel `{}` is not declared", name.value),
        )
        .label("not under `channels`")
        .suggest(&name.value, self.channels.iter().map(String::as_str))
        .with_help(format!("declare it: `channels: [{}]`", self.with_new(&self.channels, &name.value)));
        self.error(d);
        None
    }

    fn rule_channels(&mut self, channels: &[Ident], rule_span: Span) -> Option<Vec<ChannelId>> {
        if channels.is_empty() {
            self.error(
                Diagnostic::error(
                    codes::UNDECLARED_CHANNEL,
                    rule_span,
                    "a rule's `channels` cannot be empty",
                )
                .label("this rule would never apply")
                .with_help("leave `channels` out to apply the rule on every channel"),
            );
            return None;
        }
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut ids = Vec::new();
        for channel in channels {
            if let Some(first) = seen.insert(&channel.value, channel.span) {
                self.duplicate(channel, first, "channel");
                return None;
            }
            ids.push(self.channel(channel));
        }
        ids.into_iter().collect()
    }

    fn condition(&mut self, when: &ast::Expr) -> Option<ir::ExprId> {
        let id = self.value(when)?;
        if self.ty(id) != T::BOOL {
            self.mismatch(when.span, T::BOOL, self.ty(id), "a rule's `when`");
            return None;
        }
        Some(id)
    }

    /// `Some(None)` when the rule has no verdict; `None` after an error.
    fn verdict(&mut self, rule: &ast::RuleDecl) -> Option<Option<ir::RuleVerdict>> {
        match (&rule.deny, &rule.allow) {
            (Some(deny), Some(allow)) => {
                self.error(
                    Diagnostic::error(
                        codes::CONFLICTING_VERDICT,
                        allow.span,
                        format!("the rule `{}` both denies and allows", rule.id.value),
                    )
                    .label("allow")
                    .with_label(deny.span, "deny")
                    .with_help("split it into two rules"),
                );
                None
            }
            (Some(message), None) => {
                Some(Some(ir::RuleVerdict { verdict: ir::Verdict::Deny, message: self.template(message)? }))
            }
            (None, Some(message)) => {
                Some(Some(ir::RuleVerdict { verdict: ir::Verdict::Allow, message: self.template(message)? }))
            }
            (None, None) => Some(None),
        }
    }

    fn finding(&mut self, finding: &ast::FindingDecl) -> Option<ir::Finding> {
        let code = finding.code.as_ref()?;
        let code_ok = ir::names::is_finding_code(&code.value);
        if !code_ok {
            self.error(
                Diagnostic::error(
                    codes::BAD_NAME,
                    code.span,
                    format!("`{}` is not a valid finding code", code.value),
                )
                .label("invalid code")
                .with_help("finding codes are upper-case letters, digits and `_`, e.g. `CROSS_BORDER`"),
            );
        }
        let severity = self.setting(&finding.severity, "severity", &ir::Severity::ALL, |s| s.name());
        let message = finding.message.as_ref().and_then(|m| self.template(m));
        Some(ir::Finding {
            code: code_ok.then(|| code.value.clone())?,
            severity: severity?,
            message: message?,
        })
    }

    fn rule_effects(&mut self, rule: &ast::RuleDecl) -> Option<Vec<ir::EffectAssign>> {
        let mut out = Vec::new();
        let mut ok = true;
        for (name, value) in &rule.effects {
            let Some(index) = self.effects.iter().position(|e| e.name == name.value) else {
                ok = false;
                if self.poisoned.contains(&name.value) {
                    continue;
                }
                let known: Vec<String> = self.effects.iter().map(|e| e.name.clone()).collect();
                self.error(
                    Diagnostic::error(
                        codes::UNDECLARED_EFFECT,
                        name.span,
                        format!("the effect `{}` is not declared", name.value),
                    )
                    .label("not under `effects`")
                    .suggest(&name.value, known.iter().map(String::as_str))
                    .with_help("declare it with its type under `effects:`"),
                );
                continue;
            };
            let Some(value) = value else {
                ok = false;
                continue;
            };
            let Some(id) = self.value(value) else {
                ok = false;
                continue;
            };
            let effect_ty = self.effects[index].ty;
            if self.enum_literal(effect_ty, id, value.span).is_none() {
                ok = false;
                continue;
            }
            match self.coerce(id, effect_ty) {
                Some(converted) if self.ty(converted) == effect_ty || self.types.is_stringy(effect_ty) => {
                    out.push(ir::EffectAssign { effect: EffectId::from_index(index), value: converted });
                }
                _ => {
                    let what = format!("the effect `{}`", name.value);
                    self.mismatch(value.span, effect_ty, self.ty(id), &what);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// Checks a message template's expressions.
    fn template(&mut self, template: &ast::Template) -> Option<ir::Template> {
        let mut parts = Vec::new();
        let mut ok = true;
        for part in &template.parts {
            match part {
                ast::TemplatePart::Text(text) => parts.push(ir::TemplatePart::Text(text.clone())),
                ast::TemplatePart::Expr(e) => match self.value(e) {
                    Some(id) if ir::expr::is_renderable(&self.types, self.ty(id)) => {
                        parts.push(ir::TemplatePart::Expr(id))
                    }
                    Some(id) => {
                        self.error(
                            Diagnostic::error(
                                codes::NOT_RENDERABLE,
                                e.span,
                                format!("a message cannot show {}", self.show(self.ty(id))),
                            )
                            .label("not a scalar or a list of scalars")
                            .with_help("show one of its fields instead"),
                        );
                        ok = false;
                    }
                    None => ok = false,
                },
            }
        }
        ok.then_some(ir::Template { parts })
    }
}

/// A rule standing in for one that failed to check.
fn placeholder_rule(name: &str) -> ir::Rule {
    ir::Rule {
        name: name.to_string(),
        component: None,
        channels: None,
        when: ir::ExprId(0),
        verdict: None,
        finding: None,
        effects: Vec::new(),
    }
}
