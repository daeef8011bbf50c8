//! Syntax: the YAML reader, scalar position maps, and the expression
//! lexer and parser.

pub mod contract;
pub mod expr;
pub mod keys;
pub mod lexer;
pub mod scalar;
pub mod template;
pub mod types;
pub mod yaml;
