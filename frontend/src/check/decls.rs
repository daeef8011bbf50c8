//! Declarations: the header, types, the input schema, tables, effects,
//! externs, and the names of lets and rules.

use std::collections::HashMap;

use ir::names;
use ir::{LetId, RuleId, TableId, TypeId, TypeKind, TypeTable};

use super::{Checker, LetInfo};
use crate::ast::{self, Ident, TableDeclKind, TypeExpr, TypeExprKind};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{Span, Spanned};

const PRIMITIVES: [(&str, TypeId); 7] = [
    ("bool", TypeTable::BOOL),
    ("int", TypeTable::INT),
    ("decimal", TypeTable::DECIMAL),
    ("float", TypeTable::FLOAT),
    ("string", TypeTable::STRING),
    ("timestamp", TypeTable::TIMESTAMP),
    ("duration", TypeTable::DURATION),
];

/// Matches a setting's text against the allowed values.
fn option<T: Copy>(all: &[T], name_of: impl Fn(T) -> &'static str, text: &str) -> Option<T> {
    all.iter().copied().find(|v| name_of(*v) == text)
}

impl Checker<'_> {
    pub(super) fn declarations(&mut self) {
        self.header();
        self.input_schema();
        self.table_decls();
        self.effect_decls();
        self.extern_decls();
        self.let_names();
        self.rule_names();
        self.window_names();
        self.model_decls();
    }

    fn header(&mut self) {
        let ast = self.ast;
        if let Some(name) = &ast.name {
            if names::is_contract_name(&name.value) {
                self.header.name = name.value.clone();
            } else {
                self.error(
                    Diagnostic::error(
                        codes::BAD_NAME,
                        name.span,
                        format!("`{}` is not a valid contract name", name.value),
                    )
                    .label("invalid name")
                    .with_help(
                        "a contract name is dot-separated lower-case ids, e.g. `acme.payments.transfer`",
                    ),
                );
            }
        }
        if let Some(version) = &ast.version {
            if names::is_semver(&version.value) {
                self.header.version = version.value.clone();
            } else {
                self.error(
                    Diagnostic::error(
                        codes::BAD_VERSION,
                        version.span,
                        format!("`{}` is not a semantic version", version.value),
                    )
                    .label("expected MAJOR.MINOR.PATCH")
                    .with_help("write a version such as `1.0.0`"),
                );
            }
        }
        if let Some(mode) = self.setting(&ast.decision, "decision", &ir::DecisionMode::ALL, |m| m.name()) {
            self.header.decision = mode;
        }
        if let Some(verdict) = self.setting(&ast.default, "default", &ir::Verdict::ALL, |v| v.name()) {
            self.header.default = verdict;
        }
        if let Some(on_error) = self.setting(&ast.on_error, "on_error", &ir::OnError::ALL, |o| o.name()) {
            self.header.on_error = on_error;
        }
        self.channels = self.id_list(&ast.channels, "channel");
        if self.channels.len() > ir::limits::MAX_CHANNELS {
            let span = ast.channels[ir::limits::MAX_CHANNELS].span;
            self.error(
                Diagnostic::error(
                    codes::TOO_MANY,
                    span,
                    format!("a contract declares at most {} channels", ir::limits::MAX_CHANNELS),
                )
                .label("one too many"),
            );
        }
        self.components = self.id_list(&ast.components, "component");
    }

    /// Reads one of a fixed set of values, reporting anything else.
    pub(super) fn setting<T: Copy>(
        &mut self,
        text: &Option<Spanned<String>>,
        what: &str,
        all: &[T],
        name_of: impl Fn(T) -> &'static str + Copy,
    ) -> Option<T> {
        let text = text.as_ref()?;
        let found = option(all, name_of, &text.value);
        if found.is_none() {
            let allowed: Vec<&str> = all.iter().map(|v| name_of(*v)).collect();
            self.error(
                Diagnostic::error(
                    codes::BAD_OPTION,
                    text.span,
                    format!("`{}` is not a valid {what}", text.value),
                )
                .label(format!("expected one of: {}", allowed.join(", ")))
                .suggest(&text.value, allowed.iter().copied()),
            );
        }
        found
    }

    /// Checks that names are ids and unique; returns them.
    fn id_list(&mut self, idents: &[Ident], what: &str) -> Vec<String> {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for ident in idents {
            self.check_id(ident, what);
            if let Some(first) = seen.insert(&ident.value, ident.span) {
                self.duplicate(ident, first, what);
            }
        }
        idents.iter().map(|i| i.value.clone()).collect()
    }

    pub(super) fn check_id(&mut self, ident: &Ident, what: &str) -> bool {
        let ok = names::is_identifier(&ident.value);
        if !ok {
            self.error(
                Diagnostic::error(
                    codes::BAD_NAME,
                    ident.span,
                    format!("`{}` is not a valid {what} id", ident.value),
                )
                .label("invalid id")
                .with_help("ids are lower-case letters, digits and `_`, starting with a letter"),
            );
        }
        ok
    }

    pub(super) fn duplicate(&mut self, ident: &Ident, first: Span, what: &str) {
        self.error(
            Diagnostic::error(
                codes::DUPLICATE_ID,
                ident.span,
                format!("the {what} `{}` is declared twice", ident.value),
            )
            .label("declared again here")
            .with_label(first, "first declared here"),
        );
    }

    /// Resolves a written type; `None` after reporting what is wrong.
    pub(super) fn resolve_type(&mut self, ty: &TypeExpr) -> Option<TypeId> {
        match &ty.kind {
            TypeExprKind::Invalid => None,
            TypeExprKind::Named(name) => {
                if let Some((_, id)) = PRIMITIVES.iter().find(|(n, _)| n == name) {
                    return Some(*id);
                }
                let shown: String = if name.chars().count() > 40 {
                    format!("{}…", name.chars().take(39).collect::<String>())
                } else {
                    name.clone()
                };
                let mut d = Diagnostic::error(codes::BAD_TYPE, ty.span, format!("unknown type `{shown}`"))
                    .label("not a type")
                    .suggest(name, PRIMITIVES.iter().map(|(n, _)| *n));
                if name == "list" || name.starts_with("list<") {
                    d = d.with_help("write a list type as `list<T>`, e.g. `list<string>`");
                } else if name.starts_with("enum") {
                    d = d.with_help("write an enum as `{ enum: [A, B] }`");
                }
                self.error(d.with_help("the types are bool, int, decimal, float, string, timestamp, duration, list<T>, T?, { enum: [...] } and records"));
                None
            }
            TypeExprKind::List(inner) => {
                let inner = self.resolve_type(inner)?;
                Some(self.types.list_of(inner))
            }
            TypeExprKind::Optional(inner) => {
                let inner_id = self.resolve_type(inner)?;
                if self.types.optional_inner(inner_id).is_some() {
                    self.error(
                        Diagnostic::error(codes::BAD_TYPE, ty.span, "an optional of an optional")
                            .label("write one `?`"),
                    );
                    return None;
                }
                if self.types.record_fields(inner_id).is_some() {
                    // Records are laid out inline, so an absent one has no
                    // slot to say so (LANGUAGE.md is silent; decisions.md).
                    self.error(
                        Diagnostic::error(codes::BAD_TYPE, ty.span, "a record cannot be optional")
                            .label("optional record")
                            .with_help("make the record's fields optional instead, e.g. `{ city: string? }`"),
                    );
                    return None;
                }
                Some(self.types.optional_of(inner_id))
            }
            TypeExprKind::Record(fields) => {
                let (fields, failed) = self.record_fields(fields);
                failed.is_empty().then(|| self.types.intern(TypeKind::Record(fields)))
            }
            TypeExprKind::Enum(values) => {
                if values.is_empty() {
                    self.error(
                        Diagnostic::error(codes::BAD_TYPE, ty.span, "an enum needs at least one value")
                            .label("empty enum"),
                    );
                    return None;
                }
                let mut seen: HashMap<&str, Span> = HashMap::new();
                let mut ok = true;
                for value in values {
                    if let Some(first) = seen.insert(&value.value, value.span) {
                        self.duplicate(value, first, "enum value");
                        ok = false;
                    }
                }
                ok.then(|| {
                    self.types.intern(TypeKind::Enum(values.iter().map(|v| v.value.clone()).collect()))
                })
            }
        }
    }

    /// The fields that check, and the names of those that do not (already
    /// reported), so uses of a broken field stay silent.
    fn record_fields(&mut self, fields: &[ast::FieldDecl]) -> (Vec<ir::FieldDef>, Vec<String>) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut out = Vec::new();
        let mut failed = Vec::new();
        for field in fields {
            let name = &field.name;
            if let Some(first) = seen.insert(&name.value, name.span) {
                self.duplicate(name, first, "field");
                continue;
            }
            let mut ok = true;
            if !names::is_field_name(&name.value) {
                self.error(
                    Diagnostic::error(
                        codes::BAD_NAME,
                        name.span,
                        format!("`{}` is not a valid field name", name.value),
                    )
                    .label("invalid field name")
                    .with_help("field names are letters, digits and `_`, not starting with a digit"),
                );
                ok = false;
            } else if names::RESERVED.contains(&name.value.as_str()) {
                self.reserved(name);
                ok = false;
            }
            match self.resolve_type(&field.ty) {
                Some(ty) if ok => out.push(ir::FieldDef { name: name.value.clone(), ty }),
                _ => failed.push(name.value.clone()),
            }
        }
        (out, failed)
    }

    pub(super) fn reserved(&mut self, name: &Ident) {
        self.error(
            Diagnostic::error(
                codes::SHADOWING,
                name.span,
                format!("`{}` is reserved by the language", name.value),
            )
            .label("reserved name")
            .with_help("`rules`, `true` and `false` cannot name fields, tables or lets"),
        );
    }

    fn input_schema(&mut self) {
        let (fields, failed) = self.record_fields(&self.ast.input);
        self.input = self.types.intern(TypeKind::Record(fields));
        self.poisoned.extend(failed);
    }

    fn table_decls(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.tables {
            let name = &decl.name;
            if let Some(first) = seen.insert(&name.value, name.span) {
                self.duplicate(name, first, "table");
                continue;
            }
            self.check_id(name, "table");
            let mut ok = true;
            if self.input_fields().iter().any(|f| f.name == name.value) {
                self.error(
                    Diagnostic::error(
                        codes::SHADOWING,
                        name.span,
                        format!("the table `{}` has the name of an input field", name.value),
                    )
                    .label("name already taken")
                    .with_help("rename the table"),
                );
                ok = false;
            } else if names::RESERVED.contains(&name.value.as_str()) {
                self.reserved(name);
                ok = false;
            }
            match self.table_kind(decl) {
                Some(kind) if ok => {
                    let id = TableId::from_index(self.tables.len());
                    self.table_names.insert(name.value.clone(), id);
                    self.tables.push(ir::Table { name: name.value.clone(), kind });
                }
                Some(_) => {}
                None => {
                    self.poisoned.insert(name.value.clone());
                }
            }
        }
    }

    fn key_type(&mut self, ty: &TypeExpr, what: &str) -> Option<TypeId> {
        let id = self.resolve_type(ty)?;
        if matches!(self.types.kind(id), TypeKind::String | TypeKind::Int | TypeKind::Enum(_)) {
            return Some(id);
        }
        self.error(
            Diagnostic::error(
                codes::BAD_TABLE,
                ty.span,
                format!("{what} must be string, int or an enum, not {}", self.show(id)),
            )
            .label("not a key type"),
        );
        None
    }

    fn table_kind(&mut self, decl: &ast::TableDecl) -> Option<ir::TableKind> {
        match &decl.kind {
            TableDeclKind::Invalid => None,
            TableDeclKind::Map { key, value, rows } => {
                let key_ty = self.key_type(key, "a table's key")?;
                let value_ty = self.resolve_type(value)?;
                if self.types.optional_inner(value_ty).is_some() {
                    self.error(
                        Diagnostic::error(
                            codes::BAD_TABLE,
                            value.span,
                            "a table's values cannot be optional",
                        )
                        .label("optional value type")
                        .with_help("leave the row out instead; `t[k] ?? default` handles a missing key"),
                    );
                    return None;
                }
                let mut seen = HashMap::new();
                let mut out = Vec::new();
                for (k, v) in rows {
                    if v.is_null() {
                        self.error(
                            Diagnostic::error(
                                codes::VALUE_TYPE,
                                k.span,
                                format!("the row `{}` has no value", self.snippet(k.span)),
                            )
                            .label(format!("expected `{}: <{}>`", self.snippet(k.span), self.show(value_ty)))
                            .with_help(
                                "in `{ ... }` rows, a comma separates rows: decimals are written with `.`",
                            ),
                        );
                        continue;
                    }
                    let key = self.yaml_value(k, key_ty);
                    let value = self.yaml_value(v, value_ty);
                    if let Some(key) = &key {
                        self.unique_row(&mut seen, key, k.span);
                    }
                    if let (Some(key), Some(value)) = (key, value) {
                        out.push((key, value));
                    }
                }
                (out.len() == rows.len()).then_some(ir::TableKind::Map {
                    key: key_ty,
                    value: value_ty,
                    rows: out,
                })
            }
            TableDeclKind::Set { element, rows } => {
                let element_ty = self.key_type(element, "a set's element type")?;
                let mut seen = HashMap::new();
                let mut out = Vec::new();
                for row in rows {
                    if let Some(value) = self.yaml_value(row, element_ty) {
                        self.unique_row(&mut seen, &value, row.span);
                        out.push(value);
                    }
                }
                Some(ir::TableKind::Set { element: element_ty, rows: out })
            }
        }
    }

    fn unique_row(&mut self, seen: &mut HashMap<Option<ir::TableKey>, Span>, key: &ir::Const, span: Span) {
        if let Some(&first) = seen.get(&key.table_key()) {
            self.error(
                Diagnostic::error(
                    codes::DUPLICATE_ROW,
                    span,
                    format!("the key {key} appears twice in this table"),
                )
                .label("repeated key")
                .with_label(first, "first row with this key"),
            );
        } else {
            seen.insert(key.table_key(), span);
        }
    }

    /// Effects whose type checks are declared even when their combine
    /// policy is wrong (reported), so rules that set them are still checked;
    /// a broken type poisons the name.
    fn effect_decls(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.effects {
            if let Some(first) = seen.insert(&decl.name.value, decl.name.span) {
                self.duplicate(&decl.name, first, "effect");
                continue;
            }
            self.check_id(&decl.name, "effect");
            let Some(ty) = self.resolve_type(&decl.ty) else {
                self.poisoned.insert(decl.name.value.clone());
                continue;
            };
            let combine = match &decl.combine {
                None => ir::Combine::Last,
                Some(_) => self
                    .setting(&decl.combine, "combine policy", &ir::Combine::ALL, |c| c.name())
                    .unwrap_or(ir::Combine::Last),
            };
            if self.types.optional_inner(ty).is_some() {
                self.error(
                    Diagnostic::error(codes::BAD_TYPE, decl.ty.span, "an effect cannot be optional")
                        .label("optional effect type")
                        .with_help("an effect no rule sets is simply absent from the result"),
                );
                self.poisoned.insert(decl.name.value.clone());
                continue;
            }
            if !combine.fits(&self.types, ty) {
                let span = decl.combine.as_ref().map_or(decl.ty.span, |c| c.span);
                self.error(
                    Diagnostic::error(codes::BAD_COMBINE, span, format!("`{}` cannot combine values of type {}", combine.name(), self.show(ty)))
                        .label("does not fit the type")
                        .with_label(decl.ty.span, format!("the effect is {}", self.show(ty)))
                        .with_help("max/min need an ordered non-string type, sum a number or duration, any/all a bool; `last` fits any type"),
                );
            }
            self.effects.push(ir::Effect { name: decl.name.value.clone(), ty, combine });
        }
    }

    fn extern_decls(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.externs {
            if let Some(first) = seen.insert(&decl.name.value, decl.name.span) {
                self.duplicate(&decl.name, first, "extern");
                continue;
            }
            self.check_id(&decl.name, "extern");
            if super::calls::is_builtin_name(&decl.name.value) {
                self.error(
                    Diagnostic::error(
                        codes::SHADOWING,
                        decl.name.span,
                        format!("`{}` is a built-in function", decl.name.value),
                    )
                    .label("name already taken")
                    .with_help("give the host function another name"),
                );
                continue;
            }
            let params: Option<Vec<TypeId>> = decl.params.iter().map(|p| self.resolve_type(p)).collect();
            let ret = self.resolve_type(&decl.ret);
            match (params, ret) {
                (Some(params), Some(ret)) => {
                    self.externs.push(ir::Extern { name: decl.name.value.clone(), params, ret })
                }
                _ => {
                    self.poisoned.insert(decl.name.value.clone());
                }
            }
        }
    }

    fn let_names(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.lets {
            let name = &decl.name;
            self.check_id(name, "let");
            if let Some(first) = seen.insert(&name.value, name.span) {
                self.duplicate(name, first, "let");
            }
            let shadows = if self.input_fields().iter().any(|f| f.name == name.value) {
                Some("an input field")
            } else if self.table_names.contains_key(&name.value) {
                Some("a table")
            } else {
                None
            };
            let id = LetId::from_index(self.lets.len());
            if let Some(what) = shadows {
                // Uses of the name keep meaning the field or table.
                self.used_lets.insert(id);
                self.error(
                    Diagnostic::error(
                        codes::SHADOWING,
                        name.span,
                        format!("the let `{}` shadows {what}", name.value),
                    )
                    .label(format!("{what} has this name"))
                    .with_help("rename the let"),
                );
            } else if names::RESERVED.contains(&name.value.as_str()) {
                self.reserved(name);
            } else {
                self.let_names.entry(name.value.clone()).or_insert(id);
            }
            self.lets.push(LetInfo { name: name.value.clone(), span: name.span, value: None });
        }
    }

    fn rule_names(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for (i, rule) in self.ast.rules.iter().enumerate() {
            self.check_id(&rule.id, "rule");
            if let Some(first) = seen.insert(&rule.id.value, rule.id.span) {
                self.duplicate(&rule.id, first, "rule");
            }
            self.rule_names.entry(rule.id.value.clone()).or_insert(RuleId::from_index(i));
        }
    }
}
