//! A located problem in a proto file.

use std::fmt;

/// A located problem in a proto file.
///
/// Displays as `file:line:column: message`, or `file: message` without a
/// location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The proto file name, as the descriptor pool knows it.
    pub file: String,
    /// 1-based line, when the descriptor carries source info.
    pub line: Option<u32>,
    /// 1-based column, when the descriptor carries source info.
    pub column: Option<u32>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => {
                write!(f, "{}:{}:{}: {}", self.file, line, column, self.message)
            }
            (Some(line), None) => write!(f, "{}:{}: {}", self.file, line, self.message),
            _ => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for Diagnostic {}

impl Diagnostic {
    /// A diagnostic about `file` as a whole, with no line to point at.
    pub(crate) fn unlocated(file: &str, message: String) -> Self {
        Self {
            file: file.to_owned(),
            line: None,
            column: None,
            message,
        }
    }
}
