//! Where a mapping or list sits in a contract, which decides how
//! `rulec fmt` lays it out: the order of its keys, whether it may be
//! written in flow style (`{ a: 1 }`) and whether its entries are kept
//! apart by blank lines.

use crate::syntax::keys;

/// A place in a contract file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Place {
    /// The document: the contract's top-level keys.
    Root,
    /// The value of a top-level key.
    Section(Section),
    Rule,
    Finding,
    Table,
    Effect,
    Test,
    Expect,
    Window,
    Model,
    /// Anything else: input fields, rows, test inputs, values.
    Other,
}

/// The top-level sections whose entries are declarations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Section {
    Rules,
    Tests,
    Tables,
    Effects,
    Windows,
    Models,
    /// `input`, `let` and `extern`: names and what they are.
    Names,
}

impl Place {
    /// The place of the value under `key` (`None` for a list's items).
    pub fn child(self, key: Option<&str>) -> Place {
        match (self, key) {
            (Place::Root, Some(key)) => match key {
                "rules" => Place::Section(Section::Rules),
                "tests" => Place::Section(Section::Tests),
                "tables" => Place::Section(Section::Tables),
                "effects" => Place::Section(Section::Effects),
                "windows" => Place::Section(Section::Windows),
                "models" => Place::Section(Section::Models),
                "input" | "let" | "extern" => Place::Section(Section::Names),
                _ => Place::Other,
            },
            (Place::Section(section), _) => match section {
                Section::Rules => Place::Rule,
                Section::Tests => Place::Test,
                Section::Tables => Place::Table,
                Section::Effects => Place::Effect,
                Section::Windows => Place::Window,
                Section::Models => Place::Model,
                Section::Names => Place::Other,
            },
            (Place::Rule, Some("finding")) => Place::Finding,
            (Place::Test, Some("expect")) => Place::Expect,
            _ => Place::Other,
        }
    }

    /// The keys of a mapping here, in the order they are written; keys
    /// not in it follow them in the author's order.
    pub fn keys(self) -> Option<&'static [&'static str]> {
        Some(match self {
            Place::Root => keys::CONTRACT,
            Place::Rule => keys::RULE,
            Place::Finding => keys::FINDING,
            Place::Table => keys::TABLE,
            Place::Effect => keys::EFFECT,
            Place::Test => keys::TEST,
            Place::Expect => keys::EXPECT,
            Place::Window => keys::WINDOW,
            Place::Model => keys::MODEL,
            Place::Section(_) | Place::Other => return None,
        })
    }

    /// Whether a short collection here is written on one line: never the
    /// contract, its sections of declarations, a rule, a test or a window.
    pub fn flow_allowed(self) -> bool {
        !matches!(self, Place::Root | Place::Section(_) | Place::Rule | Place::Test | Place::Window)
    }

    /// Whether entries here that take several lines are set apart by a
    /// blank line: the contract's sections, its rules and its tests.
    pub fn spaced(self) -> bool {
        matches!(self, Place::Root | Place::Section(Section::Rules | Section::Tests))
    }
}
