//! When a contract becomes native code: at load (`Jit::On`), in the
//! background once hot (`Jit::Auto`), or at once for a batch; a failed
//! or panicking compilation leaves it interpreted, saying why.

use std::sync::atomic::Ordering;

use super::{Contract, Jit, NativeStatus};

impl Contract {
    /// How many evaluations native code finished, and how many it handed
    /// back to the interpreter (errors, constructs it does not compile).
    pub fn native_counts(&self) -> (u64, u64) {
        (self.native_runs.load(Ordering::Relaxed), self.fallbacks.load(Ordering::Relaxed))
    }

    /// Which engine evaluates this contract now.
    pub fn native_status(&self) -> NativeStatus {
        self.status.lock().map(|s| s.clone()).unwrap_or(NativeStatus::Interpreted)
    }

    /// Compiles to native code now (`Jit::On`); a failure, or a panic in
    /// the compiler, leaves the contract interpreted and is kept in
    /// [`Contract::native_status`].
    pub fn compile_now(&self) {
        let Some(compiler) = &self.compiler else { return };
        let compiled =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compiler.compile(&self.program)))
                .unwrap_or_else(|_| Err("the native compiler panicked".into()));
        let status = match compiled {
            Ok(native) => {
                let _ = self.native.set(native);
                NativeStatus::Native
            }
            Err(why) => NativeStatus::Failed(why),
        };
        if let Ok(mut slot) = self.status.lock() {
            *slot = status;
        }
    }

    /// Starts compiling on a background thread (once); evaluations go on
    /// interpreted and switch atomically when the code is ready.
    pub fn compile_in_background(&self) {
        if self.compiler.is_none() || self.native.get().is_some() {
            return;
        }
        {
            let Ok(mut status) = self.status.lock() else { return };
            if *status != NativeStatus::Interpreted {
                return;
            }
            *status = NativeStatus::Compiling;
        }
        let me = self.me.clone();
        let spawned = std::thread::Builder::new().name("rulec-jit".into()).spawn(move || {
            if let Some(contract) = me.upgrade() {
                contract.compile_now();
            }
        });
        if spawned.is_err()
            && let Ok(mut status) = self.status.lock()
        {
            *status = NativeStatus::Interpreted;
        }
    }

    /// Readies the contract for many evaluations: under `Jit::Auto`,
    /// compiles it to native code now (a batch is hot from its first
    /// record; a failure keeps it interpreted, as `compile_now` says).
    pub fn compile_for_batch(&self) {
        if self.jit == Jit::Auto
            && self.native.get().is_none()
            && self.native_status() == NativeStatus::Interpreted
        {
            self.compile_now();
        }
    }
}
