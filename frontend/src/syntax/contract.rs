//! The contract's structure: the YAML tree to an [`ast::Contract`].
//!
//! Checks the shape of every section (mappings, lists, known keys,
//! required keys) and parses expressions, templates and types. Names and
//! types are not resolved here; values typed by a declaration stay nodes.

use crate::ast::*;
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span, Spanned};
use crate::syntax::scalar::ScalarText;
use crate::syntax::{expr, keys, template, types};
use crate::tree::{Node, NodeKind};

/// Builds the contract's syntax tree from its YAML root.
pub fn build(file: &SourceFile, root: &Node, diagnostics: &mut Vec<Diagnostic>) -> Contract {
    let mut b = Builder { file, diagnostics };
    b.contract(root)
}

struct Builder<'f, 'd> {
    file: &'f SourceFile,
    diagnostics: &'d mut Vec<Diagnostic>,
}

/// The entries of a mapping whose keys were checked.
struct Fields<'n> {
    span: Span,
    entries: &'n [(Node, Node)],
    /// Whether a key was not among the allowed ones (and was reported).
    has_unknown: bool,
}

impl<'n> Fields<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries.iter().find(|(k, _)| k.text() == Some(key)).map(|(_, v)| v)
    }

    fn key_span(&self, key: &str) -> Option<Span> {
        self.entries.iter().find(|(k, _)| k.text() == Some(key)).map(|(k, _)| k.span)
    }
}

impl Builder<'_, '_> {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn wrong_shape(&mut self, node: &Node, expected: &str, what: &str) {
        self.error(
            Diagnostic::error(
                codes::WRONG_SHAPE,
                node.span,
                format!("{what} must be {expected}, found {}", node.kind_name()),
            )
            .label(format!("expected {expected}")),
        );
    }

    /// A mapping with only `allowed` keys (unknown ones are reported).
    fn fields<'n>(&mut self, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Fields<'n>> {
        let Some(entries) = node.as_map() else {
            self.wrong_shape(node, "a mapping", what);
            return None;
        };
        let mut has_unknown = false;
        for (key, _) in entries {
            let Some(name) = key.text() else { continue };
            if !allowed.contains(&name) {
                has_unknown = true;
                let d = Diagnostic::error(
                    codes::UNKNOWN_KEY,
                    key.span,
                    format!("unknown key `{name}` in {what}"),
                )
                .label("not a known key")
                .suggest(name, allowed.iter().copied())
                .with_help(format!("the keys of {what} are: {}", allowed.join(", ")));
                self.error(d);
            }
        }
        Some(Fields { span: node.span, entries, has_unknown })
    }

    fn require<'n>(&mut self, fields: &Fields<'n>, key: &str, what: &str) -> Option<&'n Node> {
        let node = fields.get(key);
        if node.is_none() {
            self.error(
                Diagnostic::error(
                    codes::MISSING_KEY,
                    Span::new(fields.span.start as usize, fields.span.start as usize),
                    format!("{what} has no `{key}`"),
                )
                .label(format!("`{key}` is required here")),
            );
        }
        node
    }

    /// A single value as text.
    fn scalar(&mut self, node: &Node, what: &str) -> Option<Spanned<String>> {
        match node.text() {
            Some(text) => Some(Spanned::new(text.to_string(), node.span)),
            None => {
                self.wrong_shape(node, "a single value", what);
                None
            }
        }
    }

    /// A mapping's entries, treating null as empty.
    fn entries<'n>(&mut self, node: Option<&'n Node>, what: &str) -> &'n [(Node, Node)] {
        match node {
            None => &[],
            Some(n) if n.is_null() => &[],
            Some(n) => match n.as_map() {
                Some(entries) => entries,
                None => {
                    self.wrong_shape(n, "a mapping", what);
                    &[]
                }
            },
        }
    }

    /// A list's items, treating null as empty.
    fn items<'n>(&mut self, node: Option<&'n Node>, what: &str) -> &'n [Node] {
        match node {
            None => &[],
            Some(n) if n.is_null() => &[],
            Some(n) => match n.as_seq() {
                Some(items) => items,
                None => {
                    self.wrong_shape(n, "a list", what);
                    &[]
                }
            },
        }
    }

    fn name_list(&mut self, node: Option<&Node>, what: &str) -> Vec<Ident> {
        let items = self.items(node, what);
        items.iter().filter_map(|item| self.scalar(item, &format!("an entry of {what}"))).collect()
    }

    fn key_ident(&self, key: &Node) -> Ident {
        Spanned::new(key.text().unwrap_or_default().to_string(), key.span)
    }

    fn expression(&mut self, node: &Node, what: &str) -> Option<Expr> {
        let Some(text) = ScalarText::of(self.file, node) else {
            self.wrong_shape(node, "an expression (a single value)", what);
            return None;
        };
        match expr::parse(&text) {
            Ok(e) => Some(e),
            Err(mut d) => {
                if self.split_at_comma(node) {
                    d = d.with_help("YAML ended this expression at a `,` inside `{ ... }` or `[ ... ]`: quote the expression");
                }
                self.error(d);
                None
            }
        }
    }

    /// Whether a flow collection's `,` cut this plain scalar short.
    fn split_at_comma(&self, node: &Node) -> bool {
        let plain = node.as_scalar().is_some_and(|s| s.style == crate::tree::Style::Plain);
        let rest = &self.file.text()[(node.span.end as usize).min(self.file.text().len())..];
        plain && rest.trim_start_matches([' ', '\t']).starts_with(',')
    }

    fn template(&mut self, node: &Node, what: &str) -> Option<Template> {
        let Some(text) = ScalarText::of(self.file, node) else {
            self.wrong_shape(node, "a message (a single value)", what);
            return None;
        };
        template::parse(&text, self.diagnostics)
    }

    fn contract(&mut self, root: &Node) -> Contract {
        let mut c = Contract { span: root.span, ..Contract::default() };
        let Some(top) = self.fields(root, "a contract", keys::CONTRACT) else { return c };
        let what = "the contract";
        c.name = self.require(&top, "contract", what).and_then(|n| self.scalar(n, "`contract`"));
        c.version = self.require(&top, "version", what).and_then(|n| self.scalar(n, "`version`"));
        c.description = top.get("description").and_then(|n| self.scalar(n, "`description`")).map(|s| s.value);
        c.channels = self.name_list(top.get("channels"), "`channels`");
        c.components = self.name_list(top.get("components"), "`components`");
        c.decision = top.get("decision").and_then(|n| self.scalar(n, "`decision`"));
        c.default = top.get("default").and_then(|n| self.scalar(n, "`default`"));
        c.on_error = top.get("on_error").and_then(|n| self.scalar(n, "`on_error`"));
        if let Some(input) = self.require(&top, "input", what) {
            c.input_span = input.span;
            c.input = self.record_fields(input, "`input`");
        }
        // A declaration with a broken part is kept, marked invalid, so
        // the checker knows the name and stays silent about its uses.
        for (key, value) in self.entries(top.get("tables"), "`tables`") {
            let kind = self.table(value).unwrap_or(TableDeclKind::Invalid);
            c.tables.push(TableDecl { name: self.key_ident(key), span: value.span, kind });
        }
        for (key, value) in self.entries(top.get("effects"), "`effects`") {
            let (ty, combine) = self.effect(value).unwrap_or((invalid_type(value), None));
            c.effects.push(EffectDecl { name: self.key_ident(key), ty, combine });
        }
        for (key, value) in self.entries(top.get("extern"), "`extern`") {
            let (params, ret) =
                self.extern_signature(value).unwrap_or_else(|| (Vec::new(), invalid_type(value)));
            let text = Spanned::new(value.text().unwrap_or_default().to_string(), value.span);
            c.externs.push(ExternDecl { name: self.key_ident(key), text, params, ret });
        }
        for (key, value) in self.entries(top.get("windows"), "`windows`") {
            if let Some(window) = self.window(key, value) {
                c.windows.push(window);
            }
        }
        for (key, value) in self.entries(top.get("models"), "`models`") {
            if let Some(model) = self.model(key, value) {
                c.models.push(model);
            }
        }
        for (key, value) in self.entries(top.get("let"), "`let`") {
            let value = self.expression(value, "a let");
            c.lets.push(LetDecl { name: self.key_ident(key), value });
        }
        let rules = self.require(&top, "rules", what);
        for node in self.items(rules, "`rules`") {
            if let Some(rule) = self.rule(node) {
                c.rules.push(rule);
            }
        }
        for node in self.items(top.get("tests"), "`tests`") {
            if let Some(test) = self.test(node) {
                c.tests.push(test);
            }
        }
        c
    }

    /// The fields of a record type (or of `input`).
    fn record_fields(&mut self, node: &Node, what: &str) -> Vec<FieldDecl> {
        self.entries(Some(node), what)
            .iter()
            .map(|(key, value)| FieldDecl {
                name: self.key_ident(key),
                ty: self.type_expr(value).unwrap_or_else(|| invalid_type(value)),
            })
            .collect()
    }

    fn type_expr(&mut self, node: &Node) -> Option<TypeExpr> {
        match &node.kind {
            NodeKind::Scalar(_) => {
                let text = ScalarText::of(self.file, node)?;
                match types::parse(&text, 0, text.value.len()) {
                    Ok(ty) => Some(ty),
                    Err(d) => {
                        self.error(d);
                        None
                    }
                }
            }
            NodeKind::Map(entries) if entries.len() == 1 && entries[0].0.text() == Some("list") => {
                let element = self.type_expr(&entries[0].1)?;
                Some(TypeExpr { span: node.span, kind: TypeExprKind::List(Box::new(element)) })
            }
            NodeKind::Map(entries) if entries.len() == 1 && entries[0].0.text() == Some("enum") => {
                let values = &entries[0].1;
                let Some(items) = values.as_seq() else {
                    self.wrong_shape(values, "a list of values", "an enum");
                    return None;
                };
                let values = items.iter().filter_map(|v| self.scalar(v, "an enum value")).collect();
                Some(TypeExpr { span: node.span, kind: TypeExprKind::Enum(values) })
            }
            NodeKind::Map(_) => Some(TypeExpr {
                span: node.span,
                kind: TypeExprKind::Record(self.record_fields(node, "a record type")),
            }),
            NodeKind::Seq(_) => {
                self.error(
                    Diagnostic::error(codes::BAD_TYPE, node.span, "a type cannot be a list")
                        .label("expected a type")
                        .with_help("write `list<T>` for a list, `{ enum: [...] }` for a set of values"),
                );
                None
            }
        }
    }

    fn table(&mut self, node: &Node) -> Option<TableDeclKind> {
        let fields = self.fields(node, "a table", keys::TABLE)?;
        let rows = self.require(&fields, "rows", "a table");
        if let Some(set) = fields.get("set") {
            if let Some(span) = fields.key_span("key").or(fields.key_span("value")) {
                self.error(
                    Diagnostic::error(
                        codes::BAD_TABLE,
                        span,
                        "a table has either `set`, or `key` and `value`",
                    )
                    .label("not in a set")
                    .with_label(set.span, "this table is a set"),
                );
            }
            let element = self.type_expr(set)?;
            return Some(TableDeclKind::Set {
                element,
                rows: self.items(rows, "the rows of a set").to_vec(),
            });
        }
        let key_ty = self.require(&fields, "key", "a table");
        let value_ty = self.require(&fields, "value", "a table");
        let key = self.type_expr(key_ty?)?;
        let value = self.type_expr(value_ty?)?;
        Some(TableDeclKind::Map { key, value, rows: self.entries(rows, "the rows of a table").to_vec() })
    }

    /// An effect's type and combine policy: `T` or `{ type: T, combine: P }`.
    fn effect(&mut self, node: &Node) -> Option<(TypeExpr, Option<Spanned<String>>)> {
        let structured =
            node.as_map().is_some_and(|entries| entries.iter().any(|(k, _)| k.text() == Some("type")));
        if !structured {
            return Some((self.type_expr(node)?, None));
        }
        let fields = self.fields(node, "an effect", keys::EFFECT)?;
        let ty = self.require(&fields, "type", "an effect")?;
        let ty = self.type_expr(ty)?;
        let combine = fields.get("combine").and_then(|n| self.scalar(n, "`combine`"));
        Some((ty, combine))
    }

    /// An extern's signature, `"(T1, T2) -> R"`.
    fn extern_signature(&mut self, node: &Node) -> Option<(Vec<TypeExpr>, TypeExpr)> {
        let Some(text) = ScalarText::of(self.file, node) else {
            self.wrong_shape(node, "a signature such as \"(string) -> decimal\"", "an extern");
            return None;
        };
        match signature(&text) {
            Ok(sig) => Some(sig),
            Err(d) => {
                self.error(d);
                None
            }
        }
    }

    fn rule(&mut self, node: &Node) -> Option<RuleDecl> {
        let fields = self.fields(node, "a rule", keys::RULE)?;
        let id = self.require(&fields, "id", "this rule").and_then(|n| self.scalar(n, "a rule id"))?;
        let when =
            self.require(&fields, "when", "this rule").and_then(|n| self.expression(n, "a rule's `when`"));
        let finding = fields.get("finding").and_then(|n| self.finding(n));
        let mut effects = Vec::new();
        let mut split = false;
        for (key, value) in self.entries(fields.get("effects"), "a rule's `effects`") {
            let ident = self.key_ident(key);
            if split && !ir::names::is_identifier(&ident.value) {
                // A piece of an expression YAML split at a comma: already
                // reported with the part before it.
                continue;
            }
            split |= self.split_at_comma(value);
            effects.push((ident, self.expression(value, "an effect value")));
        }
        Some(RuleDecl {
            id,
            span: node.span,
            component: fields.get("component").and_then(|n| self.scalar(n, "`component`")),
            channels: fields.get("channels").map(|n| self.name_list(Some(n), "a rule's `channels`")),
            when,
            deny: fields.get("deny").and_then(|n| self.template(n, "`deny`")),
            allow: fields.get("allow").and_then(|n| self.template(n, "`allow`")),
            finding,
            effects,
            has_outcome: ["deny", "allow", "finding", "effects"].iter().any(|k| fields.get(k).is_some())
                || fields.has_unknown,
        })
    }

    fn window(&mut self, key: &Node, node: &Node) -> Option<WindowDecl> {
        let fields = self.fields(node, "a window", keys::WINDOW)?;
        let what = "a window";
        let key_expr =
            self.require(&fields, "key", what).and_then(|n| self.expression(n, "a window's `key`"));
        let time = self.require(&fields, "time", what).and_then(|n| self.expression(n, "a window's `time`"));
        let length = self.require(&fields, "span", what).and_then(|n| self.scalar(n, "a window's `span`"));
        let grace = fields.get("grace").and_then(|n| self.scalar(n, "a window's `grace`"));
        let mut aggregates = Vec::new();
        let listed = self.require(&fields, "aggregates", what);
        for (name, value) in self.entries(listed, "a window's `aggregates`") {
            aggregates.push((self.key_ident(name), self.expression(value, "an aggregate")));
        }
        Some(WindowDecl {
            name: self.key_ident(key),
            span: node.span,
            key: key_expr,
            time,
            length,
            grace,
            aggregates,
        })
    }

    fn model(&mut self, key: &Node, node: &Node) -> Option<ModelDecl> {
        let fields = self.fields(node, "a model", keys::MODEL)?;
        let what = "a model";
        Some(ModelDecl {
            name: self.key_ident(key),
            span: node.span,
            onnx: self.require(&fields, "onnx", what).and_then(|n| self.scalar(n, "a model's `onnx`")),
            features: self
                .require(&fields, "features", what)
                .and_then(|n| self.scalar(n, "a model's `features`")),
            output: self.require(&fields, "output", what).and_then(|n| self.scalar(n, "a model's `output`")),
        })
    }

    fn finding(&mut self, node: &Node) -> Option<FindingDecl> {
        let fields = self.fields(node, "a finding", keys::FINDING)?;
        let code = self.require(&fields, "code", "a finding").and_then(|n| self.scalar(n, "a finding code"));
        let severity =
            self.require(&fields, "severity", "a finding").and_then(|n| self.scalar(n, "a severity"));
        let message =
            self.require(&fields, "message", "a finding").and_then(|n| self.template(n, "a finding message"));
        Some(FindingDecl { span: node.span, code, severity, message })
    }

    fn test(&mut self, node: &Node) -> Option<TestDecl> {
        let fields = self.fields(node, "a test", keys::TEST)?;
        let name = self.require(&fields, "name", "this test").and_then(|n| self.scalar(n, "a test name"))?;
        let input = self.require(&fields, "input", "this test").cloned();
        let expect = match self.require(&fields, "expect", "this test") {
            Some(n) => self.expect(n)?,
            None => ExpectDecl::default(),
        };
        Some(TestDecl {
            name,
            span: node.span,
            channel: fields.get("channel").and_then(|n| self.scalar(n, "a test's channel")),
            component: fields.get("component").and_then(|n| self.scalar(n, "a test's component")),
            now: fields.get("now").and_then(|n| self.scalar(n, "a test's `now`")),
            history: self.items(fields.get("history"), "a test's `history`").to_vec(),
            input,
            expect,
        })
    }

    fn expect(&mut self, node: &Node) -> Option<ExpectDecl> {
        let fields = self.fields(node, "a test's `expect`", keys::EXPECT)?;
        let list = |b: &mut Self, key: &str| {
            fields.get(key).map(|n| b.name_list(Some(n), &format!("`expect.{key}`")))
        };
        Some(ExpectDecl {
            decision: fields.get("decision").and_then(|n| self.scalar(n, "`expect.decision`")),
            reasons: list(self, "reasons"),
            findings: list(self, "findings"),
            effects: fields.get("effects").cloned(),
            errors: list(self, "errors"),
        })
    }
}

/// Parses an extern signature `(T1, T2) -> R`.
fn signature(text: &ScalarText<'_>) -> Result<(Vec<TypeExpr>, TypeExpr), Diagnostic> {
    let value = text.value;
    let bad = |at: usize, message: &str| {
        Diagnostic::error(
            codes::BAD_EXTERN,
            text.file_span(at, (at + 1).min(value.len())),
            format!("invalid extern signature: {message}"),
        )
        .label(message.to_string())
        .with_help("write the parameter and result types: \"(string, int) -> decimal\"")
    };
    let open = value
        .find(|c: char| !c.is_whitespace())
        .filter(|&i| value[i..].starts_with('('))
        .ok_or_else(|| bad(0, "expected `(`"))?;
    // The `)` that closes the parameters, skipping nested `{...}` and `<...>`.
    let mut depth = 0i32;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, b) in value.bytes().enumerate().skip(open + 1) {
        match b {
            b'{' | b'<' => depth += 1,
            b'}' | b'>' => depth -= 1,
            b',' if depth == 0 => commas.push(i),
            b')' if depth == 0 => {
                close = Some(i);
                break;
            }
            _ => {}
        }
    }
    let close = close.ok_or_else(|| bad(open, "the `(` is never closed"))?;
    let arrow = value[close..]
        .find("->")
        .map(|i| close + i)
        .ok_or_else(|| bad(close, "expected `-> R` after the parameters"))?;
    if !value[close + 1..arrow].trim().is_empty() {
        return Err(bad(close + 1, "expected `->`"));
    }
    let mut params = Vec::new();
    if !value[open + 1..close].trim().is_empty() {
        let mut start = open + 1;
        for end in commas.iter().copied().chain([close]) {
            params.push(types::parse(text, start, end)?);
            start = end + 1;
        }
    }
    let ret = types::parse(text, arrow + 2, value.len())?;
    Ok((params, ret))
}

/// The type of a declaration whose written type was already reported.
fn invalid_type(node: &Node) -> TypeExpr {
    TypeExpr { span: node.span, kind: TypeExprKind::Invalid }
}
