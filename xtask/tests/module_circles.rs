//! No circle of module imports inside any crate of the workspace: at every
//! level of a crate's module tree, the submodules' uses of each other form
//! no circle, so the folder tree reads as the architecture (no arrow runs
//! back up).
//!
//! A use is any `crate::...` or `super::...` path in a file's code (`use`
//! groups expanded; comments, `tests.rs` files and a file's
//! `#[cfg(test)]` tail left out), resolved to the deepest module it names.
//! A use between two modules counts at the level of their deepest common
//! ancestor, between the two children of it that hold them: `engine` using
//! `signals::chunk` is `engine -> signals` at the crate's level. A module
//! and its own descendants may use each other (a folder's `mod.rs` and the
//! files under it are one stage).

mod common;

use common::{members, workspace_root};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path in its crate: `["signals", "chunk"]`; the crate root is
/// empty.
type Module = Vec<String>;

/// Every module of the crate whose sources are `src`, with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter(|file| file.file_name().is_some_and(|name| name != "tests.rs"))
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module =
                relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                module.pop();
            }
            (module, file)
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code: comments and its `#[cfg(test)]` tail left out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// The paths `code` names from `crate` or `super`, each as its words
/// (`crate::a::{b, c::d}` gives `crate a b` and `crate a c d`).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"].iter().flat_map(|word| code.match_indices(word).map(|(at, _)| at)) {
        let before = bytes.get(start.wrapping_sub(1)).copied().unwrap_or(b' ');
        if before.is_ascii_alphanumeric() || before == b'_' || (before == b':' && start > 0) {
            continue;
        }
        expand(&code[start..], Vec::new(), &mut out);
    }
    out
}

/// Reads one path (or `use` tree) at the start of `text` after the words
/// `prefix`, pushing each complete path to `out`.
fn expand(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut words = prefix;
    let mut rest = text;
    loop {
        let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !word.is_empty() {
            rest = &rest[word.len()..];
            words.push(word);
        }
        if let Some(after) = rest.strip_prefix("::") {
            rest = after;
            if let Some(group) = rest.strip_prefix('{') {
                for item in split_group(group) {
                    expand(item.trim(), words.clone(), out);
                }
                return;
            }
            continue;
        }
        out.push(words);
        return;
    }
}

/// The items of a `{...}` group whose text starts after its `{`, split at
/// its own commas.
fn split_group(text: &str) -> Vec<&str> {
    let (mut depth, mut from, mut items) = (0, 0, Vec::new());
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&text[from..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[from..at]);
                from = at + 1;
            }
            _ => {}
        }
    }
    items
}

/// The module a path from module `at` names: the deepest module among its
/// words' prefixes.
fn resolve(at: &Module, path: &[String], modules: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut module, mut words) = match path.split_first() {
        Some((first, rest)) if first == "crate" => (Vec::new(), rest),
        _ => (at.clone(), path),
    };
    while let Some((first, rest)) = words.split_first()
        && first == "super"
    {
        module.pop();
        words = rest;
    }
    let mut deepest = modules.contains_key(&module).then(|| module.clone());
    for word in words {
        module.push(word.clone());
        if !modules.contains_key(&module) {
            break;
        }
        deepest = Some(module.clone());
    }
    deepest
}

/// Per level of the module tree, the uses between its children.
fn levels(src: &Path) -> BTreeMap<Module, BTreeMap<String, BTreeSet<String>>> {
    let modules = modules(src);
    let mut levels: BTreeMap<Module, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (at, file) in &modules {
        let text = code(&std::fs::read_to_string(file).unwrap());
        for path in paths(&text) {
            let Some(used) = resolve(at, &path, &modules) else { continue };
            let common = at.iter().zip(&used).take_while(|(a, b)| a == b).count();
            if common == at.len() || common == used.len() {
                continue;
            }
            let level = at[..common].to_vec();
            levels
                .entry(level)
                .or_default()
                .entry(at[common].clone())
                .or_default()
                .insert(used[common].clone());
        }
    }
    levels
}

/// A circle among `uses`, if there is one, as the modules along it.
fn circle(uses: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        uses: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in uses.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, uses, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    uses.keys().find_map(|node| visit(node, uses, &mut Vec::new(), &mut done))
}

/// Every circle of crate `name`, one a level at most, as text.
fn circles_of(name: &str) -> Vec<String> {
    levels(&workspace_root().join(name).join("src"))
        .into_iter()
        .filter_map(|(level, uses)| {
            let at =
                if level.is_empty() { name.to_string() } else { format!("{name}::{}", level.join("::")) };
            circle(&uses).map(|found| format!("in {at}: {}", found.join(" -> ")))
        })
        .collect()
}

#[test]
fn no_crate_has_a_circle_of_module_imports() {
    let members = members();
    assert!(members.len() >= 10, "the members were read: {members:?}");
    let circles: Vec<String> = members.iter().flat_map(|name| circles_of(name)).collect();
    assert!(circles.is_empty(), "circles of module imports:\n{}", circles.join("\n"));
}

#[test]
fn a_circle_is_found() {
    let uses: BTreeMap<String, BTreeSet<String>> = [
        ("engine", vec!["records", "signals"]),
        ("records", vec!["program"]),
        ("signals", vec!["interp"]),
        ("interp", vec!["engine"]),
    ]
    .into_iter()
    .map(|(from, to)| (from.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(circle(&uses).unwrap().join(" -> "), "engine -> signals -> interp -> engine");
    let paths = paths("use crate::{a::{b, c::D}, e};\nlet x = super::super::f::g();\nfoo::crate::no;");
    let shown: Vec<String> = paths.iter().map(|p| p.join(" ")).collect();
    assert_eq!(shown, ["crate a b", "crate a c D", "crate e", "super super f g"]);
}
