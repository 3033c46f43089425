//! Lenient parse with JSON paths: serde errors reported at the path where they happened.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Lenient parse with paths
// ---------------------------------------------------------------------------------------------

/// A default-parse failure with the JSON path where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The JSON path (`message.parts[1].raw`; `$` for the root).
    pub path: String,
    /// What went wrong (serde's message).
    pub message: String,
    /// 1-based line in the input (0 when parsed from a value).
    pub line: usize,
    /// 1-based column in the input (0 when parsed from a value).
    pub column: usize,
}

impl ParseError {
    /// True if the input was not JSON at all (as opposed to JSON of the wrong shape).
    pub fn is_syntax(&self) -> bool {
        self.message.starts_with("syntax: ")
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ParseError {}

fn normalize_path(p: String) -> String {
    if p == "." || p.is_empty() {
        "$".into()
    } else {
        p
    }
}

fn from_json_err(path: String, e: serde_json::Error) -> ParseError {
    let msg = e.to_string();
    // serde_json appends " at line X column Y"; keep the message short.
    let message = match msg.rfind(" at line ") {
        Some(i) if e.line() > 0 => msg[..i].to_owned(),
        _ => msg,
    };
    let message = if e.is_syntax() || e.is_eof() {
        format!("syntax: {message}")
    } else {
        message
    };
    ParseError {
        path: normalize_path(path),
        message,
        line: e.line(),
        column: e.column(),
    }
}

/// Parses `T` from JSON text, reporting the path of the first failure.
pub fn parse<T: DeserializeOwned>(s: &str) -> Result<T, ParseError> {
    parse_slice(s.as_bytes())
}

/// Parses `T` from JSON bytes, reporting the path of the first failure.
pub fn parse_slice<T: DeserializeOwned>(b: &[u8]) -> Result<T, ParseError> {
    let mut de = serde_json::Deserializer::from_slice(b);
    let r = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| from_json_err(e.path().to_string(), e.into_inner()))?;
    de.end().map_err(|e| from_json_err(String::new(), e))?;
    Ok(r)
}

/// Parses `T` from a JSON value, reporting the path of the first failure.
pub fn parse_value<T: DeserializeOwned>(v: Value) -> Result<T, ParseError> {
    serde_path_to_error::deserialize(v)
        .map_err(|e| from_json_err(e.path().to_string(), e.into_inner()))
}

/// Parses `T` from a borrowed JSON value (clones it).
pub fn parse_value_ref<T: DeserializeOwned>(v: &Value) -> Result<T, ParseError> {
    parse_value(v.clone())
}
