//! `rulec lsp`: the language server, over stdio (crate `lsp`;
//! docs/EDITORS.md says how editors start it).

use crate::{Failure, Outcome};

/// Serve the Language Server Protocol on stdin and stdout, for editors.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Editors start it; see docs/EDITORS.md for VS Code, Neovim and Helix.\n\nExamples:\n  rulec lsp"
)]
pub struct Args {}

/// Exits 0 after `shutdown` then `exit`, 1 when the client exits or
/// closes stdin without shutting down (as the protocol asks).
pub fn run(_args: Args) -> Outcome {
    match lsp::serve_stdio() {
        Ok(true) => Ok(()),
        Ok(false) => Err(Failure::Reported),
        Err(e) => Err(Failure::Usage(format!("the language server's stdio failed: {e}"))),
    }
}
