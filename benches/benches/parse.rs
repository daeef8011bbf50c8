//! Criterion: YAML text to syntax tree (`frontend::parse`).

use criterion::{Criterion, criterion_group, criterion_main};

fn parse(c: &mut Criterion) {
    for (name, source) in benches::compile::bench_contracts() {
        let file = frontend::SourceFile::new(&name, &source);
        c.bench_function(&format!("parse/{name}"), |b| {
            b.iter(|| frontend::parse(&file, &mut Vec::new()).expect("parses"))
        });
    }
}

criterion_group!(group, parse);
criterion_main!(group);
