//! `rulec fmt`: one layout for contract files, comments kept.
//!
//! The file is read by the YAML reader every stage uses; [`comments`]
//! finds the comments it drops and attaches each to what it describes;
//! [`printer`] writes the tree in the layout docs/FORMAT.md describes.
//! Before the text is returned it is read back and compared with the
//! original: the same values read the same way, the same comments. A
//! layout that would change either is refused as an internal error, so a
//! formatting defect can never change a contract's meaning or lose a
//! comment.

mod comments;
pub mod place;
mod printer;
mod scalar;

use crate::codes;
use crate::diagnostic::Diagnostic;
use crate::source::{SourceFile, Span};
use crate::tree::{Node, NodeKind};

pub use comments::Comment;

/// `file`'s text in the canonical layout, or the diagnostics that stop it
/// from being read (invalid YAML, refused constructs, a file too large).
pub fn format(file: &SourceFile) -> Result<String, Vec<Diagnostic>> {
    let original = read(file)?;
    // YAML's line breaks are `\r\n`, `\r` and `\n`: one kind makes every
    // later step simpler, and the check below compares with the original.
    let lines = normalized(file);
    let root = read(&lines)?;
    let text = lines.text();
    let attached = comments::attach(text, &root);
    let formatted = printer::Printer::new(text, &attached).document(&root);
    let before: Vec<String> = comments::scan(text, &root).into_iter().map(|c| c.text).collect();
    verify(&original, before, &formatted).map_err(|problem| {
        vec![
            Diagnostic::error(
                codes::INTERNAL,
                Span::at(0),
                "internal error: `rulec fmt` would change this file's meaning or comments",
            )
            .label("left as it is")
            .with_help(format!("{problem}; please report it with the file")),
        ]
    })?;
    Ok(formatted)
}

/// The layout without the check that it keeps meaning and comments: for
/// looking at a refused layout.
#[doc(hidden)]
pub fn unchecked(file: &SourceFile) -> Result<String, Vec<Diagnostic>> {
    let lines = normalized(file);
    let root = read(&lines)?;
    let attached = comments::attach(lines.text(), &root);
    Ok(printer::Printer::new(lines.text(), &attached).document(&root))
}

/// Every comment of `file`, in file order (their offsets are in the
/// text [`format`] lays out: line breaks `\n`, no byte order mark).
pub fn comments_of(file: &SourceFile) -> Result<Vec<Comment>, Vec<Diagnostic>> {
    let lines = normalized(file);
    let root = read(&lines)?;
    Ok(comments::scan(lines.text(), &root))
}

/// `file` with every line break a `\n` and without a byte order mark
/// (which would hide a comment on the first line).
fn normalized(file: &SourceFile) -> SourceFile {
    let text = file.text().strip_prefix('\u{feff}').unwrap_or(file.text());
    SourceFile::new(file.name(), text.replace("\r\n", "\n").replace('\r', "\n"))
}

fn read(file: &SourceFile) -> Result<Node, Vec<Diagnostic>> {
    if file.text().len() > crate::MAX_FILE_BYTES {
        let mut diagnostics = Vec::new();
        crate::parse(file, &mut diagnostics);
        return Err(diagnostics);
    }
    match crate::syntax::yaml::parse(file) {
        (Some(root), errors) if errors.is_empty() => Ok(root),
        (_, errors) => Err(errors),
    }
}

/// Whether `formatted` reads as the same tree as `original` and holds the
/// same comments; the first difference otherwise.
fn verify(original: &Node, mut before: Vec<String>, formatted: &str) -> Result<(), String> {
    let file = SourceFile::new("<formatted>", formatted);
    let root = read(&file).map_err(|d| format!("the output does not read back: {}", d[0].message))?;
    same(original, &root)?;
    let mut after: Vec<String> = comments::scan(formatted, &root).into_iter().map(|c| c.text).collect();
    before.sort();
    after.sort();
    if before != after {
        return Err(format!("{} comments went in, {} came out", before.len(), after.len()));
    }
    Ok(())
}

fn same(a: &Node, b: &Node) -> Result<(), String> {
    match (&a.kind, &b.kind) {
        (NodeKind::Scalar(x), NodeKind::Scalar(y)) => {
            if x.value == y.value && scalar::reading(x) == scalar::reading(y) {
                Ok(())
            } else {
                Err(format!("the value {:?} became {:?}", x.value, y.value))
            }
        }
        (NodeKind::Seq(xs), NodeKind::Seq(ys)) if xs.len() == ys.len() => {
            xs.iter().zip(ys).try_for_each(|(x, y)| same(x, y))
        }
        (NodeKind::Map(xs), NodeKind::Map(ys)) if xs.len() == ys.len() => xs.iter().try_for_each(|(k, v)| {
            let other = ys.iter().find(|(key, _)| key.text() == k.text());
            match other {
                Some((_, w)) => same(v, w),
                None => Err(format!("the key {:?} went missing", k.text().unwrap_or_default())),
            }
        }),
        _ => Err(format!("a {} became a {}", a.kind_name(), b.kind_name())),
    }
}

#[cfg(test)]
mod tests;
