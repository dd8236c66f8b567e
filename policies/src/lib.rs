//! lifeguard's rule engine.
//!
//! The engine is a pure function over Kubernetes objects given as JSON
//! ([`serde_json::Value`]): it never reads files, never prints and never
//! blocks, so the linter (`lifeguard lint`), the fixer (`lifeguard fix`) and
//! the admission webhook all call it unchanged and reach the same verdicts.
//!
//! Every location it reports is a JSON pointer into the object it was given;
//! callers map pointers back to lines (the linter) or quote them (the webhook).
//!
//! Purity is checked, not promised: `clippy.toml` beside this crate's
//! manifest forbids file, environment, process, network and clock access,
//! and the lints below any printing.

#![deny(clippy::print_stdout, clippy::print_stderr, clippy::dbg_macro)]

pub mod alerts;
pub mod assumption;
pub mod cel;
pub(crate) mod docs_link;
pub mod engine;
pub mod error;
pub mod finding;
pub mod fix;
pub mod model;
pub mod policy;
mod policy_compile;
pub mod related;
pub mod rules;
pub mod scope;
pub mod settings;
pub mod simulate;
pub mod vap;
pub mod wording;
pub mod yaml;

pub use assumption::{About, Assumption, Source};
pub use engine::{ObjectReport, lint_object};
pub use error::ModelError;
pub use finding::{Applicability, Finding, Fix, Naming, Severity};
pub use fix::{AppliedFix, FixPlan, plan_fixes};
pub use model::objects_in;
pub use model::{Batch, BatchMark};
pub use policy::{Policy, PolicyError, Suppressed, SuppressedBy};
pub use scope::{OutOfScope, Scope};
pub use settings::Settings;
