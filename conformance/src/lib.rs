//! The conformance suite: cases every engine must pass.
//!
//! A case is a folder under `cases/` holding `contract.yaml` (with
//! hand-written `tests:`, the oracle) and `requests.ndjson`. For each
//! engine the runner evaluates every request line (recording whether
//! native code finished it, from the contract's native counts) and runs
//! every contract test; `tests/conformance.rs` snapshots the results
//! with who finished each request, requires every test
//! to pass on every engine, and requires all engines to print the same
//! bytes. `SUMMARY.md` counts cases and passes per engine.

pub mod differential;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use runtime::engine::NativeStatus;
use runtime::{Contract, Engine, Jit, Owned};
use rust_decimal::Decimal;

/// The engines the suite runs, by name.
pub const ENGINES: [&str; 2] = ["interp", "jit"];

/// The folder of cases.
pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// Every case folder, sorted by name.
pub fn cases() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.join("contract.yaml").exists()).collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// An engine with the host functions the cases declare:
/// `test_score: (string) -> decimal` (the length in characters over ten)
/// and `test_fail: (int) -> int` (always fails).
pub fn engine(name: &str) -> Engine {
    engine_within(name, runtime::window::WindowLimits::DEFAULT)
}

/// [`engine`] whose windows are bounded by `limits`.
pub fn engine_within(name: &str, limits: runtime::window::WindowLimits) -> Engine {
    let jit = if name == "interp" { Jit::Off } else { Jit::On };
    Engine::builder()
        .window_limits(limits)
        .jit(jit)
        .native(Arc::new(backend::Jit::with_verifier(true)))
        .models(Arc::new(models::Tract::new()))
        .host_function("test_score", "(string) -> decimal", |args| match args {
            [Owned::String(s)] => Ok(Owned::Decimal(Decimal::from(s.chars().count() as i64) / Decimal::TEN)),
            _ => Err("expected one string".into()),
        })
        .and_then(|b| b.host_function("test_fail", "(int) -> int", |_| Err("host function failed".into())))
        .expect("valid signatures")
        .build()
}

/// What one engine did with one case.
#[derive(Debug)]
pub struct CaseRun {
    /// Each request line with its result line and who finished it.
    pub requests: Vec<RequestRun>,
    /// Contract tests: name and failures (empty when passed).
    pub tests: Vec<(String, Vec<String>)>,
    /// How many evaluations native code finished (the rest fell back).
    pub native: u64,
    /// Whether the engine had native code for the contract, and if it
    /// failed to compile, why.
    pub status: NativeStatus,
}

/// One request line, evaluated.
#[derive(Debug)]
pub struct RequestRun {
    pub request: String,
    pub result: String,
    pub finished: Finished,
}

/// Who finished an evaluation, from the contract's native counts before
/// and after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Finished {
    /// Native code.
    Native,
    /// Native code handed it back, and the interpreter finished it.
    Fallback,
    /// The interpreter: the engine has no native code for the contract.
    Interpreter,
    /// Nothing was evaluated (the request was refused before, or native
    /// code ran out of time).
    NotEvaluated,
}

impl Finished {
    pub fn name(self) -> &'static str {
        match self {
            Finished::Native => "native",
            Finished::Fallback => "fallback",
            Finished::Interpreter => "interpreter",
            Finished::NotEvaluated => "not evaluated",
        }
    }
}

impl CaseRun {
    pub fn tests_passed(&self) -> usize {
        self.tests.iter().filter(|(_, failures)| failures.is_empty()).count()
    }

    /// `> request` and `< result` lines, the same for every engine.
    pub fn transcript(&self) -> String {
        self.requests.iter().map(|r| format!("> {}\n< {}\n", r.request, r.result)).collect()
    }

    /// How many requests each way finished, `native 3, fallback 1`.
    pub fn finished_counts(&self) -> String {
        let kinds = [Finished::Native, Finished::Fallback, Finished::Interpreter, Finished::NotEvaluated];
        let counts: Vec<String> = kinds
            .iter()
            .map(|k| (k, self.requests.iter().filter(|r| r.finished == *k).count()))
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{} {n}", k.name()))
            .collect();
        counts.join(", ")
    }
}

/// Compiles a case's contract, writes its bundle and loads the bundle's
/// bytes into `engine`, as `rulec eval x.bundle.json` does: so every case
/// also checks that its bundle round-trips (same bytes written again).
pub fn load(case: &Path, engine: &Engine) -> Result<Arc<Contract>, String> {
    let path = case.join("contract.yaml");
    let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let compiled = frontend::compile_file(&path.display().to_string(), &source);
    let bundle = compiled.bundle.ok_or_else(|| compiled.diagnostics.render(false))?;
    let bytes = bundle.to_json();
    let loaded = ir::Bundle::from_json(&bytes).map_err(|e| format!("{}: its bundle: {e}", path.display()))?;
    if loaded.to_json() != bytes {
        return Err(format!("{}: its bundle is not the same after a round trip", path.display()));
    }
    engine.load(loaded).map_err(|e| e.to_string())
}

/// Runs one case on the engine called `engine_name`.
pub fn run(case: &Path, engine_name: &str) -> Result<CaseRun, String> {
    let engine = engine(engine_name);
    let contract = load(case, &engine)?;
    let requests = std::fs::read_to_string(case.join("requests.ndjson")).unwrap_or_default();
    let interpreted = contract.native_status() != NativeStatus::Native;
    let mut runs = Vec::new();
    for line in requests.lines().filter(|l| !l.trim().is_empty()) {
        let mut out = Vec::new();
        let before = contract.native_counts();
        contract.evaluate_json(line, &mut out);
        let after = contract.native_counts();
        let finished = if after.0 > before.0 {
            Finished::Native
        } else if after.1 > before.1 {
            Finished::Fallback
        } else if interpreted {
            Finished::Interpreter
        } else {
            Finished::NotEvaluated
        };
        let result = String::from_utf8_lossy(&out).into_owned();
        runs.push(RequestRun { request: line.to_string(), result, finished });
    }
    let tests =
        runtime::engine::contract_tests::run(&contract).into_iter().map(|t| (t.name, t.failures)).collect();
    Ok(CaseRun {
        requests: runs,
        tests,
        native: contract.native_counts().0,
        status: contract.native_status(),
    })
}

/// `SUMMARY.md`: cases, requests and test passes per engine.
pub fn summary(runs: &[(String, Vec<(String, CaseRun)>)]) -> String {
    let mut out = String::from(
        "# Conformance summary\n\nRegenerated by `cargo test -p conformance` (`RULEC_BLESS=1` rewrites it). \
         `native` counts the evaluations (requests and tests) that native code finished; \
         the others fell back to the interpreter (errors, constructs the JIT does not compile).\n\n\
         | engine | cases | requests | contract tests passed | native |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for (engine, cases) in runs {
        let requests: usize = cases.iter().map(|(_, r)| r.requests.len()).sum();
        let tests: usize = cases.iter().map(|(_, r)| r.tests.len()).sum();
        let passed: usize = cases.iter().map(|(_, r)| r.tests_passed()).sum();
        let native: u64 = cases.iter().map(|(_, r)| r.native).sum();
        out.push_str(&format!(
            "| {engine} | {} | {requests} | {passed} / {tests} | {native} |\n",
            cases.len()
        ));
    }
    out
}

/// Each request line's result line, as batch evaluation gives them:
/// consecutive requests with the same channel, component and time laid
/// out together as records and evaluated in one call
/// (`Contract::evaluate_records`: on the JIT, its batch entry); a line
/// that is not a request with an input is evaluated alone.
pub fn evaluate_together(contract: &Contract, lines: &[String]) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new(); lines.len()];
    // Runs of (line index, input text) sharing a context.
    let mut runs: Vec<(runtime::Context, Vec<(usize, &str)>)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let envelope = runtime::Envelope::parse(line).ok();
        let found = envelope.as_ref().and_then(|e| {
            let context =
                contract.context(e.channel.as_deref(), e.component.as_deref(), e.now.as_deref()).ok()?;
            Some((context, e.input?.get()))
        });
        let Some((context, input)) = found else {
            contract.evaluate_json(line, &mut out[i]);
            continue;
        };
        match runs.last_mut() {
            Some((last, run)) if format!("{last:?}") == format!("{context:?}") => run.push((i, input)),
            _ => runs.push((context, vec![(i, input)])),
        }
    }
    for (context, run) in &runs {
        let mut records = runtime::input::records::Records::new(contract.program(), run.len());
        for (row, (_, input)) in run.iter().enumerate() {
            records.parse_row(contract.program(), row, input);
        }
        let mut sink = batch::output::ndjson::NdjsonRows::new(runtime::result::Parts::ALL, run.len());
        sink.step(run.len(), None);
        contract.evaluate_records(&records, context, &mut sink);
        let results = sink.out.split(|b| *b == b'\n');
        for ((i, _), result) in run.iter().zip(results) {
            out[*i] = result.to_vec();
        }
    }
    out
}
