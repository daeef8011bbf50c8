//! The contract's window state: made at the first use, adopted from the
//! previous revision on a reload when the windows are the same, or a
//! fresh one per `rulec test` case.

use std::sync::Arc;

use crate::result::Evaluation;
use crate::signals::WindowState;

use super::{Contract, EvaluateError, Request};

impl Contract {
    /// Empty window state for this contract, as [`Contract::evaluate_in`]
    /// takes (`rulec test` gives each case its own, and runs its
    /// `history:` in it first). `None` for a contract without windows.
    pub fn new_window_state(&self) -> Option<WindowState> {
        if self.program.windows.is_empty() {
            return None;
        }
        WindowState::new(&self.program, self.window_limits).ok()
    }

    /// Evaluates `request` with its record entered into `state` instead of
    /// the contract's own window state.
    pub fn evaluate_in(
        &self,
        request: &Request<'_>,
        state: &WindowState,
    ) -> Result<Evaluation<'_>, EvaluateError> {
        self.interpret_in(request, Some(state))
    }

    /// The contract's window state (`None` without windows).
    pub fn window_state(&self) -> Option<&Arc<WindowState>> {
        if self.program.windows.is_empty() {
            return None;
        }
        if let Some(state) = self.windows.get() {
            return Some(state);
        }
        let fresh = self.new_window_state()?;
        Some(self.windows.get_or_init(|| Arc::new(fresh)))
    }

    /// Takes over `previous`'s window state (the same contract's earlier
    /// revision) when the windows are the same, as SIGNALS.md says of a
    /// reload: the same keys, times, spans and aggregates, over the same
    /// lets. Returns whether it did; it cannot once this contract has
    /// evaluated a record.
    pub fn adopt_windows(&self, previous: &Contract) -> bool {
        let same =
            crate::signals::window_signature(self.ir()) == crate::signals::window_signature(previous.ir());
        match previous.windows.get() {
            Some(state) if same && !self.program.windows.is_empty() => {
                self.windows.set(state.clone()).is_ok()
            }
            _ => false,
        }
    }
}
