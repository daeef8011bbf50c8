//! Long chains of lets in native code, which nest one native call per
//! link:
//!
//! - deep evaluation cannot overflow a small stack, on either engine: a
//!   chain of lets each using the one before and expressions of the
//!   greatest nesting the compiler allows, evaluated on a thread with a
//!   256 KiB stack. Native code that reaches the stack's floor falls back
//!   to the interpreter, which grows its stack;
//! - compiling stays linear in a contract's size: each generated function
//!   imports only the functions it calls. (Importing every let's function
//!   into every function made a contract of 50,000 chained lets take more
//!   than ten minutes to compile; it now takes seconds.)

use std::sync::Arc;

use backend::inspect::{self, Emit};
use runtime::Engine;
use runtime::engine::NativeStatus;

/// The stack of the evaluating thread: far less than the nesting needs.
const SMALL_STACK: usize = 256 * 1024;
/// A stack the same evaluation fits in.
const LARGE_STACK: usize = 64 * 1024 * 1024;

/// A contract whose rule reads the last of `lets` chained lets.
fn let_chain(lets: usize) -> String {
    let mut text =
        String::from("contract: deep.lets\nversion: 1.0.0\ninput: { n: int }\nlet:\n  l0: n + 1\n");
    for i in 1..lets {
        text.push_str(&format!("  l{i}: l{} + 1\n", i - 1));
    }
    let last = lets - 1;
    text.push_str(&format!("rules:\n  - id: r\n    when: l{last} > 0\n    deny: \"reached {{l{last}}}\"\n"));
    text
}

/// A contract whose condition and message are sums nested 120 levels.
fn tall_expression() -> String {
    let depth = 120;
    let sum = format!("{}n{}", "(1 + ".repeat(depth), ")".repeat(depth));
    format!(
        "contract: deep.expr\nversion: 1.0.0\ninput: {{ n: int }}\nrules:\n  - id: r\n    when: {sum} > 0\n    deny: \"{{{sum}}}\"\n"
    )
}

fn load(engine: &Engine, text: &str) -> Arc<runtime::Contract> {
    let compiled = frontend::compile_file("deep.yaml", text);
    let bundle = compiled.bundle.unwrap_or_else(|| panic!("{}", compiled.diagnostics.render(false)));
    engine.load(bundle).expect("loads")
}

/// Evaluates `{"input":{"n":1}}` on a thread with `stack` bytes of stack.
fn evaluate_on(stack: usize, contract: &runtime::Contract) -> String {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(scope, || {
                let mut out = Vec::new();
                contract.evaluate_json(r#"{"input":{"n":1}}"#, &mut out);
                String::from_utf8(out).expect("UTF-8")
            })
            .expect("spawns")
            .join()
            .expect("no overflow")
    })
}

#[test]
fn deep_lets_and_tall_expressions_run_on_a_small_stack() {
    let interp = Engine::builder().jit(runtime::Jit::Off).build();
    let jit =
        Engine::builder().jit(runtime::Jit::On).native(Arc::new(backend::Jit::with_verifier(false))).build();
    for (text, message, native_on_small_stack) in
        [(let_chain(3_000), "reached 3001", false), (tall_expression(), r#""121""#, true)]
    {
        let expected = evaluate_on(SMALL_STACK, &load(&interp, &text));
        assert!(expected.contains(message), "{expected}");

        let native = load(&jit, &text);
        assert_eq!(native.native_status(), NativeStatus::Native);
        assert_eq!(evaluate_on(SMALL_STACK, &native), expected);
        assert_eq!(native.native_counts(), if native_on_small_stack { (1, 0) } else { (0, 1) });
        // With room enough, the same chain runs natively to its end.
        assert_eq!(evaluate_on(LARGE_STACK, &native), expected);
        assert_eq!(native.native_counts().0, if native_on_small_stack { 2 } else { 1 });
    }
}

#[test]
fn only_contracts_with_long_call_chains_check_the_stack() {
    let engine = Engine::builder().jit(runtime::Jit::Off).build();
    for (lets, checks) in [(3, false), (backend::plan::UNCHECKED_CALL_DEPTH + 1, true)] {
        let contract = load(&engine, &let_chain(lets));
        let clif = inspect::emit(contract.program(), "x86_64", Emit::Clif).expect("compiles");
        assert_eq!(clif.contains("get_stack_pointer"), checks, "{lets} lets:\n{clif}");
    }
}

#[test]
fn each_function_imports_only_what_it_calls() {
    let lets = 40;
    let contract = load(&Engine::builder().jit(runtime::Jit::Off).build(), &let_chain(lets));
    let clif = inspect::emit(contract.program(), "x86_64", Emit::Clif).expect("compiles");
    let functions = clif.matches("\nfunction ").count() + usize::from(clif.starts_with("function "));
    assert_eq!(functions, lets + 2, "a function per let, the entry point and the batch entry:\n{clif}");
    // let0 calls nothing; let1..let39 each call the let before; the entry
    // calls the last let; the batch entry calls the entry.
    let imports =
        clif.lines().filter(|line| line.trim_start().starts_with("fn") && line.contains(" = ")).count();
    assert_eq!(imports, lets + 1, "{clif}");
}
