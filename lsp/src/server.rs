//! The session: the handshake, the open documents and the dispatch of
//! each message. Diagnostics are published when no message is waiting,
//! so a burst of edits is compiled once, at its last version. Nothing a
//! client sends ends the session but `exit` or the end of its input: an
//! unknown method is answered `MethodNotFound`, bad parameters
//! `InvalidParams`, a request before `initialize` `ServerNotInitialized`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use frontend::ast::Contract;
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::{
    CompletionParams, DocumentFormattingParams, DocumentHighlight, DocumentHighlightKind,
    GotoDefinitionParams, Hover, HoverContents, HoverParams, Location, MarkupContent, MarkupKind, Position,
    PublishDiagnosticsParams, Range, TextEdit, Uri, WorkspaceEdit,
};
use serde_json::Value;

use crate::analysis::{self, Analysis};
use crate::position::{Encoding, LineIndex};
use crate::transport::{self, Frame};
use crate::{capabilities, complete, fixes, hints, navigate, outline, rename, signature, symbols, tokens};

/// One open document.
struct Document {
    uri: Uri,
    path: PathBuf,
    version: i32,
    text: String,
    /// The analysis of `text`, once made.
    analysis: Option<Analysis>,
    /// The last syntax tree and checked contract there were, for
    /// completing and hovering while the text does not compile.
    last_ast: Option<Arc<Contract>>,
    last_contract: Option<Arc<ir::Contract>>,
    published: bool,
}

impl Document {
    fn analyse(&mut self) -> &Analysis {
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

#[derive(PartialEq, Eq)]
enum State {
    Uninitialized,
    Running,
    ShutDown,
}

pub struct Server<W: Write> {
    output: W,
    state: State,
    documents: HashMap<String, Document>,
    /// How positions count columns, agreed at `initialize`.
    encoding: Encoding,
}

impl<W: Write> Server<W> {
    pub fn new(output: W) -> Self {
        Server { output, state: State::Uninitialized, documents: HashMap::new(), encoding: Encoding::Utf16 }
    }

    /// Serves until `exit` or the end of the input; `Ok(true)` when the
    /// client shut down first (exit code 0), as the protocol asks.
    pub fn run(mut self, frames: Receiver<Frame>) -> io::Result<bool> {
        loop {
            let frame = match frames.try_recv() {
                Ok(frame) => frame,
                Err(_) => {
                    self.publish()?;
                    match frames.recv() {
                        Ok(frame) => frame,
                        Err(_) => return Ok(self.state == State::ShutDown),
                    }
                }
            };
            match frame {
                Frame::Malformed(why) => self.parse_error(&why)?,
                Frame::Message(Message::Request(request)) => self.request(request)?,
                Frame::Message(Message::Notification(n)) if n.method == "exit" => {
                    return Ok(self.state == State::ShutDown);
                }
                Frame::Message(Message::Notification(n)) => self.notification(n),
                Frame::Message(Message::Response(_)) => {}
            }
        }
    }

    fn send(&mut self, message: impl Into<Message>) -> io::Result<()> {
        transport::write(&mut self.output, message.into())
    }

    /// JSON-RPC's answer to a frame that is not a message: a parse error
    /// with a null id (which `lsp_server`'s types cannot say).
    fn parse_error(&mut self, why: &str) -> io::Result<()> {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": ErrorCode::ParseError as i32, "message": why },
        })
        .to_string();
        write!(self.output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
        self.output.flush()
    }

    fn request(&mut self, request: Request) -> io::Result<()> {
        let id = request.id.clone();
        let response = match (&self.state, request.method.as_str()) {
            (State::Uninitialized, "initialize") => {
                self.state = State::Running;
                self.encoding = negotiate(&request.params);
                Response::new_ok(id, capabilities(self.encoding))
            }
            (State::Uninitialized, _) => {
                Response::new_err(id, ErrorCode::ServerNotInitialized as i32, "initialize first".into())
            }
            (State::ShutDown, _) => {
                Response::new_err(id, ErrorCode::InvalidRequest as i32, "the server was shut down".into())
            }
            (State::Running, "shutdown") => {
                self.state = State::ShutDown;
                Response::new_ok(id, Value::Null)
            }
            (State::Running, method) => match self.answer(method, request.params) {
                Ok(result) => Response::new_ok(id, result),
                Err((code, message)) => Response::new_err(id, code as i32, message),
            },
        };
        self.send(response)
    }

    /// The result of a request, or its error.
    fn answer(&mut self, method: &str, params: Value) -> Result<Value, (ErrorCode, String)> {
        fn parse<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, (ErrorCode, String)> {
            serde_json::from_value(params).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
        }
        let json = |v: Option<Value>| v.unwrap_or(Value::Null);
        match method {
            "textDocument/hover" => {
                let p: HoverParams = parse(params)?;
                Ok(json(self.hover(
                    &p.text_document_position_params.text_document.uri,
                    p.text_document_position_params.position,
                )))
            }
            "textDocument/definition" => {
                let p: GotoDefinitionParams = parse(params)?;
                let at = p.text_document_position_params;
                Ok(json(self.definition(&at.text_document.uri, at.position)))
            }
            "textDocument/completion" => {
                let p: CompletionParams = parse(params)?;
                let at = p.text_document_position;
                Ok(json(self.completion(&at.text_document.uri, at.position)))
            }
            "textDocument/references" => {
                let p: lsp_types::ReferenceParams = parse(params)?;
                let at = p.text_document_position;
                Ok(json(self.references(&at.text_document.uri, at.position, p.context.include_declaration)))
            }
            "textDocument/documentHighlight" => {
                let p: lsp_types::DocumentHighlightParams = parse(params)?;
                let at = p.text_document_position_params;
                Ok(json(self.highlights(&at.text_document.uri, at.position)))
            }
            "textDocument/inlayHint" => {
                let p: lsp_types::InlayHintParams = parse(params)?;
                Ok(json(self.hints(&p.text_document.uri, p.range)))
            }
            "textDocument/prepareRename" => {
                let at: lsp_types::TextDocumentPositionParams = parse(params)?;
                self.rename(&at.text_document.uri, at.position, None)
            }
            "textDocument/rename" => {
                let p: lsp_types::RenameParams = parse(params)?;
                let at = p.text_document_position;
                self.rename(&at.text_document.uri, at.position, Some(&p.new_name))
            }
            "textDocument/codeAction" => {
                let p: lsp_types::CodeActionParams = parse(params)?;
                Ok(json(self.code_actions(&p.text_document.uri, p.range)))
            }
            "textDocument/semanticTokens/full" => {
                let p: lsp_types::SemanticTokensParams = parse(params)?;
                Ok(json(self.tokens(&p.text_document.uri)))
            }
            "textDocument/documentSymbol" => {
                let p: lsp_types::DocumentSymbolParams = parse(params)?;
                Ok(json(self.outline(&p.text_document.uri)))
            }
            "textDocument/signatureHelp" => {
                let p: lsp_types::SignatureHelpParams = parse(params)?;
                let at = p.text_document_position_params;
                Ok(json(self.signature(&at.text_document.uri, at.position)))
            }
            "textDocument/formatting" => {
                let p: DocumentFormattingParams = parse(params)?;
                Ok(json(self.formatting(&p.text_document.uri)))
            }
            _ => Err((ErrorCode::MethodNotFound, format!("`{method}` is not served"))),
        }
    }

    fn notification(&mut self, n: Notification) {
        if self.state != State::Running {
            return;
        }
        let params = n.params;
        match n.method.as_str() {
            "textDocument/didOpen" => {
                if let Ok(p) = serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(params) {
                    let d = p.text_document;
                    self.update(d.uri, d.version, d.text);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(params)
                    && let Some(change) = p.content_changes.into_iter().last()
                {
                    let d = p.text_document;
                    self.update(d.uri, d.version, change.text);
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(params)
                    && let Some(document) = self.documents.remove(p.text_document.uri.as_str())
                {
                    let cleared = PublishDiagnosticsParams::new(document.uri, Vec::new(), None);
                    let _ = self.send(Notification::new("textDocument/publishDiagnostics".into(), cleared));
                }
            }
            _ => {}
        }
    }

    /// A document's new text (the whole of it: the server asks for full
    /// sync); an older version than the one held is ignored.
    fn update(&mut self, uri: Uri, version: i32, text: String) {
        let key = uri.as_str().to_string();
        if let Some(document) = self.documents.get_mut(&key) {
            if version < document.version {
                return;
            }
            document.version = version;
            document.text = text;
            document.analysis = None;
            document.published = false;
            return;
        }
        let path = file_path(&uri);
        let document = Document {
            uri,
            path,
            version,
            text,
            analysis: None,
            last_ast: None,
            last_contract: None,
            published: false,
        };
        self.documents.insert(key, document);
    }

    /// Publishes the diagnostics of every document changed since.
    fn publish(&mut self) -> io::Result<()> {
        let mut notes = Vec::new();
        for document in self.documents.values_mut().filter(|d| !d.published) {
            document.published = true;
            let version = document.version;
            let uri = document.uri.clone();
            let text = document.text.clone();
            let index = LineIndex::new(&text, self.encoding);
            let analysis = document.analyse();
            let diagnostics =
                analysis.diagnostics.iter().map(|d| analysis::to_lsp(d, &index, &uri)).collect();
            notes.push(PublishDiagnosticsParams::new(uri, diagnostics, Some(version)));
        }
        for note in notes {
            self.send(Notification::new("textDocument/publishDiagnostics".into(), note))?;
        }
        Ok(())
    }

    /// The document at `uri` analysed, and the byte offset of `position`.
    fn at(&mut self, uri: &Uri, position: Position) -> Option<(&mut Document, usize)> {
        let document = self.documents.get_mut(uri.as_str())?;
        let offset = LineIndex::new(&document.text, self.encoding).offset(position);
        document.analyse();
        Some((document, offset))
    }

    fn hover(&mut self, uri: &Uri, position: Position) -> Option<Value> {
        let encoding = self.encoding;
        let (document, offset) = self.at(uri, position)?;
        let index = LineIndex::new(&document.text, encoding);
        let markup = |value: String, start: usize, end: usize| Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: Some(index.range(start, end)),
        };
        let ast = document.analysis.as_ref()?.ast.as_ref();
        let Some(reference) = ast.and_then(|ast| symbols::at(ast, offset)) else {
            let (doc, start, end) = complete::key_hover(&document.text, offset)?;
            return serde_json::to_value(markup(doc, start, end)).ok();
        };
        let contract = document.last_contract.as_deref();
        let markdown = navigate::hover(ast?, contract, &document.text, &reference)?;
        let hover = markup(markdown, reference.span.start as usize, reference.span.end as usize);
        serde_json::to_value(hover).ok()
    }

    fn definition(&mut self, uri: &Uri, position: Position) -> Option<Value> {
        let encoding = self.encoding;
        let (document, offset) = self.at(uri, position)?;
        let ast = document.analysis.as_ref()?.ast.as_ref()?;
        let span = navigate::definition(ast, &symbols::at(ast, offset)?)?;
        let range = LineIndex::new(&document.text, encoding).range(span.start as usize, span.end as usize);
        serde_json::to_value(Location::new(document.uri.clone(), range)).ok()
    }

    fn completion(&mut self, uri: &Uri, position: Position) -> Option<Value> {
        let (document, offset) = self.at(uri, position)?;
        let ast = document.last_ast.clone();
        let items =
            complete::complete(&document.text, offset, ast.as_deref(), document.last_contract.as_deref());
        serde_json::to_value(items).ok()
    }

    fn references(&mut self, uri: &Uri, position: Position, declaration: bool) -> Option<Value> {
        let encoding = self.encoding;
        let (document, offset) = self.at(uri, position)?;
        let ast = document.analysis.as_ref()?.ast.as_ref()?;
        let spans = rename::references(ast, &symbols::at(ast, offset)?, declaration);
        let index = LineIndex::new(&document.text, encoding);
        let range = |s: frontend::Span| index.range(s.start as usize, s.end as usize);
        let locations: Vec<Location> =
            spans.into_iter().map(|s| Location::new(uri.clone(), range(s))).collect();
        serde_json::to_value(locations).ok()
    }

    /// The places that name what the cursor names: its declaration
    /// written, the others read.
    fn highlights(&mut self, uri: &Uri, position: Position) -> Option<Value> {
        let encoding = self.encoding;
        let (document, offset) = self.at(uri, position)?;
        let ast = document.analysis.as_ref()?.ast.as_ref()?;
        let reference = symbols::at(ast, offset)?;
        let declaration = navigate::definition(ast, &reference);
        let index = LineIndex::new(&document.text, encoding);
        let highlights: Vec<DocumentHighlight> = rename::references(ast, &reference, true)
            .into_iter()
            .map(|s| DocumentHighlight {
                range: index.range(s.start as usize, s.end as usize),
                kind: Some(if Some(s) == declaration {
                    DocumentHighlightKind::WRITE
                } else {
                    DocumentHighlightKind::READ
                }),
            })
            .collect();
        serde_json::to_value(highlights).ok()
    }

    fn hints(&mut self, uri: &Uri, range: Range) -> Option<Value> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri.as_str())?;
        document.analyse();
        let analysis = document.analysis.as_ref()?;
        let (ast, contract) = (analysis.ast.as_ref()?, analysis.contract.as_deref()?);
        serde_json::to_value(hints::hints(ast, contract, &LineIndex::new(&document.text, encoding), range))
            .ok()
    }

    /// `prepareRename` (no `new_name`): the range a rename would change;
    /// `rename`: the edits. A place that cannot be renamed, or a name
    /// that cannot be taken, is answered `RequestFailed` saying why.
    fn rename(
        &mut self,
        uri: &Uri,
        position: Position,
        new_name: Option<&str>,
    ) -> Result<Value, (ErrorCode, String)> {
        let encoding = self.encoding;
        let failed = |why: &str| (ErrorCode::RequestFailed, why.to_string());
        let (document, offset) = self.at(uri, position).ok_or_else(|| failed("the document is not open"))?;
        let ast = document.analysis.as_ref().and_then(|a| a.ast.as_ref());
        let ast = ast.ok_or_else(|| failed("the document's YAML does not read: fix it first"))?;
        let reference = symbols::at(ast, offset).ok_or_else(|| failed("there is no name here"))?;
        let index = LineIndex::new(&document.text, encoding);
        let range = |s: frontend::Span| index.range(s.start as usize, s.end as usize);
        let Some(new_name) = new_name else {
            let span = rename::prepare(ast, &reference).map_err(|why| failed(&why))?;
            return Ok(serde_json::to_value(range(span)).unwrap_or_default());
        };
        let spans = rename::rename(ast, &reference, new_name).map_err(|why| failed(&why))?;
        let edits = spans.into_iter().map(|s| TextEdit::new(range(s), new_name.to_string())).collect();
        let change = WorkspaceEdit::new(HashMap::from([(uri.clone(), edits)]));
        Ok(serde_json::to_value(change).unwrap_or_default())
    }

    fn code_actions(&mut self, uri: &Uri, range: Range) -> Option<Value> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri.as_str())?;
        document.analyse();
        let analysis = document.analysis.as_ref()?;
        let index = LineIndex::new(&document.text, encoding);
        serde_json::to_value(fixes::quick_fixes(analysis, &document.text, &index, uri, range)).ok()
    }

    /// The names of the document's expressions, as it is now (none while
    /// its YAML does not read).
    fn tokens(&mut self, uri: &Uri) -> Option<Value> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri.as_str())?;
        document.analyse();
        let ast = document.analysis.as_ref()?.ast.as_ref()?;
        serde_json::to_value(tokens::tokens(ast, &LineIndex::new(&document.text, encoding))).ok()
    }

    /// The declarations of the document as it is now (none while its YAML
    /// does not read).
    fn outline(&mut self, uri: &Uri) -> Option<Value> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri.as_str())?;
        document.analyse();
        let ast = document.analysis.as_ref()?.ast.as_ref()?;
        serde_json::to_value(outline::outline(ast, &LineIndex::new(&document.text, encoding))).ok()
    }

    fn signature(&mut self, uri: &Uri, position: Position) -> Option<Value> {
        let (document, offset) = self.at(uri, position)?;
        let ast = document.last_ast.clone();
        serde_json::to_value(signature::help(&document.text, offset, ast.as_deref())?).ok()
    }

    /// The whole document as `rulec fmt` writes it: one edit, or none
    /// when it is formatted already or is not valid YAML (its diagnostics
    /// say why).
    fn formatting(&mut self, uri: &Uri) -> Option<Value> {
        let document = self.documents.get(uri.as_str())?;
        let file = frontend::SourceFile::new(document.path.display().to_string(), document.text.as_str());
        let formatted = frontend::format::format(&file).ok().filter(|f| *f != document.text);
        let edits: Vec<TextEdit> = formatted
            .map(|new_text| {
                let end = LineIndex::new(&document.text, self.encoding).position(document.text.len());
                vec![TextEdit::new(Range::new(Position::new(0, 0), end), new_text)]
            })
            .unwrap_or_default();
        serde_json::to_value(edits).ok()
    }
}

/// The column encoding for `initialize`'s parameters, from the client's
/// `general.positionEncodings` (UTF-16 when they name none the server
/// knows, or are not what the protocol says).
fn negotiate(params: &Value) -> Encoding {
    let offered = params.pointer("/capabilities/general/positionEncodings").and_then(Value::as_array);
    Encoding::negotiate(offered.into_iter().flatten().filter_map(Value::as_str))
}

/// The file a `file://` URI names (percent-decoded); for another scheme,
/// a name in the working folder (its model files are not found).
fn file_path(uri: &Uri) -> PathBuf {
    let text = uri.as_str();
    let Some(path) = text.strip_prefix("file://") else { return PathBuf::from("contract.yaml") };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(high), Some(low)) => {
                decoded.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    PathBuf::from(String::from_utf8_lossy(&decoded).into_owned())
}
