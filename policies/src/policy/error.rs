//! Why a policy could not be loaded: one error naming the file, the line
//! and the offending key, so a person can go straight to it.

use thiserror::Error;

/// A policy that cannot be used. Loading either yields a complete policy or
/// one of these, never a half-applied policy.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{}", self.render())]
pub struct PolicyError {
    /// The policy's name as given to the loader (a file name, `pack NAME`);
    /// empty for a policy built in code.
    pub file: String,
    /// Line, 1-based, when known.
    pub line: Option<u32>,
    /// Column, 1-based, when known.
    pub column: Option<u32>,
    /// The offending key as a path (`parameters.gpuBootSeconds`,
    /// `customRules[0].path`); empty for the whole file.
    pub key: String,
    /// What is wrong, in lower case.
    pub message: String,
}

impl PolicyError {
    fn render(&self) -> String {
        let mut s = String::new();
        if !self.file.is_empty() {
            s.push_str(&self.file);
            if let Some(l) = self.line {
                s.push_str(&format!(":{l}"));
                if let Some(c) = self.column {
                    s.push_str(&format!(":{c}"));
                }
            }
            s.push_str(": ");
        }
        if !self.key.is_empty() {
            s.push_str(&self.key);
            s.push_str(": ");
        }
        s.push_str(&self.message);
        s
    }
}

/// A problem found while validating, located by a JSON pointer into the
/// policy document; the loader turns the pointer into a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    /// JSON pointer of the offending value in the policy document.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    pub(crate) fn at(pointer: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid { pointer: pointer.into(), message: message.into() }
    }

    /// The error without a position (for policies built in code).
    pub(crate) fn unlocated(self, file: &str) -> PolicyError {
        PolicyError {
            file: file.to_owned(),
            line: None,
            column: None,
            key: key_of(&self.pointer),
            message: self.message,
        }
    }
}

/// `/customRules/0/when/matches` -> `customRules[0].when.matches`.
pub(crate) fn key_of(pointer: &str) -> String {
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let token = raw.replace("~1", "/").replace("~0", "~");
        if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_read_like_paths() {
        assert_eq!(key_of("/customRules/0/when/matches"), "customRules[0].when.matches");
        assert_eq!(key_of("/rules/startup-probe-missing"), "rules.startup-probe-missing");
        assert_eq!(key_of(""), "");
    }

    #[test]
    fn renders_file_line_key_message() {
        let e = PolicyError {
            file: "p.yaml".into(),
            line: Some(3),
            column: Some(5),
            key: "parameters.x".into(),
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "p.yaml:3:5: parameters.x: bad");
    }
}
