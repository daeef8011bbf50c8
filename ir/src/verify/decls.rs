//! The verifier's checks of declarations: the header, types, tables,
//! effects, externs, regexes, lets, rules and tests.

use std::collections::HashSet;

use crate::contract::{TableKind, Template, TestCase};
use crate::expr::is_renderable;
use crate::ids::TypeId;
use crate::limits::{MAX_CHANNELS, MAX_TYPE_DEPTH};
use crate::names;
use crate::types::{TypeKind, TypeTable};
use crate::value::Const;

use super::Verifier;

impl<'a> Verifier<'a> {
    pub(super) fn header(&mut self) {
        let c = self.c;
        if !names::is_contract_name(&c.name) {
            self.error("contract.name", format!("`{}` is not a dotted lower-case name", c.name));
        }
        if !names::is_semver(&c.version) {
            self.error("contract.version", format!("`{}` is not a semantic version", c.version));
        }
        if c.channels.len() > MAX_CHANNELS {
            self.error("channels", format!("{} channels; the limit is {MAX_CHANNELS}", c.channels.len()));
        }
        self.unique_identifiers("channels", c.channels.iter().map(String::as_str));
        self.unique_identifiers("components", c.components.iter().map(String::as_str));
    }

    pub(super) fn unique_identifiers<'n>(&mut self, what: &str, names_iter: impl Iterator<Item = &'n str>) {
        let mut seen = HashSet::new();
        for (i, name) in names_iter.enumerate() {
            if !names::is_identifier(name) {
                self.error(format!("{what}[{i}]"), format!("`{name}` is not an identifier"));
            }
            if !seen.insert(name) {
                self.error(format!("{what}[{i}]"), format!("`{name}` is declared twice"));
            }
        }
    }

    /// Checks the type table; returns whether later checks can index it.
    pub(super) fn types(&mut self) -> bool {
        let types = self.types_table();
        let primitives = [
            TypeKind::Bool,
            TypeKind::Int,
            TypeKind::Decimal,
            TypeKind::Float,
            TypeKind::String,
            TypeKind::Timestamp,
            TypeKind::Duration,
        ];
        for (i, kind) in primitives.iter().enumerate() {
            if types.get(TypeId::from_index(i)) != Some(kind) {
                self.error(format!("types[{i}]"), "the primitive types must come first, in order");
                return false;
            }
        }
        let mut depth = vec![0usize; types.len()];
        let before = self.errors.len();
        for (id, kind) in types.iter() {
            let path = format!("types[{}]", id.0);
            let children: Vec<TypeId> = match kind {
                TypeKind::List(t) | TypeKind::Optional(t) => vec![*t],
                TypeKind::Record(fields) => fields.iter().map(|f| f.ty).collect(),
                _ => vec![],
            };
            if let Some(bad) = children.iter().find(|t| t.0 >= id.0) {
                self.error(path, format!("refers to type #{} which does not come before it", bad.0));
                continue;
            }
            depth[id.index()] = 1 + children.iter().map(|t| depth[t.index()]).max().unwrap_or(0);
            if depth[id.index()] > MAX_TYPE_DEPTH {
                self.error(&path, format!("types nest deeper than {MAX_TYPE_DEPTH}"));
            }
            match kind {
                TypeKind::Optional(inner) if matches!(types.kind(*inner), TypeKind::Optional(_)) => {
                    self.error(&path, "an optional of an optional");
                }
                TypeKind::Optional(inner) if matches!(types.kind(*inner), TypeKind::Record(_)) => {
                    self.error(&path, "an optional record");
                }
                TypeKind::Record(fields) => {
                    let mut seen = HashSet::new();
                    for field in fields {
                        if !names::is_field_name(&field.name) || !seen.insert(&field.name) {
                            self.error(&path, format!("bad or repeated field name `{}`", field.name));
                        }
                    }
                }
                TypeKind::Enum(values) => {
                    let unique: HashSet<_> = values.iter().collect();
                    if values.is_empty() || unique.len() != values.len() {
                        self.error(&path, "an enum must list distinct values");
                    }
                }
                _ => {}
            }
        }
        if self.errors.len() > before {
            return false;
        }
        if !self.type_ok(self.c.input) || types.record_fields(self.c.input).is_none() {
            self.error("input", "the input type must be a record");
            return false;
        }
        true
    }

    pub(super) fn is_key_type(&self, ty: TypeId) -> bool {
        self.type_ok(ty)
            && matches!(self.c.types.kind(ty), TypeKind::String | TypeKind::Int | TypeKind::Enum(_))
    }

    pub(super) fn input_field_names(&self) -> Vec<&'a str> {
        self.c.types.record_fields(self.c.input).unwrap_or(&[]).iter().map(|f| f.name.as_str()).collect()
    }

    pub(super) fn tables(&mut self) {
        let c = self.c;
        self.unique_identifiers("tables", c.tables.iter().map(|t| t.name.as_str()));
        let fields = self.input_field_names();
        for (i, table) in c.tables.iter().enumerate() {
            let path = format!("tables[{i}] {}", table.name);
            if fields.contains(&table.name.as_str()) || names::RESERVED.contains(&table.name.as_str()) {
                self.error(&path, "the name is taken by an input field or reserved");
            }
            let key = table.kind.key_type();
            if !self.is_key_type(key) {
                self.error(&path, "keys must be string, int or an enum");
                continue;
            }
            let mut seen_keys = HashSet::new();
            let mut check_key = |v: &mut Self, row: usize, k: &'a Const| {
                if !k.has_type(&c.types, key) {
                    v.error(&path, format!("row {row}: key {k} is not a {}", c.types.display(key)));
                } else if !seen_keys.insert(k.table_key()) {
                    v.error(&path, format!("row {row}: key {k} appears twice"));
                }
            };
            match &table.kind {
                TableKind::Map { value, rows, .. } => {
                    if !self.type_ok(*value) || matches!(c.types.kind(*value), TypeKind::Optional(_)) {
                        self.error(&path, "the value type must exist and not be optional");
                        continue;
                    }
                    for (row, (k, v)) in rows.iter().enumerate() {
                        check_key(self, row, k);
                        if !v.has_type(&c.types, *value) {
                            self.error(
                                &path,
                                format!("row {row}: value {v} is not a {}", c.types.display(*value)),
                            );
                        }
                    }
                }
                TableKind::Set { rows, .. } => {
                    for (row, k) in rows.iter().enumerate() {
                        check_key(self, row, k);
                    }
                }
            }
        }
    }

    pub(super) fn effects(&mut self) {
        let c = self.c;
        self.unique_identifiers("effects", c.effects.iter().map(|e| e.name.as_str()));
        for (i, effect) in c.effects.iter().enumerate() {
            if !self.type_ok(effect.ty) || !effect.combine.fits(&c.types, effect.ty) {
                self.error(
                    format!("effects[{i}] {}", effect.name),
                    format!("combine `{}` does not fit the effect's type", effect.combine.name()),
                );
            }
        }
    }

    pub(super) fn externs(&mut self) {
        let c = self.c;
        self.unique_identifiers("externs", c.externs.iter().map(|e| e.name.as_str()));
        for (i, ext) in c.externs.iter().enumerate() {
            if !ext.params.iter().chain([&ext.ret]).all(|t| self.type_ok(*t)) {
                self.error(format!("externs[{i}] {}", ext.name), "refers to a type that does not exist");
            }
        }
    }

    pub(super) fn regexes(&mut self) {
        for (i, pattern) in self.c.regexes.iter().enumerate() {
            if let Err(message) = crate::pattern::check_syntax(pattern) {
                self.error(format!("regexes[{i}]"), message);
            }
        }
    }

    pub(super) fn lets(&mut self) {
        let c = self.c;
        self.unique_identifiers("lets", c.lets.iter().map(|l| l.name.as_str()));
        let fields = self.input_field_names();
        for (i, l) in c.lets.iter().enumerate() {
            let path = format!("lets[{i}] {}", l.name);
            let shadows = fields.contains(&l.name.as_str())
                || c.table_by_name(&l.name).is_some()
                || names::RESERVED.contains(&l.name.as_str());
            if shadows {
                self.error(&path, "a let may not shadow an input field or a table");
            }
            if !self.type_ok(l.ty) || !self.assignable(c.expr(l.value).ty, l.ty) {
                self.error(&path, "the value does not have the let's type");
            }
        }
    }

    pub(super) fn rules(&mut self) {
        let c = self.c;
        self.unique_identifiers("rules", c.rules.iter().map(|r| r.name.as_str()));
        for (i, rule) in c.rules.iter().enumerate() {
            let path = format!("rules[{i}] {}", rule.name);
            if c.expr(rule.when).ty != TypeTable::BOOL {
                self.error(&path, "the condition is not a bool");
            }
            if rule.verdict.is_none() && rule.finding.is_none() && rule.effects.is_empty() {
                self.error(&path, "the rule has no verdict, finding or effect");
            }
            if rule.component.is_some_and(|id| id.index() >= c.components.len()) {
                self.error(&path, "the component does not exist");
            }
            if let Some(channels) = &rule.channels {
                let unique: HashSet<_> = channels.iter().collect();
                if channels.is_empty()
                    || unique.len() != channels.len()
                    || channels.iter().any(|ch| ch.index() >= c.channels.len())
                {
                    self.error(&path, "the channels must be distinct declared channels");
                }
            }
            if let Some(finding) = &rule.finding
                && !names::is_finding_code(&finding.code)
            {
                self.error(&path, format!("`{}` is not a finding code", finding.code));
            }
            let mut set = HashSet::new();
            for assign in &rule.effects {
                match c.effects.get(assign.effect.index()) {
                    None => self.error(&path, format!("effect #{} does not exist", assign.effect.0)),
                    Some(effect) => {
                        if !set.insert(assign.effect) {
                            self.error(&path, format!("sets `{}` twice", effect.name));
                        }
                        if !self.assignable(c.expr(assign.value).ty, effect.ty) {
                            self.error(
                                &path,
                                format!("the value of `{}` does not have its type", effect.name),
                            );
                        }
                    }
                }
            }
            let templates =
                rule.verdict.iter().map(|v| &v.message).chain(rule.finding.iter().map(|f| &f.message));
            for id in templates.flat_map(Template::exprs) {
                if !is_renderable(&c.types, c.expr(id).ty) {
                    self.error(&path, "a message shows a value that cannot be rendered");
                }
            }
        }
    }

    pub(super) fn tests(&mut self) {
        for (i, test) in self.c.tests.iter().enumerate() {
            let path = format!("tests[{i}] {}", test.name);
            if let Err(message) = self.test(test) {
                self.error(path, message);
            }
        }
    }

    pub(super) fn test(&self, test: &TestCase) -> Result<(), String> {
        let c = self.c;
        match (&test.channel, c.channels.is_empty()) {
            (Some(ch), false) if c.channel_by_name(ch).is_none() => {
                return Err(format!("channel `{ch}` is not declared"));
            }
            (Some(_), true) => return Err("the contract declares no channels".into()),
            (None, false) => return Err("a channel is required".into()),
            _ => {}
        }
        if let Some(component) = &test.component
            && c.component_by_name(component).is_none()
        {
            return Err(format!("component `{component}` is not declared"));
        }
        Const::from_json(&c.types, c.input, &test.input).map_err(|e| format!("input{e}"))?;
        for (i, earlier) in test.history.iter().enumerate() {
            Const::from_json(&c.types, c.input, earlier).map_err(|e| format!("history[{i}]{e}"))?;
        }
        let expect = &test.expect;
        let rules_ok = |ids: &Option<Vec<String>>, lets_too: bool| {
            ids.iter()
                .flatten()
                .all(|id| c.rule_by_name(id).is_some() || (lets_too && c.let_by_name(id).is_some()))
        };
        if !rules_ok(&expect.reasons, false) || !rules_ok(&expect.errors, true) {
            return Err("expects a rule that does not exist".into());
        }
        let code_exists =
            |code: &String| c.rules.iter().any(|r| r.finding.as_ref().is_some_and(|f| &f.code == code));
        if !expect.findings.iter().flatten().all(code_exists) {
            return Err("expects a finding code no rule produces".into());
        }
        if let Some(effects) = &expect.effects {
            let object = effects.as_object().ok_or("expected effects must be an object")?;
            for (name, value) in object {
                let effect =
                    c.effect_by_name(name).ok_or_else(|| format!("effect `{name}` is not declared"))?;
                Const::from_json(&c.types, c.effects[effect.index()].ty, value)
                    .map_err(|e| format!("effect `{name}`: {e}"))?;
            }
        }
        Ok(())
    }
}
