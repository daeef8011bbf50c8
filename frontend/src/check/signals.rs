//! Windows and models (SIGNALS.md): their declarations, a window's key,
//! time and aggregates, `windows.<w>.<a>` and `score(model, features)`.
//!
//! A window is checked in dependency order among the lets (its
//! expressions may read lets that read no window and no rule, which
//! `deps` enforces); a model's file is read relative to the contract
//! file and kept, with its sha256, for the bundle. Whether the file is a
//! model that fits is the runtime's to check when it loads the bundle.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ir::{
    AggregateKind, Builtin, ExprId, ExprKind as Ir, ModelId, ModelOutput, TypeId, TypeTable as T, WindowId,
};

use super::Checker;
use crate::ast::{Expr, ExprKind, Ident};
use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{Span, Spanned};

/// The largest model file a contract may name: the largest a bundle can
/// hold (whether it fits with the rest is checked on the sealed bundle).
const MAX_MODEL_BYTES: u64 = ir::bundle::MAX_MODEL_BYTES as u64;

impl Checker<'_> {
    /// Registers the windows' names (their contents are checked in
    /// dependency order, [`Checker::check_window`]).
    pub(super) fn window_names(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.windows {
            self.check_id(&decl.name, "window");
            if let Some(first) = seen.insert(&decl.name.value, decl.name.span) {
                self.duplicate(&decl.name, first, "window");
                continue;
            }
            self.window_names.insert(decl.name.value.clone(), WindowId::from_index(self.windows.len()));
            self.windows.push(None);
        }
    }

    /// Checks the models: names, features, output, and reads each file.
    pub(super) fn model_decls(&mut self) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for decl in &self.ast.models {
            self.check_id(&decl.name, "model");
            if let Some(first) = seen.insert(&decl.name.value, decl.name.span) {
                self.duplicate(&decl.name, first, "model");
                continue;
            }
            let model = self.model(&decl.name, &decl.onnx, &decl.features, &decl.output);
            if model.is_none() {
                self.poisoned.insert(decl.name.value.clone());
            }
            self.model_names.insert(decl.name.value.clone(), ModelId::from_index(self.models.len()));
            self.models.push(model);
        }
    }

    fn model(
        &mut self,
        name: &Ident,
        onnx: &Option<Spanned<String>>,
        features: &Option<Spanned<String>>,
        output: &Option<Spanned<String>>,
    ) -> Option<ir::Model> {
        let features = features.as_ref().and_then(|f| self.feature_count(f));
        let output = output.as_ref().and_then(|o| self.model_output(o));
        let bytes = onnx.as_ref().and_then(|path| self.model_file(path));
        let bytes: std::sync::Arc<[u8]> = bytes?.into();
        Some(ir::Model {
            name: name.value.clone(),
            features: features?,
            output: output?,
            sha256: ir::digest::sha256_of(&bytes),
            bytes,
        })
    }

    fn feature_count(&mut self, text: &Spanned<String>) -> Option<u32> {
        match text.value.parse::<u32>() {
            Ok(n) if (1..=ir::limits::MAX_FEATURES).contains(&n) => Some(n),
            _ => {
                self.error(
                    Diagnostic::error(
                        codes::BAD_MODEL,
                        text.span,
                        format!("`{}` is not a number of features", text.value),
                    )
                    .label(format!("expected a whole number from 1 to {}", ir::limits::MAX_FEATURES)),
                );
                None
            }
        }
    }

    fn model_output(&mut self, text: &Spanned<String>) -> Option<ModelOutput> {
        let output = ModelOutput::named(&text.value);
        if output.is_none() {
            let names: Vec<&str> = ModelOutput::ALL.iter().map(|o| o.name()).collect();
            self.error(
                Diagnostic::error(
                    codes::BAD_OPTION,
                    text.span,
                    format!("`{}` is not a model output", text.value),
                )
                .label(format!("expected {}", names.join(" or ")))
                .suggest(&text.value, names.iter().copied()),
            );
        }
        output
    }

    /// The bytes of a model file: a relative path inside the contract's
    /// folder (no `..`, not absolute, no link out of it), a regular file
    /// of at most [`MAX_MODEL_BYTES`].
    fn model_file(&mut self, path: &Spanned<String>) -> Option<Vec<u8>> {
        match read_model(&self.folder, &path.value) {
            Ok(bytes) => Some(bytes),
            Err(reason) => {
                let (message, label) = if path.value.is_empty() {
                    (reason, "expected the path of an .onnx file")
                } else {
                    (format!("cannot read the model file `{}`: {reason}", path.value), "this file")
                };
                self.error(
                    Diagnostic::error(codes::BAD_MODEL, path.span, message)
                        .label(label)
                        .with_help("the path is relative to the contract file, inside its folder"),
                );
                None
            }
        }
    }

    /// Checks window `id`'s key, time, span and aggregates.
    pub(super) fn check_window(&mut self, id: WindowId) {
        self.windows[id.index()] = self.window(id);
    }

    fn window(&mut self, id: WindowId) -> Option<ir::Window> {
        let decl = super::deps::declared_windows(self.ast).nth(id.index())?;
        let key = decl.key.as_ref().and_then(|e| self.window_key(e));
        let time = decl.time.as_ref().and_then(|e| self.window_time(e));
        let span = decl.length.as_ref().and_then(|t| self.window_duration(t, "span", false));
        let grace = match &decl.grace {
            Some(text) => self.window_duration(text, "grace", true),
            None => Some(0),
        };
        let aggregates = self.aggregates(&decl.name, decl.span, &decl.aggregates);
        Some(ir::Window {
            name: decl.name.value.clone(),
            key: key?,
            time: time?,
            span: span?,
            grace: grace?,
            aggregates: aggregates?,
        })
    }

    fn window_key(&mut self, e: &Expr) -> Option<ExprId> {
        let key = self.value(e)?;
        let ty = self.ty(key);
        let fits = ty == T::STRING || ty == T::INT || matches!(self.types.kind(ty), ir::TypeKind::Enum(_));
        if !fits {
            self.error(
                Diagnostic::error(codes::BAD_WINDOW, e.span, format!("a window's key is {}", self.show(ty)))
                    .label("expected a string, int or enum")
                    .with_help("records of one key share a window: key by an account, a card, a device"),
            );
            return None;
        }
        Some(key)
    }

    fn window_time(&mut self, e: &Expr) -> Option<ExprId> {
        let time = self.value(e)?;
        if self.ty(time) != T::TIMESTAMP {
            self.error(
                Diagnostic::error(
                    codes::BAD_WINDOW,
                    e.span,
                    format!("a window's time is {}", self.show(self.ty(time))),
                )
                .label("expected a timestamp: the record's event time"),
            );
            return None;
        }
        Some(time)
    }

    /// A span (positive) or a grace (zero or more), in nanoseconds.
    fn window_duration(&mut self, text: &Spanned<String>, what: &str, zero_ok: bool) -> Option<i64> {
        let nanos = match ir::time::parse_duration(&text.value) {
            Ok(nanos) => nanos,
            Err(message) => {
                self.error(
                    Diagnostic::error(codes::BAD_LITERAL, text.span, message)
                        .label("expected a duration such as `10m`"),
                );
                return None;
            }
        };
        if nanos < 0 || (nanos == 0 && !zero_ok) {
            let expected = if zero_ok { "zero or more" } else { "more than zero" };
            self.error(
                Diagnostic::error(
                    codes::BAD_WINDOW,
                    text.span,
                    format!("a window's {what} is `{}`", text.value),
                )
                .label(format!("expected {expected}")),
            );
            return None;
        }
        Some(nanos)
    }

    fn aggregates(
        &mut self,
        window: &Ident,
        span: Span,
        decls: &[(Ident, Option<Expr>)],
    ) -> Option<Vec<ir::Aggregate>> {
        if decls.is_empty() {
            self.error(
                Diagnostic::error(
                    codes::BAD_WINDOW,
                    span,
                    format!("the window `{}` has no aggregates", window.value),
                )
                .label("nothing to compute")
                .with_help("add `aggregates:`, e.g. `transfers: count()`"),
            );
            return None;
        }
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut out = Vec::new();
        let mut ok = true;
        for (name, value) in decls {
            self.check_id(name, "aggregate");
            if let Some(first) = seen.insert(&name.value, name.span) {
                self.duplicate(name, first, "aggregate");
                ok = false;
                continue;
            }
            match value.as_ref().and_then(|e| self.aggregate(name, e)) {
                Some(aggregate) => out.push(aggregate),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn aggregate(&mut self, name: &Ident, e: &Expr) -> Option<ir::Aggregate> {
        let ExprKind::Call { callee, args } = &e.kind else {
            return self.not_an_aggregate(e.span);
        };
        let Some(kind) = AggregateKind::named(&callee.value) else {
            return self.not_an_aggregate(callee.span);
        };
        let arity = if kind == AggregateKind::Count { 0 } else { 1 };
        if args.len() != arity {
            let wanted = if arity == 0 { "no argument" } else { "one argument" };
            self.error(
                Diagnostic::error(codes::ARITY, e.span, format!("`{}` takes {wanted}", kind.name()))
                    .label(format!("{} given", args.len())),
            );
            return None;
        }
        let arg = match args.first() {
            Some(a) => Some(self.value(a)?),
            None => None,
        };
        let arg_ty = arg.map(|a| self.ty(a));
        let Some(ty) = kind.result_type(&self.types, arg_ty) else {
            let shown = arg_ty.map(|t| self.show(t)).unwrap_or_default();
            let takes = match kind {
                AggregateKind::Sum => "an int, decimal or float",
                AggregateKind::Distinct => "a string, int, enum or bool",
                _ => "an int, decimal, float, timestamp or duration",
            };
            self.error(
                Diagnostic::error(
                    codes::BAD_AGGREGATE,
                    e.span,
                    format!("`{}` cannot aggregate {shown}", kind.name()),
                )
                .label(format!("`{}` takes {takes}", kind.name())),
            );
            return None;
        };
        Some(ir::Aggregate { name: name.value.clone(), kind, arg, ty })
    }

    fn not_an_aggregate<T>(&mut self, span: Span) -> Option<T> {
        let kinds: Vec<String> = AggregateKind::ALL
            .iter()
            .map(|k| if *k == AggregateKind::Count { "count()".into() } else { format!("{}(x)", k.name()) })
            .collect();
        self.error(
            Diagnostic::error(codes::BAD_AGGREGATE, span, "not an aggregate")
                .label(format!("expected one of {}", kinds.join(", "))),
        );
        None
    }

    /// `windows.<window>.<aggregate>`.
    pub(super) fn window_ref(&mut self, window: &Ident, aggregate: &Ident) -> Option<ExprId> {
        let Some(&id) = self.window_names.get(&window.value) else {
            let known: Vec<&str> = self.ast.windows.iter().map(|w| w.name.value.as_str()).collect();
            self.error(
                Diagnostic::error(
                    codes::UNKNOWN_WINDOW,
                    window.span,
                    format!("no window `{}`", window.value),
                )
                .label("not a declared window")
                .suggest(&window.value, known),
            );
            return None;
        };
        let declared = self.ast.windows.iter().find(|w| w.name.value == window.value)?;
        let Some(position) = declared.aggregates.iter().position(|(n, _)| n.value == aggregate.value) else {
            let known: Vec<&str> = declared.aggregates.iter().map(|(n, _)| n.value.as_str()).collect();
            self.error(
                Diagnostic::error(
                    codes::UNKNOWN_WINDOW,
                    aggregate.span,
                    format!("the window `{}` has no aggregate `{}`", window.value, aggregate.value),
                )
                .label(format!("its aggregates are: {}", known.join(", ")))
                .suggest(&aggregate.value, known.iter().copied()),
            );
            return None;
        };
        // A window that failed was reported; its uses stay silent.
        let checked = self.windows[id.index()].as_ref()?;
        let ty = checked.aggregates.get(position)?.ty;
        Some(self.push(ty, Ir::Window { window: id, aggregate: position as u32 }))
    }

    /// `windows` or `windows.<w>` without an aggregate.
    pub(super) fn window_misuse(&mut self, span: Span) -> Option<ExprId> {
        self.error(
            Diagnostic::error(
                codes::UNKNOWN_WINDOW,
                span,
                "a window is read as `windows.<window>.<aggregate>`",
            )
            .label("which aggregate?"),
        );
        None
    }

    /// `score(model, features)`.
    pub(super) fn score(&mut self, args: &[Expr], span: Span) -> Option<ExprId> {
        let [model, features] = args else {
            self.error(
                Diagnostic::error(codes::ARITY, span, "`score` takes a model and a list of features")
                    .label(format!("{} arguments given", args.len()))
                    .with_help("write `score(model, [float(x), ...])`"),
            );
            return None;
        };
        let model_span = model.span;
        let model = self.model_ref(model)?;
        let declared = self.models[model.index()].as_ref()?.features;
        let features = self.features(features, declared, model_span)?;
        Some(self.push(T::FLOAT, Ir::Score { model, features }))
    }

    fn model_ref(&mut self, e: &Expr) -> Option<ModelId> {
        let name = match &e.kind {
            ExprKind::Name(name) => name,
            _ => {
                self.error(
                    Diagnostic::error(
                        codes::UNKNOWN_MODEL,
                        e.span,
                        "the first argument of `score` is a model's name",
                    )
                    .label("not a model"),
                );
                return None;
            }
        };
        match self.model_names.get(name) {
            Some(&id) => Some(id),
            None => {
                let known: Vec<&str> = self.ast.models.iter().map(|m| m.name.value.as_str()).collect();
                self.error(
                    Diagnostic::error(codes::UNKNOWN_MODEL, e.span, format!("no model `{name}`"))
                        .label("not a declared model")
                        .suggest(name, known),
                );
                None
            }
        }
    }

    /// The features: a `list<float>`. In a list literal a number literal
    /// is a float and an int expression is taken as `float(x)` (a count is
    /// a feature as often as a measure); a decimal expression is refused
    /// (money is never silently a float). The literal's length must be the
    /// model's.
    fn features(&mut self, e: &Expr, declared: u32, model: Span) -> Option<ExprId> {
        let ExprKind::List(items) = &e.kind else {
            let list = self.value(e)?;
            if self.types.list_element(self.ty(list)) != Some(T::FLOAT) {
                return self.not_features(e.span, self.ty(list));
            }
            return Some(list);
        };
        let mut converted = Vec::with_capacity(items.len());
        for item in items {
            let id = self.value(item)?;
            let id = match self.ty(id) {
                T::FLOAT => id,
                // A literal (`0.5`, `3`) is read as a float, as in any
                // float list.
                _ if self.can_coerce(id, T::FLOAT) => self.coerce(id, T::FLOAT)?,
                T::INT => self.push(T::FLOAT, Ir::Call { func: Builtin::ToFloat, args: vec![id] }),
                other => return self.not_features(item.span, other),
            };
            converted.push(id);
        }
        if converted.len() != declared as usize {
            self.error(
                Diagnostic::error(
                    codes::FEATURE_COUNT,
                    e.span,
                    format!("{} features given; the model takes {declared}", converted.len()),
                )
                .label(format!("expected {declared} items"))
                .with_label(model, format!("this model takes {declared}")),
            );
            return None;
        }
        let ty = self.types.list_of(T::FLOAT);
        Some(self.push(ty, Ir::List(converted)))
    }

    fn not_features(&mut self, span: Span, ty: TypeId) -> Option<ExprId> {
        self.error(
            Diagnostic::error(codes::BAD_ARGUMENT, span, format!("a feature is {}", self.show(ty)))
                .label("expected a float (or an int, in a list literal)")
                .with_help("convert with `float(x)`: a decimal is never silently a float"),
        );
        None
    }

    /// The checked windows and models, once no error was reported.
    pub(super) fn signals(&self) -> Option<(Vec<ir::Window>, Vec<ir::Model>)> {
        let windows = self.windows.iter().cloned().collect::<Option<Vec<_>>>()?;
        let models = self.models.iter().cloned().collect::<Option<Vec<_>>>()?;
        Some((windows, models))
    }
}

/// Reads model file `path` under `folder`, refusing an empty path, paths
/// that leave the folder (lexically, or through a symbolic link) and files
/// that are not regular or too large.
fn read_model(folder: &Path, path: &str) -> Result<Vec<u8>, String> {
    if path.is_empty() {
        return Err("the model path is empty".into());
    }
    let relative = Path::new(path);
    let inside = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
    if !inside {
        return Err("the path must be relative and stay inside the contract's folder".into());
    }
    let resolved = resolve_inside(folder, relative)?;
    read_resolved(&resolved)
}

/// `relative` under `folder` with every symbolic link followed, if it
/// stays inside `folder` (itself resolved): a link may point anywhere
/// inside the folder, never out of it.
fn resolve_inside(folder: &Path, relative: &Path) -> Result<PathBuf, String> {
    let folder = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
    let root = folder.canonicalize().map_err(|e| format!("cannot resolve the contract's folder: {e}"))?;
    let resolved = folder.join(relative).canonicalize().map_err(|e| e.to_string())?;
    if resolved.starts_with(&root) { Ok(resolved) } else { Err(link_outside(folder, relative, &root)) }
}

/// Why `relative` resolves outside `root`: the first link on its way that
/// leads out, and what it points to (never what the file holds).
fn link_outside(folder: &Path, relative: &Path, root: &Path) -> String {
    let mut prefix = PathBuf::new();
    for component in relative.components() {
        prefix.push(component);
        let on_disk = folder.join(&prefix);
        let leaves = on_disk.canonicalize().is_ok_and(|target| !target.starts_with(root));
        if let (true, Ok(target)) = (leaves, std::fs::read_link(&on_disk)) {
            return format!(
                "`{}` is a symbolic link to `{}`, outside the contract's folder",
                prefix.display(),
                target.display()
            );
        }
    }
    "it resolves, through a symbolic link, to a file outside the contract's folder".into()
}

/// Reads the resolved (link-free) path `path`, the path checked: its
/// type is checked before it is opened (a FIFO would block the open) and
/// again, with its size, on the open file.
fn read_resolved(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let regular = |meta: &std::fs::Metadata| {
        if meta.is_file() { Ok(()) } else { Err("it is not a regular file".to_string()) }
    };
    regular(&std::fs::metadata(path).map_err(|e| e.to_string())?)?;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    regular(&meta)?;
    if meta.len() > MAX_MODEL_BYTES {
        return Err(too_large(&meta.len().to_string()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_MODEL_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(too_large(&format!("over {MAX_MODEL_BYTES}")));
    }
    Ok(bytes)
}

/// A model file of `size` bytes is too large for a bundle.
fn too_large(size: &str) -> String {
    format!(
        "it is {size} bytes; the limit is {MAX_MODEL_BYTES}, as its base64 in the bundle (a third larger) must fit the {}-byte limit of a bundle",
        ir::bundle::MAX_BUNDLE_BYTES
    )
}
