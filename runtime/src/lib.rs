//! The runtime: values, the interpreter and the `Engine` API over bundles.
//!
//! Not yet built: issue 3 fills this crate. It depends on `ir` only and
//! never on Cranelift.
