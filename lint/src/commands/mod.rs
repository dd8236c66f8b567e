//! One module per subcommand: its flags, parsed by `crate::cli`, and its
//! body, which hands the work to the machinery (`crate::lint`, `crate::fix`,
//! `crate::simulate`, `crate::audit`, `crate::lsp`, `crate::report`). A
//! command that cannot start returns `crate::stop::Stop`, which the
//! binary's edge tells once and turns into exit 2.

pub mod audit;
pub mod completions;
pub mod explain;
pub mod export;
pub mod fix;
pub mod lint;
pub mod lsp;
pub mod policy;
pub mod rules;
pub mod simulate;
