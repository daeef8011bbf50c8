//! The cases of `timestamps.tsv`, read by the timestamp tests of `ir`,
//! `frontend` and `runtime` (each includes this file with `#[path]`), so
//! the three stages are held to one table by one reader.

/// Each case: the text, and its UTC form or a part of its error.
pub fn cases() -> Vec<(String, Result<String, String>)> {
    include_str!("../timestamps.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (text, expected) = line.split_once('\t').expect("a tab");
            let expected = match expected.split_at(2) {
                ("= ", utc) => Ok(utc.to_string()),
                ("! ", error) => Err(error.to_string()),
                _ => panic!("`= ` or `! ` in {line:?}"),
            };
            (text.to_string(), expected)
        })
        .collect()
}
