//! `rulec fmt`'s layout: the before/after pairs in `format/` (each named
//! by the decision it shows), and every contract in the repository:
//! formatting it is idempotent, keeps every comment (counted and compared)
//! and compiles to the same bundle (same hash) or the same diagnostics.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use frontend::SourceFile;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn format(name: &str, text: &str) -> String {
    frontend::format::format(&SourceFile::new(name, text)).unwrap_or_else(|d| {
        let file = SourceFile::new(name, text);
        panic!("{name} does not format:\n{}", d.iter().map(|d| d.render(&file, false)).collect::<String>())
    })
}

/// One pair: `before` formats to `after`, and `after` stays as it is.
fn check(before: &Path) {
    let name = before.file_name().unwrap().to_str().unwrap();
    let after = before.with_file_name(name.replace(".before.yaml", ".after.yaml"));
    let input = std::fs::read_to_string(before).unwrap();
    let expected =
        std::fs::read_to_string(&after).unwrap_or_else(|_| panic!("{} is missing", after.display()));
    assert_eq!(format(name, &input), expected, "{name}");
    assert_eq!(format(name, &expected), expected, "{} is not stable", after.display());
}

#[test]
fn before_formats_to_after() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/format");
    let mut pairs = 0;
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        if path.to_str().unwrap().ends_with(".before.yaml") {
            check(&path);
            pairs += 1;
        }
    }
    assert!(pairs >= 10, "only {pairs} pairs");
}

/// Every `.yaml` file under the workspace's source folders.
fn contracts() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![workspace()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            if name.starts_with('.') || name == "target" || name.starts_with("target-") {
                continue;
            }
            if path.is_dir() {
                folders.push(path);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// What compiling gives: the bundle's hash, or the codes of the errors.
fn outcome(path: &Path, text: &str) -> Result<String, BTreeSet<&'static str>> {
    let compiled = frontend::compile_in(path.parent().unwrap(), "c.yaml", text);
    match compiled.bundle {
        Some(bundle) => Ok(bundle.hash().to_string()),
        None => {
            Err(compiled.diagnostics.items.iter().filter(|d| d.is_error()).map(|d| d.code.id()).collect())
        }
    }
}

/// A contract that compiled compiles to the same bundle; one that did
/// not is refused with at least the same errors (a hint may read the
/// layout, as the one for a call YAML split at the `,` of a flow mapping
/// does, and find one more).
fn same_outcome(name: &str, before: &Path, text: &str, formatted: &str) {
    match (outcome(before, text), outcome(before, formatted)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}: another bundle"),
        (Err(a), Err(b)) => assert!(a.is_subset(&b), "{name}: errors {a:?} became {b:?}"),
        (a, b) => panic!("{name}: {a:?} became {b:?}"),
    }
}

#[test]
fn every_contract_formats_idempotently_with_its_meaning_and_comments() {
    let (mut formatted, mut refused) = (0, 0);
    for path in contracts() {
        let name = path.strip_prefix(workspace()).unwrap().display().to_string();
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(once) = frontend::format::format(&SourceFile::new(&name, &text)) else {
            // Invalid YAML: refused, as `rulec check` refuses it.
            assert!(name.contains("/err/E000"), "{name} was refused");
            refused += 1;
            continue;
        };
        assert_eq!(format(&name, &once), once, "{name}: formatting twice changes it");
        let comments = |t: &str| -> Vec<String> {
            let mut all: Vec<String> = frontend::format::comments_of(&SourceFile::new(&name, t))
                .unwrap()
                .into_iter()
                .map(|c| c.text)
                .collect();
            all.sort();
            all
        };
        assert_eq!(comments(&text), comments(&once), "{name}: comments differ");
        same_outcome(&name, &path, &text, &once);
        formatted += 1;
    }
    assert!(formatted > 150 && refused < 20, "{formatted} formatted, {refused} refused");
}

/// xorshift64*: a seeded generator, so that a failure names its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1) as u64) as usize
    }
}

/// What an edit inserts: YAML's indicators, comments, indentation.
const PIECES: &[&str] = &[
    "#",
    " # c",
    "- ",
    ": ",
    "\n",
    "  ",
    "{",
    "}",
    "[",
    "]",
    ", ",
    "'",
    "\"",
    "|",
    ">-",
    "\n  # x\n",
    "---\n",
    "a: b\n",
    "\t",
    "é",
    "? ",
    "&a ",
    "\r\n",
    "\n\n\n",
    "|2\n",
    "\\",
];

/// One random edit of `text`: an insertion, a deletion or a line doubled.
fn edit(rng: &mut Rng, text: &mut String) {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match rng.below(3) {
        0 => text.insert_str(at, PIECES[rng.below(PIECES.len())]),
        1 => {
            let mut end = (at + 1 + rng.below(20)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, "");
        }
        _ => {
            let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
            let line = format!("{}\n", &text[start..end]);
            text.insert_str(start, &line);
        }
    }
}

/// Contracts with random edits: formatting never panics, never refuses
/// its own layout (E0900) and what it writes formats again.
#[test]
fn edited_contracts_never_panic() {
    let sources: Vec<String> = contracts().iter().filter_map(|p| std::fs::read_to_string(p).ok()).collect();
    let mut formatted = 0;
    // `RULEC_FUZZ_SEEDS` runs more (the default keeps the suite quick).
    let seeds = std::env::var("RULEC_FUZZ_SEEDS").ok().and_then(|n| n.parse().ok()).unwrap_or(3000u64);
    for seed in 1..=seeds {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut text = sources[rng.below(sources.len())].clone();
        for _ in 0..1 + rng.below(4) {
            edit(&mut rng, &mut text);
        }
        let result = std::panic::catch_unwind(|| frontend::format::format(&SourceFile::new("x.yaml", &text)));
        let Ok(result) = result else { panic!("seed {seed} panicked on:\n{text}") };
        match result {
            Ok(out) => {
                formatted += 1;
                let again = frontend::format::format(&SourceFile::new("x.yaml", &out));
                assert!(again.is_ok(), "seed {seed}: the output does not format:\n{out}\n{again:?}");
            }
            Err(d) => {
                assert!(d[0].code.id() != "E0900", "seed {seed}: refused its own layout:\n{text}\n{d:?}")
            }
        }
    }
    assert!(formatted > 300, "only {formatted} of the edited files were YAML");
}

/// A comment on its own line at any indentation, or beside a line, of
/// every contract: what formatting writes formats to itself (a comment
/// indented deeper than what follows it moved on the second pass, and one
/// above a list item's first key after keys were ordered). Four lines a
/// contract by default; `RULEC_COMMENT_LINES=all` tries every line.
#[test]
fn a_comment_on_any_line_formats_stably() {
    let every_line = std::env::var("RULEC_COMMENT_LINES").is_ok_and(|v| v == "all");
    let mut rng = Rng(0x5eed_c0de);
    let mut checked = 0;
    for path in contracts() {
        let name = path.strip_prefix(workspace()).unwrap().display().to_string();
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let picked: Vec<usize> = match every_line {
            true => (0..lines.len()).collect(),
            false => (0..4).map(|_| rng.below(lines.len())).collect(),
        };
        for i in picked {
            checked += comment_after_line(&name, &lines, i);
        }
    }
    assert!(checked > 1_000, "only {checked} mutants formatted");
}

/// [`a_comment_on_any_line_formats_stably`] after line `i` of `lines`: how
/// many of the mutants formatted.
fn comment_after_line(name: &str, lines: &[&str], i: usize) -> usize {
    let line = lines[i];
    let next_indent = lines.get(i + 1).map_or(0, |l| l.len() - l.trim_start().len());
    let own = [0, 1, next_indent, next_indent + 3].map(|indent| format!("{line}\n{:indent$}# c", ""));
    let beside = (!line.trim().is_empty()).then(|| format!("{line}  # c"));
    let mut checked = 0;
    for edited in own.into_iter().chain(beside) {
        let mut mutant = lines.to_vec();
        mutant[i] = &edited;
        let mutant = mutant.join("\n") + "\n";
        let Ok(once) = frontend::format::format(&SourceFile::new(name, &mutant)) else { continue };
        let twice = format(name, &once);
        assert!(twice == once, "{name}, a comment after line {}: formatting twice changes\n{once}", i + 1);
        checked += 1;
    }
    checked
}
