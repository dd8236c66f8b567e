//! Why an input could not be read: what discovery returns and an input
//! error reports.

use std::path::PathBuf;

use thiserror::Error;

/// Why an input could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The path does not exist or cannot be listed.
    #[error("{0}")]
    Io(String),
    /// The input is larger than the limit.
    #[error("larger than the {0}-byte limit")]
    TooLarge(u64),
    /// The input is not UTF-8 text.
    #[error("not a text file: {0}")]
    NotText(String),
    /// Stdin held no document: what fed it most likely failed.
    #[error(
        "no document on stdin: the command feeding it most likely failed (`helm template` prints nothing when a chart does not render; use `set -o pipefail`); pass --allow-empty if an empty stream is expected"
    )]
    EmptyStdin,
    /// A Helm chart's `templates/` directory (or one under it), named
    /// directly: its files are not YAML until the chart is rendered.
    #[error(
        "a Helm chart's templates are not YAML until the chart renders them; name the chart, rendered: `helm template RELEASE {} | lifeguard lint -`",
        chart.display()
    )]
    ChartTemplates {
        /// The chart's directory (holding `Chart.yaml`).
        chart: PathBuf,
    },
    /// A Kustomize directory that did not build, or a Helm chart that did
    /// not render: the tool's own message.
    #[error("{0}")]
    NotRendered(String),
    /// A Kustomize component named directly: it is built only by the
    /// kustomizations that include it.
    #[error("a Kustomize component is built by the kustomizations that include it (`components:`); name one of those")]
    Component,
    /// A `.json` file that is not strict JSON (RFC 8259).
    #[error("not JSON (a .json file must be RFC 8259 JSON, as kubectl reads it): {what}")]
    NotJson {
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong there.
        what: String,
    },
}
