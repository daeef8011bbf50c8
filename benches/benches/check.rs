//! Criterion: syntax tree to IR (`frontend::check`: names, types, and the
//! lowering, which the checker does as it goes).

use criterion::{Criterion, criterion_group, criterion_main};

fn check(c: &mut Criterion) {
    for (name, source) in benches::compile::bench_contracts() {
        let file = frontend::SourceFile::new(&name, &source);
        let ast = frontend::parse(&file, &mut Vec::new()).expect("parses");
        c.bench_function(&format!("check/{name}"), |b| {
            b.iter(|| frontend::check::check(&file, &ast, &mut Vec::new()).expect("checks"))
        });
    }
}

criterion_group!(group, check);
criterion_main!(group);
