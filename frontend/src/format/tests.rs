//! Unit tests of the formatter's pieces; the layout itself is shown by
//! the before/after fixtures in `frontend/tests/format/`.

use super::*;

fn fmt(text: &str) -> String {
    match format(&SourceFile::new("t.yaml", text)) {
        Ok(out) => out,
        Err(d) => panic!("{:?}", d.iter().map(|d| (d.message.clone(), d.help.clone())).collect::<Vec<_>>()),
    }
}

#[test]
fn comments_stay_beside_above_and_after() {
    let text = "# header\n\ncontract: a.b  # name\nversion: 1.0.0\ninput:\n  # above\n  x: int   # beside\n  # closing\nrules: []\n";
    let out = fmt(text);
    let spaced = text.replace("input:", "\ninput:").replace("rules: []", "\nrules: []");
    assert_eq!(out, spaced);
}
