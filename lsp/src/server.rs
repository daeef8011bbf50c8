//! The session: the handshake, the open documents and the dispatch of
//! each message. Diagnostics are published when no message is waiting,
//! so a burst of edits is compiled once, at its last version. Nothing a
//! client sends ends the session but `exit` or the end of its input: an
//! unknown method is answered `MethodNotFound`, bad parameters
//! `InvalidParams`, a request before `initialize` `ServerNotInitialized`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crossbeam_channel::Receiver;
use lsp_server::{ErrorCode, Message, Notification, Request, Response};
use lsp_types::{PublishDiagnosticsParams, TextDocumentIdentifier, TextDocumentPositionParams, Uri};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::document::{Document, View};
use crate::position::{Encoding, LineIndex};
use crate::transport::{self, Frame};
use crate::{analysis, answer, capabilities};

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
                Frame::UnreadableId(id) => self.unreadable_id(&id)?,
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

    /// The answer to a request whose id is neither a string nor an
    /// integer of 32 bits (LSP's `integer`): `InvalidRequest`, with the id
    /// as sent, so the client is not left waiting.
    fn unreadable_id(&mut self, id: &Value) -> io::Result<()> {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": ErrorCode::InvalidRequest as i32,
                "message": format!("a request's id must be a string or an integer of 32 bits, got {id}"),
            },
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
            (State::Running, "initialize") => Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is already initialized: `initialize` is sent once a session".into(),
            ),
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
        let at = |params: Value| parse::<TextDocumentPositionParams>(params);
        match method {
            "textDocument/hover" => Ok(self.at(at(params)?, answer::hover)),
            "textDocument/definition" => Ok(self.at(at(params)?, answer::definition)),
            "textDocument/completion" => Ok(self.at(at(params)?, answer::completion)),
            "textDocument/signatureHelp" => Ok(self.at(at(params)?, answer::signature)),
            "textDocument/documentHighlight" => Ok(self.at(at(params)?, answer::highlights)),
            "textDocument/references" => {
                let p: lsp_types::ReferenceParams = parse(params)?;
                let declaration = p.context.include_declaration;
                Ok(self.at(p.text_document_position, |view, offset| {
                    answer::references(view, offset, declaration)
                }))
            }
            "textDocument/prepareRename" => self.rename(at(params)?, None),
            "textDocument/rename" => {
                let p: lsp_types::RenameParams = parse(params)?;
                self.rename(p.text_document_position, Some(&p.new_name))
            }
            "textDocument/inlayHint" => {
                let p: lsp_types::InlayHintParams = parse(params)?;
                Ok(self.on(&p.text_document.uri, |view| answer::hints(view, p.range)))
            }
            "textDocument/codeAction" => {
                let p: lsp_types::CodeActionParams = parse(params)?;
                Ok(self.on(&p.text_document.uri, |view| answer::code_actions(view, p.range)))
            }
            "textDocument/semanticTokens/full"
            | "textDocument/documentSymbol"
            | "textDocument/formatting" => {
                let document = parse::<OfDocument>(params)?.text_document;
                let answer = match method {
                    "textDocument/semanticTokens/full" => answer::tokens,
                    "textDocument/documentSymbol" => answer::outline,
                    _ => answer::formatting,
                };
                Ok(self.on(&document.uri, answer))
            }
            _ => Err((ErrorCode::MethodNotFound, format!("`{method}` is not served"))),
        }
    }

    /// The open document at `uri`, analysed, with its line index.
    fn view(&mut self, uri: &Uri) -> Option<View<'_>> {
        let encoding = self.encoding;
        let document = self.documents.get_mut(uri.as_str())?;
        document.analyse();
        let document = &*document;
        Some(View { index: LineIndex::new(&document.text, encoding), document })
    }

    /// `answer` about the document at `uri`; `null` when it is not open or
    /// there is nothing to say.
    fn on(&mut self, uri: &Uri, answer: impl FnOnce(&View<'_>) -> Option<Value>) -> Value {
        self.view(uri).and_then(|view| answer(&view)).unwrap_or(Value::Null)
    }

    /// `answer` at a position of a document (as a byte offset).
    fn at(
        &mut self,
        place: TextDocumentPositionParams,
        answer: impl FnOnce(&View<'_>, usize) -> Option<Value>,
    ) -> Value {
        let position = place.position;
        self.on(&place.text_document.uri, |view| answer(view, view.index.offset(position)))
    }

    /// A rename, or the range it would change: `RequestFailed` saying why
    /// when there is nothing to rename, or no such name to take.
    fn rename(
        &mut self,
        place: TextDocumentPositionParams,
        new_name: Option<&str>,
    ) -> Result<Value, (ErrorCode, String)> {
        let position = place.position;
        let failed = |why: String| (ErrorCode::RequestFailed, why);
        let view =
            self.view(&place.text_document.uri).ok_or_else(|| failed("the document is not open".into()))?;
        answer::rename(&view, view.index.offset(position), new_name).map_err(failed)
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
        match self.documents.get_mut(&key) {
            Some(document) if version >= document.version => document.change(version, text),
            Some(_) => {}
            None => {
                let path = file_path(&uri);
                self.documents.insert(key, Document::new(uri, path, version, text));
            }
        }
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
}

/// The parameters of a request about a whole document (its other
/// parameters are not needed).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OfDocument {
    text_document: TextDocumentIdentifier,
}

fn parse<P: DeserializeOwned>(params: Value) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(params).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
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
