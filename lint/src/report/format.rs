//! The output formats a report can be written in.

/// Output formats of `lifeguard lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For a person: `file:line:col`, object, rule, message, help; colour on a terminal.
    Text,
    /// A stable JSON array of findings (see docs/lint.md for the fields).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML: one test case per object and rule, for CI test reports.
    Junit,
    /// GitHub Actions workflow commands: annotations on the pull request.
    Github,
    /// One self-contained HTML page: a summary, then every finding with its fix note.
    Html,
}

/// Output formats of `lifeguard rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// One line per rule.
    Text,
    /// A JSON array of rules.
    Json,
}
