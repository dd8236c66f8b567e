//! Inputs that could not be read, parsed or understood, placed as finely
//! as the failure allows.

use policies::Severity;

use crate::input::read_error::ReadError;

/// An input that could not be read, parsed or understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// File name as shown.
    pub file: String,
    /// Line, when known.
    pub line: Option<u32>,
    /// Column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl InputError {
    /// An input that could not be read, at the error's position if it has one.
    pub fn unread(file: String, error: &ReadError) -> InputError {
        let (line, column) = error.position();
        InputError { file, line, column, message: error.to_string() }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            (Some(l), None) => write!(f, "{}:{l}: {}", self.file, self.message),
            _ => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// How much an input's message weighs: an error (exit 2), a warning or a
/// note (an input that gave no object to check), which never change the
/// exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputLevel {
    /// Not linted (what it names); the run exits 2.
    Error,
    /// Linted, with something to know (a repeated key).
    Warning,
    /// Gave no object to check, and why.
    Note,
}

impl InputLevel {
    /// How every format names it: `input error`, `input warning`, `input note`.
    pub fn label(self) -> &'static str {
        match self {
            InputLevel::Error => "input error",
            InputLevel::Warning => "input warning",
            InputLevel::Note => "input note",
        }
    }

    /// The severity every format shows it with (a note as info).
    pub fn severity(self) -> Severity {
        match self {
            InputLevel::Error => Severity::Error,
            InputLevel::Warning => Severity::Warning,
            InputLevel::Note => Severity::Info,
        }
    }
}
