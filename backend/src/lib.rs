//! The Cranelift JIT backend.
//!
//! Not yet built: issue 4 fills this crate.
