//! Tests of the YAML reader: spans, refused constructs and limits.

use super::*;

fn read(text: &str) -> (Option<Node>, Vec<String>) {
    let file = SourceFile::new("t.yaml", text);
    let (root, diagnostics) = parse(&file);
    let messages = diagnostics.iter().map(|d| format!("{} {:?}", d.code.id(), d.span())).collect();
    (root, messages)
}

#[test]
fn spans_are_bytes_even_after_multibyte_text() {
    let text = "name: Bäckerei\ncity: Köln\n";
    let (root, errors) = read(text);
    assert!(errors.is_empty());
    let root = root.unwrap();
    let entries = root.as_map().unwrap();
    let (key, value) = &entries[1];
    assert_eq!(&text[key.span.range()], "city");
    assert_eq!(&text[value.span.range()], "Köln");
}

#[test]
fn scalars_keep_their_text() {
    let (root, _) = read("a: NO\nb: 0.92\nc: 'x'\n");
    let texts: Vec<&str> =
        root.as_ref().unwrap().as_map().unwrap().iter().map(|(_, v)| v.text().unwrap()).collect();
    assert_eq!(texts, ["NO", "0.92", "x"]);
}

#[test]
fn refused_constructs_are_located() {
    assert_eq!(read("a: &x 1\nb: *x\n").1, ["E0002 3..7", "E0002 11..13"]);
    assert_eq!(read("a: !!str 1\n").1, ["E0003 3..10"]);
    assert_eq!(read("a: 1\na: 2\n").1, ["E0004 5..6"]);
    assert_eq!(read("a: 1\n---\nb: 2\n").1, ["E0006 5..8"]);
    assert_eq!(read("").1, ["E0006 0..0"]);
    assert_eq!(read("? [a]\n: 1\n").1, ["E0007 2..5"]);
    assert_eq!(read("a: [1\n").1.len(), 1);
}

#[test]
fn deep_nesting_is_refused_without_recursion() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (root, errors) = read(&deep);
    assert!(root.is_none());
    assert_eq!(errors.len(), 1);
    let nested_maps: String = (0..100).map(|i| format!("{}k{i}:\n", "  ".repeat(i))).collect();
    let (_, errors) = read(&nested_maps);
    assert_eq!(
        errors,
        [format!("E0005 {}..{}", nested_maps.find("k64").unwrap(), nested_maps.find("k64").unwrap())]
    );
}

#[test]
fn spans_end_where_the_value_ends_not_at_the_comment_after_it() {
    let text = "a: \"x\\\"y\"  # one\nb: 'it''s' # two\nc: [ 1, 'q' ]  # three\nd:\n  - e: 1   # four\n\n# five\nf: 2\n";
    let (root, errors) = read(text);
    assert!(errors.is_empty(), "{errors:?}");
    let root = root.unwrap();
    let values: Vec<&str> = root.as_map().unwrap().iter().map(|(_, v)| &text[v.span.range()]).collect();
    assert_eq!(values, ["\"x\\\"y\"", "'it''s'", "[ 1, 'q' ]", "- e: 1", "2"]);
}
