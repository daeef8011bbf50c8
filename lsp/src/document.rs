//! An open document: its text, its analysis (made once per version) and
//! the last syntax tree and checked contract there were; and a view of
//! one, analysed, with the line index that converts its positions.

use std::path::PathBuf;
use std::sync::Arc;

use frontend::Span;
use frontend::ast::Contract;
use lsp_types::{Range, Uri};

use crate::analysis::{self, Analysis};
use crate::position::LineIndex;

/// One open document.
pub struct Document {
    pub uri: Uri,
    pub path: PathBuf,
    pub version: i32,
    pub text: String,
    /// The analysis of `text`, once made.
    pub analysis: Option<Analysis>,
    /// The last syntax tree and checked contract there were, for
    /// completing and hovering while the text does not compile.
    pub last_ast: Option<Arc<Contract>>,
    pub last_contract: Option<Arc<ir::Contract>>,
    pub published: bool,
}

impl Document {
    pub fn new(uri: Uri, path: PathBuf, version: i32, text: String) -> Document {
        let (analysis, last_ast, last_contract) = (None, None, None);
        Document { uri, path, version, text, analysis, last_ast, last_contract, published: false }
    }

    /// A new version of the text, analysed when next asked about.
    pub fn change(&mut self, version: i32, text: String) {
        self.version = version;
        self.text = text;
        self.analysis = None;
        self.published = false;
    }

    pub fn analyse(&mut self) -> &Analysis {
        if self.analysis.is_none() {
            let analysis = analysis::analyse(&self.path, &self.text);
            if let Some(ast) = &analysis.ast {
                self.last_ast = Some(Arc::new(ast.clone()));
            }
            if let Some(contract) = &analysis.contract {
                self.last_contract = Some(contract.clone());
            }
            self.analysis = Some(analysis);
        }
        self.analysis.as_ref().expect("analysed above")
    }
}

/// An analysed document, read by the answers to requests.
pub struct View<'d> {
    pub document: &'d Document,
    pub index: LineIndex<'d>,
}

impl<'d> View<'d> {
    pub fn text(&self) -> &'d str {
        &self.document.text
    }

    pub fn analysis(&self) -> &'d Analysis {
        self.document.analysis.as_ref().expect("a view is of an analysed document")
    }

    /// The syntax tree of the text as it is, when its YAML reads.
    pub fn ast(&self) -> Option<&'d Contract> {
        self.analysis().ast.as_ref()
    }

    pub fn range(&self, span: Span) -> Range {
        self.index.range(span.start as usize, span.end as usize)
    }
}
