//! `rulec lsp`: a language server for contract files, over stdio.
//!
//! It publishes the diagnostics `rulec check` gives (same codes, messages
//! and spans) as a document is opened and edited; shows on hover what a
//! name is (the type of an input field, a let, a table, a window
//! aggregate; a built-in's signature) or what a key means; goes to where
//! a name is declared; completes keys (by where the cursor is) and names
//! (in expressions, fields after `.`); shows the signature of the
//! function being called; finds a declaration's references, highlights
//! and renames them; shows lets' types inline; offers the fix a "did you
//! mean" proposes; colours the names in expressions; outlines the
//! document's declarations; formats through `rulec fmt`.
//!
//! Modules: [`transport`] frames messages (robust to what a client may
//! send); [`server`] holds the session and dispatches; [`document`] is an
//! open document, [`analysis`] compiles it with the `frontend`;
//! [`answer`] answers each request, with [`symbols`] (what a place
//! names), [`navigate`] (hover, definition), [`complete`], [`signature`],
//! [`rename`] (references, rename), [`fixes`], [`tokens`], [`hints`] and
//! [`outline`]; [`position`] converts offsets.
//! It knows nothing about evaluation: it depends on `frontend` and `ir`
//! only.

mod analysis;
mod answer;
mod complete;
mod document;
mod fixes;
#[cfg(test)]
mod fuzz;
mod hints;
mod navigate;
mod outline;
mod position;
mod rename;
mod server;
mod signature;
mod symbols;
mod tokens;
mod transport;

use std::io::{self, BufReader};

use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    HoverProviderCapability, InitializeResult, OneOf, RenameOptions, SemanticTokensFullOptions,
    SemanticTokensOptions, SemanticTokensServerCapabilities, ServerCapabilities, ServerInfo,
    SignatureHelpOptions, TextDocumentSyncCapability, TextDocumentSyncKind, WorkDoneProgressOptions,
};

/// What the server does, for `initialize`, with the column encoding it
/// chose from the client's.
fn capabilities(encoding: position::Encoding) -> InitializeResult {
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(encoding.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![".".into()]),
                ..CompletionOptions::default()
            }),
            document_formatting_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            references_provider: Some(OneOf::Left(true)),
            document_highlight_provider: Some(OneOf::Left(true)),
            inlay_hint_provider: Some(OneOf::Left(true)),
            signature_help_provider: Some(SignatureHelpOptions {
                trigger_characters: Some(vec!["(".into(), ",".into()]),
                ..SignatureHelpOptions::default()
            }),
            semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
                SemanticTokensOptions {
                    legend: tokens::legend(),
                    full: Some(SemanticTokensFullOptions::Bool(true)),
                    ..SemanticTokensOptions::default()
                },
            )),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                ..CodeActionOptions::default()
            })),
            rename_provider: Some(OneOf::Right(RenameOptions {
                prepare_provider: Some(true),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            })),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo {
            name: "rulec".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    }
}

/// Serves the protocol on stdin and stdout until `exit` or the end of
/// stdin; `Ok(true)` when the client shut the server down first.
pub fn serve_stdio() -> io::Result<bool> {
    let (sender, receiver) = crossbeam_channel::bounded(16);
    let reader = std::thread::Builder::new().name("lsp-reader".into()).spawn(move || {
        let mut input = BufReader::new(io::stdin().lock());
        while let Ok(Some(frame)) = transport::read(&mut input) {
            if sender.send(frame).is_err() {
                break;
            }
        }
    })?;
    let outcome = server::Server::new(io::stdout().lock()).run(receiver);
    drop(reader);
    outcome
}
