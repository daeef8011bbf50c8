//! Inputs, validated against the contract's schema and laid out as the
//! engines read them: [`request`] (one request's envelope and input,
//! every problem with its path) and [`records`] (many input records laid
//! out row after row, for batch evaluation).

pub mod records;
pub mod request;
