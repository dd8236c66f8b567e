//! Policies: the file format (`apiVersion: lifeguard.dev/v1alpha1`,
//! `kind: Policy`), the built-in packs, loading with positioned errors, and
//! what the engine does with a policy (rule switches, severities,
//! exemptions, the ignore annotation, custom rules).

pub mod alert_labels;
pub(crate) mod compiled;
mod custom;
pub(crate) mod error;
mod exempt;
pub mod file;
mod info_fixes;
mod knowledge;
pub(crate) mod load;
pub(crate) mod merge;
pub mod packs;
mod schema;
mod suppress;
pub(crate) mod validate;

pub use compiled::Policy;
pub use error::PolicyError;
pub use file::AdmissionMode;
pub use packs::{PACKS, Pack, find_pack};
pub use schema::json_schema;
pub use suppress::{Suppressed, SuppressedBy, ignore_list};
