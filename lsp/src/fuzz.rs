//! A seeded fuzz of every answer the server computes, in process: the
//! example contracts with random edits, each place of the text asked
//! for hover, definition, completion, signature help, highlights,
//! references and rename, the whole text for its quick fixes, hints,
//! tokens, outline and formatting, in every position encoding. Nothing may panic. The process test
//! (cli/tests/lsp.rs) drives fewer edits through the real protocol.

use std::path::PathBuf;

use lsp_types::{Position, Range, Uri};

use crate::answer;
use crate::document::{Document, View};
use crate::position::{Encoding, LineIndex};

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

/// Every answer at byte `offset` of the document.
fn ask_at(view: &View<'_>, offset: usize) {
    let _ = answer::hover(view, offset);
    let _ = answer::definition(view, offset);
    let _ = answer::completion(view, offset);
    let _ = answer::signature(view, offset);
    let _ = answer::highlights(view, offset);
    let _ = answer::references(view, offset, true);
    let _ = answer::rename(view, offset, None);
    let _ = answer::rename(view, offset, Some("renamed"));
}

#[test]
fn edited_contracts_never_panic_an_answer() {
    let sources = examples();
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
            let uri: Uri = "file:///x.yaml".parse().unwrap();
            let mut document = Document::new(uri, PathBuf::from("x.yaml"), 1, text.clone());
            document.analyse();
            let view = View { index: LineIndex::new(&document.text, encoding), document: &document };
            for &offset in &offsets {
                // As the server does: a client's position, back to an offset.
                ask_at(&view, view.index.offset(view.index.position(offset)));
            }
            let everything = Range::new(Position::new(0, 0), Position::new(u32::MAX, u32::MAX));
            let _ = answer::code_actions(&view, everything);
            let _ = answer::hints(&view, everything);
            let _ = answer::tokens(&view);
            let _ = answer::outline(&view);
            let _ = answer::formatting(&view);
        };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).is_err() {
            panic!("seed {seed} panicked on:\n{text}");
        }
    }
}
