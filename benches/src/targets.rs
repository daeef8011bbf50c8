//! The targets `rulec bench` measures, all on the same requests.
//!
//! - `interp`, `jit`: pre-validated input to result structure;
//! - `native`: the same contract written by hand ([`crate::native`]);
//! - `e2e-interp`, `e2e-jit`: JSON request bytes to JSON result bytes.

use std::sync::Arc;

use runtime::{Contract, Request};

use crate::harness::Target;

/// The workload: a contract and its requests (JSON lines).
#[derive(Debug)]
pub struct Workload {
    pub contract: Arc<Contract>,
    pub lines: Vec<String>,
}

impl Workload {
    /// Compiles `source` and loads it with `engine`.
    pub fn new(source: &str, requests: &str, engine: &runtime::Engine) -> Result<Workload, String> {
        let bundle = frontend::compile(source).map_err(|d| d.render(false))?;
        let contract = engine.load(bundle).map_err(|e| e.to_string())?;
        let lines: Vec<String> =
            requests.lines().filter(|l| !l.trim().is_empty()).map(String::from).collect();
        if lines.is_empty() {
            return Err("the requests file holds no request".into());
        }
        for line in &lines {
            contract.request(line).map_err(|e| format!("a benchmark request is invalid: {e}"))?;
        }
        Ok(Workload { contract, lines })
    }
}

/// Pre-validated input to the result structure.
#[derive(Debug)]
pub struct Evaluate<'w> {
    name: String,
    contract: &'w Contract,
    requests: Vec<Request<'w>>,
}

impl<'w> Evaluate<'w> {
    pub fn new(name: &str, workload: &'w Workload) -> Evaluate<'w> {
        let requests = workload.lines.iter().filter_map(|l| workload.contract.request(l).ok()).collect();
        Evaluate { name: name.to_string(), contract: &workload.contract, requests }
    }
}

impl Target for Evaluate<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&mut self, i: usize) -> usize {
        match self.contract.evaluate(&self.requests[i]) {
            Ok(result) => result.findings.len() + result.reasons.len() + result.effects.len(),
            Err(_) => 0,
        }
    }
}

/// The hand-written transfer contract on pre-validated input.
#[derive(Debug)]
pub struct Native {
    native: crate::native::Native,
    requests: Vec<crate::native::Transfer>,
}

impl Native {
    pub fn new(workload: &Workload) -> Result<Native, String> {
        let requests =
            workload.lines.iter().map(|l| crate::native::Transfer::from_json(l)).collect::<Result<_, _>>()?;
        Ok(Native { native: crate::native::Native::new(), requests })
    }
}

impl Target for Native {
    fn name(&self) -> &str {
        "native"
    }

    fn run(&mut self, i: usize) -> usize {
        let result = self.native.evaluate(&self.requests[i]);
        result.findings.len() + result.reasons.len() + result.effects.len()
    }
}

/// JSON request bytes to JSON result bytes.
#[derive(Debug)]
pub struct EndToEnd<'w> {
    name: String,
    workload: &'w Workload,
    out: Vec<u8>,
}

impl<'w> EndToEnd<'w> {
    pub fn new(name: &str, workload: &'w Workload) -> EndToEnd<'w> {
        EndToEnd { name: name.to_string(), workload, out: Vec::with_capacity(1024) }
    }
}

impl Target for EndToEnd<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&mut self, i: usize) -> usize {
        self.out.clear();
        self.workload.contract.evaluate_json(&self.workload.lines[i], &mut self.out);
        self.out.len()
    }
}
