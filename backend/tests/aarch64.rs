//! aarch64 from an x86-64 host: every contract of `tests/aarch64/cases/`
//! (`<name>.yaml`, with its requests in `<name>.ndjson`) is compiled ahead
//! of time for x86_64 and aarch64 (`backend::inspect::object`), linked with
//! `tests/aarch64/driver.c`, and run natively and under qemu-user: the
//! entry point once per request, then the batch entry (with its vector
//! pass over rule guards) over each run of requests that share a channel
//! and component. Both must leave the statuses and state words the
//! in-process JIT leaves; where native code finished, the aarch64 words,
//! read back by `runtime::native::finish`, must give the interpreter's
//! result byte for byte.
//!
//! The contracts are helper-free kernels (ints, bools, cascades, channel
//! and component masks: no call through the helper table, checked on the
//! Cranelift IR), so the driver runs them with null helper and program
//! pointers. A contract with rule guards that does call helpers (decimal
//! comparisons have a helper for their slow path) runs only its batch
//! entry's vector pass: every record starts as `SKIP`, so the entry point
//! never runs, and the guard words must match (in this process, the
//! whole batch entry must give the interpreter's results). Needs `cc`,
//! `aarch64-linux-gnu-gcc` (with a static libc) and `qemu-aarch64`, which
//! `.ci/run` installs: without them the test fails when `CI` is set and is
//! skipped, with the reason on stderr, otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use backend::inspect::{self, Emit};
use runtime::native::{Arena, HELPERS, NativeCompiler, NativeCtx, NativeProgram, OK, POW10, SKIP};
use runtime::{Contract, Engine, Request};

/// The programs the test runs.
#[derive(Debug)]
struct Tools {
    cc: PathBuf,
    cross_cc: PathBuf,
    qemu: PathBuf,
}

/// How one target builds and runs a driver.
#[derive(Debug)]
struct Target<'t> {
    name: &'static str,
    /// The ELF `e_machine` of its objects.
    machine: u16,
    cc: &'t Path,
    link_flags: &'static [&'static str],
    /// Runs its binaries (none: natively).
    runner: Option<&'t Path>,
}

/// What the cases add up to.
#[derive(Debug, Default)]
struct Tally {
    contracts: usize,
    requests: usize,
    /// Requests native code finished (the others fell back, on every
    /// target alike).
    finished: usize,
    /// Records whose guard word the vector pass left non-zero, on aarch64.
    guarded: usize,
}

#[test]
fn helper_free_kernels_compute_the_same_on_x86_64_and_aarch64() {
    let started = Instant::now();
    let tools = match tools() {
        Ok(tools) => tools,
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{why} (CI installs them: .ci/run)")
        }
        Err(why) => {
            // Straight to stderr: the test harness would swallow `eprintln!`
            // of a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: the aarch64 cross-check needs {why}; `.ci/run` installs them"
            );
            return;
        }
    };
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/aarch64");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("aarch64");
    std::fs::create_dir_all(&work).expect("the scratch directory");
    let targets = [
        Target {
            name: "x86_64",
            machine: 62,
            cc: &tools.cc,
            link_flags: &["-Wl,-z,noexecstack"],
            runner: None,
        },
        Target {
            name: "aarch64",
            machine: 183,
            cc: &tools.cross_cc,
            link_flags: &["-static", "-Wl,-z,noexecstack"],
            runner: Some(&tools.qemu),
        },
    ];
    let mut cases: Vec<PathBuf> = std::fs::read_dir(here.join("cases"))
        .expect("tests/aarch64/cases")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 3, "expected at least three cases in {}", here.join("cases").display());
    let mut tally = Tally::default();
    for case in &cases {
        check(case, &here.join("driver.c"), &work, &targets, &mut tally);
    }
    let _ = writeln!(
        std::io::stderr(),
        "aarch64: {} contracts, {} requests ({} finished natively, the others fell back alike; \
         the vector pass ruled rules out on {}), {:.1?}",
        tally.contracts,
        tally.requests,
        tally.finished,
        tally.guarded,
        started.elapsed()
    );
}

/// Finds the tools, or says which are missing.
fn tools() -> Result<Tools, String> {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return Err("an x86-64 Linux host".to_string());
    }
    let cc = on_path(&["cc", "gcc"]);
    let cross_cc = on_path(&["aarch64-linux-gnu-gcc"]);
    let qemu = on_path(&["qemu-aarch64", "qemu-aarch64-static"]);
    match (cc, cross_cc, qemu) {
        (Some(cc), Some(cross_cc), Some(qemu)) => Ok(Tools { cc, cross_cc, qemu }),
        (cc, cross_cc, qemu) => {
            let missing: Vec<&str> = [
                (cc.is_none(), "a C compiler (cc)"),
                (cross_cc.is_none(), "aarch64-linux-gnu-gcc (Debian: gcc-aarch64-linux-gnu)"),
                (qemu.is_none(), "qemu-aarch64 (Debian: qemu-user)"),
            ]
            .into_iter()
            .filter_map(|(missing, what)| missing.then_some(what))
            .collect();
            Err(missing.join(", "))
        }
    }
}

/// The first of `names` found on `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
    })
}

/// Runs one case on every target and on the in-process JIT.
fn check(case: &Path, driver: &Path, work: &Path, targets: &[Target<'_>], tally: &mut Tally) {
    let name = case.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 case name");
    let source = std::fs::read_to_string(case).expect("the case's contract");
    let compiled = frontend::compile_file(&case.display().to_string(), &source);
    let bundle = compiled.bundle.unwrap_or_else(|| panic!("{}", compiled.diagnostics.render(false)));
    let engine =
        Engine::builder().jit(runtime::Jit::On).native(Arc::new(backend::Jit::with_verifier(true))).build();
    let contract = engine.load(bundle).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(contract.native_status(), runtime::engine::NativeStatus::Native, "{name}: not compiled");
    let program = contract.program();
    let plan = backend::plan::Plan::new(program);
    let clif = inspect::emit(program, "aarch64", Emit::Clif).expect("the Cranelift IR");
    let whole = !clif.contains("call_indirect");
    assert!(
        whole || plan.guard_word.is_some(),
        "{name}: not a helper-free kernel (it calls through the helper table) and no guards:\n{clif}"
    );
    let requests_text = std::fs::read_to_string(case.with_extension("ndjson")).expect("the case's requests");
    let lines: Vec<&str> = requests_text.lines().filter(|l| !l.trim().is_empty()).collect();
    let requests: Vec<Request<'_>> = lines
        .iter()
        .map(|line| contract.request(line).unwrap_or_else(|e| panic!("{name}: {line}: {e:?}")))
        .collect();
    assert!(!requests.is_empty(), "{name}: no requests");

    let native = backend::Jit::with_verifier(true).compile(program).expect("the JIT compiles the case");
    let mode = if whole { OK } else { SKIP };
    let mut expected: Vec<String> = Vec::new();
    if whole {
        expected.extend(requests.iter().map(|r| run_in_process(&native, program, r)));
    }
    expected.extend(run_batches_in_process(&native, program, &requests, mode));
    if !whole {
        // The whole batch entry, helpers and all, in this process only.
        let batched = run_batches_in_process(&native, program, &requests, OK);
        let batched: Vec<&str> =
            batched.iter().map(|l| l.strip_prefix("batch ").expect("a batch line")).collect();
        agree_with_interpreter((name, "in-process batch"), &contract, &native, &lines, &requests, &batched);
    }
    let stdin = driver_input(name, native.state_words, mode, &requests);
    let record_lines: Vec<&str> =
        if whole { lines.iter().chain(&lines).copied().collect() } else { lines.clone() };
    for target in targets {
        let object = inspect::object(program, target.name).expect("the object file");
        assert_eq!(object.state_words, native.state_words, "{name}: the plans differ");
        let machine = object.bytes.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]]));
        assert_eq!(machine, Some(target.machine), "{name}: the {} object's ELF machine", target.name);
        let output = run_driver(target, driver, work, name, &object.bytes, &stdin);
        let got: Vec<&str> = output.lines().collect();
        assert_eq!(got.len(), expected.len(), "{name} on {}: the lines of each run:\n{output}", target.name);
        for ((line, want), got) in record_lines.iter().zip(&expected).zip(&got) {
            assert_eq!(
                got, want,
                "{name}: {line}\n  {} (status, state words) differs from the in-process JIT",
                target.name
            );
        }
        if target.name == "aarch64" {
            let (single, batched) = got.split_at(if whole { requests.len() } else { 0 });
            let batched: Vec<&str> =
                batched.iter().map(|l| l.strip_prefix("batch ").expect("a batch line")).collect();
            if whole {
                tally.finished +=
                    agree_with_interpreter((name, "aarch64"), &contract, &native, &lines, &requests, single);
                agree_with_interpreter(
                    (name, "aarch64 batch"),
                    &contract,
                    &native,
                    &lines,
                    &requests,
                    &batched,
                );
            }
            if let Some(word) = plan.guard_word {
                let guarded = batched.iter().filter(|l| state_word(l, word) != 0).count();
                assert!(guarded > 0, "{name}: the vector pass ruled out no rule on any record");
                tally.guarded += guarded;
            }
        }
    }
    tally.contracts += 1;
    tally.requests += requests.len();
}

/// State word `word` of a driver line (status, then the words).
fn state_word(line: &str, word: usize) -> u64 {
    line.split(' ').nth(word + 1).and_then(|w| w.parse().ok()).expect("a state word")
}

/// Runs the JIT's batch entry in this process over each run of requests
/// with the same context, every record starting with status `mode`, as
/// the driver does; the lines it would print.
fn run_batches_in_process(
    native: &NativeProgram,
    program: &runtime::program::Program,
    requests: &[Request<'_>],
    mode: u32,
) -> Vec<String> {
    let batch = native.batch.expect("the JIT makes a batch entry");
    let (words, mut out) = (native.state_words.max(1), Vec::new());
    let mut first = 0;
    while first < requests.len() {
        let context = masks(&requests[first]);
        let end = (first..requests.len()).find(|&k| masks(&requests[k]) != context).unwrap_or(requests.len());
        let group = &requests[first..end];
        let rows: Vec<runtime::value::data::Slot> =
            group.iter().flat_map(|r| r.input.slots().iter().copied()).collect();
        let mut states = vec![0u64; group.len() * words];
        let mut statuses = vec![mode; group.len()];
        let mut arena = Arena::default();
        let mut ctx = context_for(native, program, context, &mut arena, std::ptr::null_mut());
        // SAFETY: the batch entry was compiled for this program; `rows`
        // holds `group.len()` records of its input width, `states` a zeroed
        // area per record and `statuses` a word per record, all live for
        // the whole call.
        let status = unsafe {
            batch(&mut ctx, rows.as_ptr(), group.len() as u64, states.as_mut_ptr(), statuses.as_mut_ptr())
        };
        assert_eq!(status, OK, "the batch entry's own status");
        for (k, status) in statuses.iter().enumerate() {
            out.push(format!("batch {}", line(*status, &states[k * words..k * words + native.state_words])));
        }
        first = end;
    }
    out
}

/// Runs the JIT's entry point in this process, with the real helper table
/// and program; the line the driver would print.
fn run_in_process(
    native: &NativeProgram,
    program: &runtime::program::Program,
    request: &Request<'_>,
) -> String {
    let mut state = vec![0u64; native.state_words + 1];
    let mut arena = Arena::default();
    let mut ctx = context_for(native, program, masks(request), &mut arena, state.as_mut_ptr());
    ctx.input = request.input.slots().as_ptr();
    // SAFETY: the entry point was compiled for this program; the context
    // points at live input slots, a zeroed state area of the planned size,
    // an arena and the program's tables for the whole call.
    let status = unsafe { (native.entry)(&mut ctx) };
    line(status, &state[..native.state_words])
}

/// The context the driver builds, with the real helper table and program.
fn context_for(
    native: &NativeProgram,
    program: &runtime::program::Program,
    (channel_bit, component): (u64, u64),
    arena: &mut Arena,
    state: *mut u64,
) -> NativeCtx {
    // When this stops compiling, NativeCtx changed: so must driver.c.
    NativeCtx {
        input: std::ptr::null(),
        state,
        helpers: &HELPERS,
        program,
        channel_bit,
        component,
        now: 0,
        arena,
        addresses: native.addresses.as_ptr(),
        pow10: POW10.as_ptr(),
        hosts: std::ptr::null(),
        hosts_len: 0,
        stack_floor: 0,
        // As the driver: enough fuel that no loop asks the budget.
        fuel: i64::MAX / 2,
        budget: std::ptr::null(),
        signals: std::ptr::null(),
    }
}

/// The request's channel bit and component, as `runtime::native::run`
/// passes them.
fn masks(request: &Request<'_>) -> (u64, u64) {
    let context = &request.context;
    (context.channel.map_or(0, |c| 1u64 << c.0), context.component.map_or(0, |c| u64::from(c.0) + 1))
}

/// What the driver prints for one request.
fn line(status: u32, words: &[u64]) -> String {
    let mut out = status.to_string();
    for word in words {
        out.push_str(&format!(" {word}"));
    }
    out
}

/// The driver's stdin for `requests` (see driver.c).
fn driver_input(name: &str, words: usize, mode: u32, requests: &[Request<'_>]) -> String {
    let mut out = format!("{words} {mode}\n");
    for request in requests {
        let (channel_bit, component) = masks(request);
        let slots = request.input.slots();
        out.push_str(&format!("{channel_bit} {component} 0 {}", slots.len()));
        for slot in slots {
            let tag = slot.tag();
            assert!(
                !matches!(tag, runtime::value::data::Tag::Str | runtime::value::data::Tag::List),
                "{name}: an input slot holds a pointer ({tag:?}), which another process cannot read"
            );
            let (a, b) = slot.words();
            out.push_str(&format!(" {} {a} {b}", tag as u64));
        }
        out.push('\n');
    }
    out
}

/// Links `object` with the driver for `target` and runs it on `stdin`.
fn run_driver(
    target: &Target<'_>,
    driver: &Path,
    work: &Path,
    case: &str,
    object: &[u8],
    stdin: &str,
) -> String {
    let object_path = work.join(format!("{case}.{}.o", target.name));
    let binary = work.join(format!("{case}.{}", target.name));
    std::fs::write(&object_path, object).expect("the object file is written");
    let link = Command::new(target.cc)
        .args(["-std=c11", "-O1", "-Wall", "-Werror"])
        .args(context_layout())
        .arg("-o")
        .arg(&binary)
        .arg(driver)
        .arg(&object_path)
        .args(target.link_flags)
        .output()
        .expect("the C compiler runs");
    assert!(
        link.status.success(),
        "{case}: linking for {} failed:\n{}",
        target.name,
        String::from_utf8_lossy(&link.stderr)
    );
    let mut command = match target.runner {
        Some(runner) => {
            let mut command = Command::new(runner);
            command.arg(&binary);
            command
        }
        None => Command::new(&binary),
    };
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{case}: cannot run the {} driver: {e}", target.name));
    {
        let mut input = child.stdin.take().expect("the driver's stdin");
        input.write_all(stdin.as_bytes()).expect("the driver reads its requests");
    }
    let output = child.wait_with_output().expect("the driver finishes");
    assert!(
        output.status.success(),
        "{case}: the {} driver failed ({}):\n{}",
        target.name,
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("the driver prints ASCII")
}

/// `NativeCtx`'s size and field offsets, as the driver's `CTX_*` macros.
fn context_layout() -> Vec<String> {
    let fields = [
        ("SIZE", std::mem::size_of::<NativeCtx>() as i32),
        ("INPUT", NativeCtx::INPUT),
        ("STATE", NativeCtx::STATE),
        ("HELPERS", NativeCtx::HELPERS),
        ("PROGRAM", NativeCtx::PROGRAM),
        ("CHANNEL_BIT", NativeCtx::CHANNEL_BIT),
        ("COMPONENT", NativeCtx::COMPONENT),
        ("NOW", NativeCtx::NOW),
        ("ARENA", NativeCtx::ARENA),
        ("ADDRESSES", NativeCtx::ADDRESSES),
        ("POW10", NativeCtx::POW10),
        ("HOSTS", NativeCtx::HOSTS),
        ("HOSTS_LEN", NativeCtx::HOSTS_LEN),
        ("STACK_FLOOR", NativeCtx::STACK_FLOOR),
        ("FUEL", NativeCtx::FUEL),
        ("SIGNALS", NativeCtx::SIGNALS),
    ];
    fields.iter().map(|(name, value)| format!("-DCTX_{name}={value}")).collect()
}

/// Where native code (`source`) finished, its state words must read back
/// as the interpreter's result; returns how many requests finished.
fn agree_with_interpreter(
    (name, source): (&str, &str),
    contract: &Contract,
    native: &NativeProgram,
    lines: &[&str],
    requests: &[Request<'_>],
    outputs: &[&str],
) -> usize {
    let mut finished = 0;
    for ((line, request), output) in lines.iter().zip(requests).zip(outputs) {
        let mut numbers = output.split(' ').map(|w| w.parse::<u64>().expect("a number"));
        let status = numbers.next().expect("a status");
        if status != u64::from(OK) {
            continue;
        }
        finished += 1;
        let state: Vec<u64> = numbers.collect();
        let program = contract.program();
        let mut from_aarch64 = Vec::new();
        let mut sink = runtime::result::JsonResult::new(&mut from_aarch64, runtime::result::Parts::ALL);
        runtime::native::finish(program, native, &state, &mut sink);
        let interpreted = contract.interpret(request).expect("the request is for this contract");
        assert_eq!(
            String::from_utf8_lossy(&from_aarch64),
            String::from_utf8_lossy(&interpreted.to_json()),
            "{name}: {line}\n  the {source} result (left) differs from the interpreter's (right)"
        );
    }
    assert!(finished > 0, "{name}: native code fell back on every request; nothing was compared");
    finished
}
