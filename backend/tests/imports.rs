//! Compiling stays linear in a contract's size: each generated function
//! imports only the functions it calls. (Importing every let's function
//! into every function made a contract of 50,000 chained lets take more
//! than ten minutes to compile; it now takes seconds.)

use backend::inspect::{self, Emit};

/// `lets` chained lets, each using the one before, and a rule on the last.
fn let_chain(lets: usize) -> String {
    let mut text = String::from("contract: chain\nversion: 1.0.0\ninput: { n: int }\nlet:\n  l0: n + 1\n");
    for i in 1..lets {
        text.push_str(&format!("  l{i}: l{} + 1\n", i - 1));
    }
    text.push_str(&format!("rules:\n  - id: r\n    when: l{} > 0\n    deny: no\n", lets - 1));
    text
}

#[test]
fn each_function_imports_only_what_it_calls() {
    let lets = 40;
    let compiled = frontend::compile_file("chain.yaml", &let_chain(lets));
    let bundle = compiled.bundle.unwrap_or_else(|| panic!("{}", compiled.diagnostics.render(false)));
    let contract = runtime::Engine::builder().jit(runtime::Jit::Off).build().load(bundle).expect("loads");
    let clif = inspect::emit(contract.program(), "x86_64", Emit::Clif).expect("compiles");
    let functions = clif.matches("\nfunction ").count() + usize::from(clif.starts_with("function "));
    assert_eq!(functions, lets + 1, "a function per let and the entry point:\n{clif}");
    // let0 calls nothing; let1..let39 each call the let before; the entry
    // calls the last let.
    let imports =
        clif.lines().filter(|line| line.trim_start().starts_with("fn") && line.contains(" = ")).count();
    assert_eq!(imports, lets, "{clif}");
}
