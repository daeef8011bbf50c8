fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let compiled = frontend::compile_file(&path, &text);
    print!("{}", compiled.diagnostics.render(false));
    if let Some(b) = compiled.bundle {
        println!("{}", ir::print::print(b.contract()));
        let json = b.to_json();
        let back = ir::Bundle::from_json(&json).unwrap();
        assert_eq!(back.to_json(), json);
        println!("bundle {} bytes, hash {}", json.len(), b.hash());
    }
}
