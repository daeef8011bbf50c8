//! Repository invariants that `cargo test` checks:
//!
//! - the dependency rules of ARCHITECTURE.md (`ir` and `runtime` never
//!   depend on Cranelift or tract; `frontend` knows nothing about execution; only
//!   `frontend` renders diagnostics), read from `cargo metadata`;
//! - every Rust file opens with a `//!` doc saying what it owns;
//! - the two engines are peers: `runtime::native` uses nothing of
//!   `runtime::interp` (both call `runtime::semantics`);
//! - contract folders are walked in one place (`runtime::contract_set`);
//! - (in `module_circles.rs`) no circle of module imports inside `runtime`
//!   and `backend`.

mod common;

use common::workspace_root;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Package name to the names of its normal (non-dev) dependencies.
fn dependency_graph() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1"])
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let name = names[node["id"].as_str().unwrap()].to_string();
        let deps = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["dep_kinds"].as_array().unwrap().iter().any(|k| k["kind"].is_null()))
            .map(|d| names[d["pkg"].as_str().unwrap()].to_string())
            .collect();
        graph.entry(name).or_insert_with(BTreeSet::new).extend::<BTreeSet<String>>(deps);
    }
    graph
}

/// Every package `root` depends on, directly or not.
fn closure(graph: &BTreeMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_string()];
    while let Some(name) = stack.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

#[test]
fn crate_dependency_rules_hold() {
    let graph = dependency_graph();
    let forbidden = |root: &str, bad: &dyn Fn(&str) -> bool, why: &str| {
        let offenders: Vec<String> = closure(&graph, root).into_iter().filter(|d| bad(d)).collect();
        assert!(offenders.is_empty(), "`{root}` must not depend on {offenders:?}: {why}");
    };
    let cranelift = |d: &str| d.starts_with("cranelift") || d == "backend";
    forbidden("ir", &cranelift, "the IR is engine-neutral");
    forbidden("runtime", &cranelift, "the runtime never needs Cranelift");
    let tract = |d: &str| d.starts_with("tract") || d == "models";
    forbidden("ir", &tract, "the IR is engine-neutral");
    forbidden("runtime", &tract, "the runtime is given a model runtime, as it is given the JIT");
    forbidden(
        "frontend",
        &|d: &str| d == "runtime" || cranelift(d),
        "the frontend knows nothing about execution",
    );
    forbidden(
        "lsp",
        &|d: &str| matches!(d, "runtime" | "backend" | "models" | "batch") || cranelift(d) || tract(d),
        "the language server is an authoring tool: it knows nothing about execution",
    );
    let renders = |d: &str| d == "annotate-snippets";
    forbidden("ir", &renders, "only the frontend produces user diagnostics");
    forbidden("runtime", &renders, "only the frontend produces user diagnostics");
    forbidden("backend", &renders, "only the frontend produces user diagnostics");
    let front_ends = |d: &str| d == "cli" || d == "server";
    for library in ["runtime", "batch", "models", "datafusion-rulec", "ballista-rulec", "python", "lsp"] {
        forbidden(library, &front_ends, "library crates never depend on the command line or the server");
    }
    let datafusion = |d: &str| d.starts_with("datafusion") || d == "sqlparser";
    for engine in ["ir", "runtime", "batch", "backend", "frontend", "server"] {
        forbidden(engine, &datafusion, "SQL is a front end over the batch engine, in its own crate");
    }
    let ballista = |d: &str| d.starts_with("ballista");
    for engine in ["ir", "runtime", "batch", "backend", "frontend", "server", "datafusion-rulec"] {
        forbidden(engine, &ballista, "a cluster is a front end over the SQL functions, in its own crate");
    }
}

/// The major dependencies the lockfile may hold in one version only: two
/// arrows (or two tokios) would mean two incompatible type universes and
/// twice the build.
const SINGLE_VERSION: &[&str] = &[
    "arrow-array",
    "arrow-buffer",
    "arrow-data",
    "arrow-ipc",
    "arrow-schema",
    "arrow-select",
    "parquet",
    "datafusion",
    "datafusion-physical-plan",
    "object_store",
    "ballista-core",
    "arrow-flight",
    "tonic",
    "tokio",
    "hyper",
    "serde_json",
    "cranelift-codegen",
    "rust_decimal",
    "prost",
    "pyo3",
];

#[test]
fn the_lockfile_holds_one_version_of_each_major_dependency() {
    let lock = std::fs::read_to_string(workspace_root().join("Cargo.lock")).expect("Cargo.lock");
    let mut versions: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = \"").and_then(|n| n.strip_suffix('"')) {
            name = Some(n);
        } else if let (Some(n), Some(v)) =
            (name, line.strip_prefix("version = \"").and_then(|v| v.strip_suffix('"')))
        {
            versions.entry(n).or_default().insert(v);
            name = None;
        }
    }
    let doubled: Vec<String> = SINGLE_VERSION
        .iter()
        .filter_map(|n| versions.get(n).filter(|v| v.len() > 1).map(|v| format!("{n} {v:?}")))
        .collect();
    assert!(doubled.is_empty(), "several versions in Cargo.lock: {doubled:?}");
}

#[test]
fn the_codemap_names_every_crate() {
    let root = workspace_root();
    let members = common::members();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let missing: Vec<&String> =
        members.iter().filter(|m| !architecture.contains(&format!("**`{m}/`**"))).collect();
    assert!(
        !members.is_empty() && missing.is_empty(),
        "crates missing from ARCHITECTURE.md's codemap: {missing:?}"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "snapshots" | "fixtures" | ".git")
                && !name.starts_with('.')
            {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut files = Vec::new();
    rust_files(&workspace_root(), &mut files);
    assert!(files.len() > 10, "found the sources");
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| p.strip_prefix(workspace_root()).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a `//!` doc: {missing:?}");
}

/// One contract set (ARCHITECTURE.md): the command line, the server and
/// the library crates find contract files through the runtime's one
/// walker, so none of their other sources lists a folder.
#[test]
fn contract_folders_have_one_walker() {
    const WALKER: &str = "runtime/src/contract_set/walk.rs";
    let mut files = Vec::new();
    for krate in ["runtime", "batch", "cli", "server"] {
        rust_files(&workspace_root().join(krate).join("src"), &mut files);
    }
    let listing: Vec<String> = files
        .iter()
        .filter(|path| std::fs::read_to_string(path).unwrap_or_default().contains("read_dir("))
        .map(|p| p.strip_prefix(workspace_root()).unwrap().display().to_string())
        .collect();
    assert_eq!(listing, [WALKER], "only the runtime's walker lists folders");
}

/// Every file under `dir`, recursively.
fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target" || n == ".git") {
                continue;
            }
            all_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// A snapshot of a deleted case would keep passing silently: every
/// `name@case.snap` must still have its `case` file in the crate's tests.
#[test]
fn no_snapshot_outlives_its_case() {
    let mut orphans = Vec::new();
    for krate in std::fs::read_dir(workspace_root()).unwrap().flatten() {
        if !krate.path().join("Cargo.toml").exists() {
            continue;
        }
        let mut files = Vec::new();
        all_files(&krate.path(), &mut files);
        // A case is a file or a folder anywhere in the crate (conformance
        // cases are folders).
        let cases: BTreeSet<String> = files
            .iter()
            .filter(|p| {
                !p.to_string_lossy().contains("/snapshots/") && !p.to_string_lossy().contains("/target/")
            })
            .flat_map(|p| {
                p.ancestors()
                    .map(|a| a.file_name().map(|n| n.to_string_lossy().to_string()))
                    .collect::<Vec<_>>()
            })
            .flatten()
            .collect();
        for snapshot in files.iter().filter(|p| p.extension().is_some_and(|e| e == "snap")) {
            let name = snapshot.file_name().unwrap().to_string_lossy().to_string();
            if let Some((_, case)) = name.trim_end_matches(".snap").split_once('@')
                && !cases.contains(case)
            {
                orphans.push(snapshot.strip_prefix(workspace_root()).unwrap().display().to_string());
            }
        }
    }
    assert!(orphans.is_empty(), "snapshots whose case is gone (delete them): {orphans:?}");
}

#[test]
fn native_code_uses_nothing_of_the_interpreter() {
    let mut files = Vec::new();
    rust_files(&workspace_root().join("runtime/src/native"), &mut files);
    assert!(files.len() > 3, "found the native module's files");
    let offending: Vec<String> = files
        .iter()
        .filter(|path| std::fs::read_to_string(path).unwrap_or_default().contains("interp::"))
        .map(|p| p.strip_prefix(workspace_root()).unwrap().display().to_string())
        .collect();
    assert!(offending.is_empty(), "runtime::native files that use the interpreter: {offending:?}");
}
