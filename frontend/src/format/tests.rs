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

#[test]
fn odd_but_valid_yaml_keeps_its_meaning() {
    assert_eq!(fmt("k: |\nn: 1\n"), "k: \"\"\nn: 1\n");
    assert_eq!(fmt("a: 1\r\nb: [x]  # c\r\n"), "a: 1\nb: [x]  # c\n");
    assert_eq!(fmt("a: {x: 1, # c\n  y: 2}\n"), "a:\n  x: 1    # c\n  y: 2\n");
    assert_eq!(fmt("- - x\n  - y\n-\n"), "- [x, y]\n-\n");
    assert_eq!(fmt("h: # c\nz: 1\n"), "h: # c\nz: 1\n");
    assert_eq!(fmt("# a\r: b\nc: 1\n"), "# a\n: b\nc: 1\n", "a lone CR ends a line");
}
