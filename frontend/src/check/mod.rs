//! The type checker: resolves names, checks types and lowers the syntax
//! tree to the typed IR in one pass per declaration.
//!
//! Every check reports and keeps going; a failed sub-expression yields
//! `None` and its parents stay silent, so one mistake gives one message.
//! The IR is only assembled (and verified) when no error was reported.
//!
//! Order: the header and declarations ([`decls`]), dependencies and cycles
//! among lets, rules and windows ([`deps`]), lets and windows
//! ([`signals`]) in dependency order, rules
//! ([`rules`]), tests ([`cases`]), unused-declaration warnings, then the
//! work several rules repeat is shared ([`share`]) and the IR is
//! compacted and verified.

mod calls;
mod cases;
mod decls;
mod deps;
mod expr;
mod rules;
mod share;
mod signals;
mod values;

use std::collections::{HashMap, HashSet};

use ir::{ExprId, LetId, LocalId, ModelId, RuleId, TableId, TypeId, TypeTable, WindowId};

use crate::ast;
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};

/// Checks a contract and lowers it to IR; `None` when an error was
/// reported (diagnostics go to `diagnostics`).
pub fn check(
    file: &SourceFile,
    contract: &ast::Contract,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ir::Contract> {
    let folder = std::path::Path::new(file.name()).parent().unwrap_or(std::path::Path::new(""));
    check_in(file, folder, contract, diagnostics)
}

/// [`check`], reading model files relative to `folder`.
pub fn check_in(
    file: &SourceFile,
    folder: &std::path::Path,
    contract: &ast::Contract,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<ir::Contract> {
    let mut checker = Checker::new(file, contract, diagnostics);
    checker.folder = folder.to_path_buf();
    checker.declarations();
    let order = checker.dependencies();
    for item in order {
        match item {
            deps::Item::Let(id) => checker.check_let(id),
            deps::Item::Window(id) => checker.check_window(id),
        }
    }
    checker.rules();
    checker.cases();
    checker.unused_warnings();
    // Any error, from parsing or checking, means no IR: a part that failed
    // to parse left a gap the checker skipped silently.
    if checker.diagnostics.iter().any(Diagnostic::is_error) {
        return None;
    }
    checker.finish()
}

/// What the checker knows of a `let`.
struct LetInfo {
    name: String,
    span: Span,
    /// Set once the let is checked; `None` if it failed or is in a cycle.
    value: Option<ExprId>,
}

/// A lambda parameter in scope.
struct Scope {
    name: String,
    local: LocalId,
}

pub(crate) struct Checker<'a> {
    file: &'a SourceFile,
    /// Where model files are read from (the contract file's folder).
    folder: std::path::PathBuf,
    ast: &'a ast::Contract,
    diagnostics: &'a mut Vec<Diagnostic>,
    types: TypeTable,
    exprs: Vec<ir::Expr>,
    locals: Vec<TypeId>,
    regexes: Vec<String>,
    input: TypeId,
    channels: Vec<String>,
    components: Vec<String>,
    tables: Vec<ir::Table>,
    table_names: HashMap<String, TableId>,
    effects: Vec<ir::Effect>,
    externs: Vec<ir::Extern>,
    lets: Vec<LetInfo>,
    let_names: HashMap<String, LetId>,
    rule_names: HashMap<String, RuleId>,
    rules: Vec<ir::Rule>,
    tests: Vec<ir::TestCase>,
    window_names: HashMap<String, WindowId>,
    /// Per declared window, once checked (`None` before, or if it failed).
    windows: Vec<Option<ir::Window>>,
    model_names: HashMap<String, ModelId>,
    /// Per declared model; `None` if it failed.
    models: Vec<Option<ir::Model>>,
    scopes: Vec<Scope>,
    used_lets: HashSet<LetId>,
    used_tables: HashSet<TableId>,
    /// Names whose declaration failed (already reported): their uses are
    /// not reported again.
    poisoned: HashSet<String>,
    header: Header,
}

/// The contract-level settings, once checked.
struct Header {
    name: String,
    version: String,
    decision: ir::DecisionMode,
    default: ir::Verdict,
    on_error: ir::OnError,
}

impl<'a> Checker<'a> {
    fn new(file: &'a SourceFile, ast: &'a ast::Contract, diagnostics: &'a mut Vec<Diagnostic>) -> Self {
        let mut types = TypeTable::new();
        let input = types.intern(ir::TypeKind::Record(Vec::new()));
        Checker {
            file,
            folder: std::path::PathBuf::new(),
            ast,
            diagnostics,
            types,
            exprs: Vec::new(),
            locals: Vec::new(),
            regexes: Vec::new(),
            input,
            channels: Vec::new(),
            components: Vec::new(),
            tables: Vec::new(),
            table_names: HashMap::new(),
            effects: Vec::new(),
            externs: Vec::new(),
            lets: Vec::new(),
            let_names: HashMap::new(),
            rule_names: HashMap::new(),
            rules: Vec::new(),
            tests: Vec::new(),
            window_names: HashMap::new(),
            windows: Vec::new(),
            model_names: HashMap::new(),
            models: Vec::new(),
            scopes: Vec::new(),
            used_lets: HashSet::new(),
            used_tables: HashSet::new(),
            poisoned: HashSet::new(),
            header: Header {
                name: String::new(),
                version: String::new(),
                decision: ir::DecisionMode::DenyOverrides,
                default: ir::Verdict::Allow,
                on_error: ir::OnError::Deny,
            },
        }
    }

    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// Adds an expression node.
    fn push(&mut self, ty: TypeId, kind: ir::ExprKind) -> ExprId {
        let id = ExprId::from_index(self.exprs.len());
        self.exprs.push(ir::Expr { ty, kind });
        id
    }

    /// The type of a node.
    fn ty(&self, id: ExprId) -> TypeId {
        self.exprs[id.index()].ty
    }

    fn kind(&self, id: ExprId) -> &ir::ExprKind {
        &self.exprs[id.index()].kind
    }

    /// A type as the author writes it.
    fn show(&self, ty: TypeId) -> String {
        self.types.display(ty).to_string()
    }

    /// The source text of a span, shortened for messages.
    fn snippet(&self, span: Span) -> String {
        let span = self.file.clamp(span);
        let text: String = self.file.text()[span.range()].split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > 40 {
            format!("{}…", text.chars().take(39).collect::<String>())
        } else {
            text
        }
    }

    fn input_fields(&self) -> &[ir::FieldDef] {
        self.types.record_fields(self.input).unwrap_or(&[])
    }

    fn check_let(&mut self, id: LetId) {
        let Some(value) = self.ast.lets[id.index()].value.as_ref() else { return };
        let checked = self.expr(value);
        self.lets[id.index()].value = checked;
    }

    fn unused_warnings(&mut self) {
        let mut warnings = Vec::new();
        for (i, info) in self.lets.iter().enumerate() {
            if !self.used_lets.contains(&LetId::from_index(i)) && info.value.is_some() {
                warnings.push(
                    Diagnostic::error(
                        codes::UNUSED_LET,
                        info.span,
                        format!("the let `{}` is never used", info.name),
                    )
                    .label("unused")
                    .with_help("remove it, or use it in a rule or message"),
                );
            }
        }
        for (i, table) in self.tables.iter().enumerate() {
            if !self.used_tables.contains(&TableId::from_index(i)) {
                let span = self
                    .ast
                    .tables
                    .iter()
                    .find(|t| t.name.value == table.name)
                    .map_or(Span::default(), |t| t.name.span);
                warnings.push(
                    Diagnostic::error(
                        codes::UNUSED_TABLE,
                        span,
                        format!("the table `{}` is never used", table.name),
                    )
                    .label("unused"),
                );
            }
        }
        self.diagnostics.extend(warnings);
    }

    /// Assembles, compacts and verifies the IR.
    fn finish(self) -> Option<ir::Contract> {
        let lets = self
            .lets
            .iter()
            .map(|info| {
                let value = info.value?;
                Some(ir::Let { name: info.name.clone(), ty: self.exprs[value.index()].ty, value })
            })
            .collect::<Option<Vec<_>>>()?;
        let (windows, models) = self.signals()?;
        let mut contract = ir::Contract {
            name: self.header.name,
            version: self.header.version,
            description: self.ast.description.clone(),
            decision: self.header.decision,
            default: self.header.default,
            on_error: self.header.on_error,
            channels: self.channels,
            components: self.components,
            types: self.types,
            input: self.input,
            tables: self.tables,
            effects: self.effects,
            externs: self.externs,
            regexes: self.regexes,
            locals: self.locals,
            exprs: self.exprs,
            lets,
            rules: self.rules,
            tests: self.tests,
            windows,
            models,
        };
        share::share(&mut contract);
        compact(&mut contract);
        if let Err(errors) = ir::verify::verify(&contract) {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            self.diagnostics.push(
                Diagnostic::error(
                    codes::INTERNAL,
                    self.ast.span,
                    "internal compiler error: the IR failed verification",
                )
                .label("while compiling this contract")
                .with_help(listed.join("; "))
                .with_help("this is a bug in rulec; please report it with the contract"),
            );
            return None;
        }
        Some(contract)
    }
}

/// Drops expression nodes no root reaches (left over from rewrites such
/// as `t[k] ?? d`) and renumbers the rest, keeping their order.
fn compact(contract: &mut ir::Contract) {
    let mut live = vec![false; contract.exprs.len()];
    contract.for_each_root_mut(|_, root| {
        if let Some(slot) = live.get_mut(root.index()) {
            *slot = true;
        }
    });
    // Parents come after children, so one backward sweep marks everything.
    for i in (0..contract.exprs.len()).rev() {
        if live[i] {
            contract.exprs[i].kind.for_each_child(|child| {
                if let Some(slot) = live.get_mut(child.index()) {
                    *slot = true;
                }
            });
        }
    }
    let mut new_id = vec![ExprId(u32::MAX); contract.exprs.len()];
    let mut kept = Vec::new();
    for (i, expr) in std::mem::take(&mut contract.exprs).into_iter().enumerate() {
        if live[i] {
            new_id[i] = ExprId::from_index(kept.len());
            kept.push(expr);
        }
    }
    // Ids out of range stay as they are for the verifier to report.
    let map = |id: &mut ExprId| *id = new_id.get(id.index()).copied().unwrap_or(*id);
    for expr in &mut kept {
        expr.kind.for_each_child_mut(map);
    }
    contract.exprs = kept;
    contract.for_each_root_mut(|_, id| map(id));
}
