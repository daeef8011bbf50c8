//! A seeded fuzz of every answer the server computes, in process: the
//! example contracts with random edits, each place of the text asked
//! for hover, definition, references, rename, completion, signature help
//! and key descriptions, the whole text for its outline, tokens and quick
//! fixes, in every position encoding. Nothing may panic. The process test
//! (cli/tests/lsp.rs) drives fewer edits through the real protocol.

use std::path::{Path, PathBuf};

use lsp_types::{Position, Range, Uri};

use crate::position::{Encoding, LineIndex};
use crate::{analysis, complete, fixes, hints, navigate, outline, rename, signature, symbols, tokens};

/// Text an author types, and text no one should.
const PIECES: &[&str] = &[
    "(",
    ")",
    ",",
    ".",
    "{",
    "}",
    "\"",
    "[",
    "]",
    " => ",
    "é😀",
    "\n",
    ": ",
    "- ",
    "amount",
    "rules.",
    "windows.",
    "#",
    "round(",
    "x",
    "'",
    "\t",
    "\r\n",
    "{amount_eur}",
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn edit(rng: &mut Rng, text: &mut String) {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if rng.below(2) == 0 {
        text.insert_str(at, PIECES[rng.below(PIECES.len())]);
    } else {
        let mut end = (at + 1 + rng.below(30)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        text.replace_range(at..end, "");
    }
}

fn examples() -> Vec<String> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/contracts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Every answer at byte `offset` of `text`.
fn ask_at(text: &str, offset: usize, analysis: &analysis::Analysis) {
    let ast = analysis.ast.as_ref();
    let contract = analysis.contract.as_deref();
    let _ = complete::complete(text, offset, ast, contract);
    let _ = complete::key_hover(text, offset);
    let _ = signature::help(text, offset, ast);
    let Some(ast) = ast else { return };
    let Some(reference) = symbols::at(ast, offset) else { return };
    let _ = navigate::hover(ast, contract, text, &reference);
    let _ = navigate::definition(ast, &reference);
    let _ = rename::references(ast, &reference, true);
    let _ = rename::prepare(ast, &reference);
    let _ = rename::rename(ast, &reference, "renamed");
}

#[test]
fn edited_contracts_never_panic_an_answer() {
    let sources = examples();
    let uri: Uri = "file:///x.yaml".parse().unwrap();
    // `RULEC_FUZZ_SEEDS` runs more (the default keeps the suite quick).
    let seeds = std::env::var("RULEC_FUZZ_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(300u64);
    for seed in 1..=seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut text = sources[rng.below(sources.len())].clone();
        for _ in 0..1 + rng.below(4) {
            edit(&mut rng, &mut text);
        }
        let encoding = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32][rng.below(3)];
        let offsets: Vec<usize> = (0..40).map(|_| rng.below(text.len() + 1)).collect();
        let run = || {
            let analysis = analysis::analyse(Path::new("x.yaml"), &text);
            let index = LineIndex::new(&text, encoding);
            for &offset in &offsets {
                // As the server does: a client's position, back to an offset.
                let offset = index.offset(index.position(offset));
                ask_at(&text, offset, &analysis);
            }
            let everything = Range::new(Position::new(0, 0), Position::new(u32::MAX, u32::MAX));
            let _ = fixes::quick_fixes(&analysis, &text, &index, &uri, everything);
            if let Some(ast) = &analysis.ast {
                let _ = outline::outline(ast, &index);
                let _ = tokens::tokens(ast, &index);
                if let Some(contract) = &analysis.contract {
                    let _ = hints::hints(ast, contract, &index, everything);
                }
            }
        };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
            panic!("seed {seed} panicked on:\n{text}");
        }
    }
}
