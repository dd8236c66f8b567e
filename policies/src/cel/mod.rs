//! CEL building blocks the exports and the rules' CEL share, knowing
//! nothing of a rule: quoting and the pod's fragments (`fragments`), the
//! containers' and the shutdown's facts as variables (`containers`,
//! `shutdown`), the policy's regexes and exemptions (`regex`,
//! `exemptions`), where custom kinds keep their pod templates
//! (`templates`), a check and the validation it becomes (`check`), a fix as
//! a mutation (`mutation`, `int`), the text's layout (`text`), and the
//! release's CEL environment (`library`, `kube_version`). A rule's own CEL
//! is in its folder (`rules/NAME/cel.rs`); `crate::vap` assembles them.

pub(crate) mod check;
pub(crate) mod containers;
pub(crate) mod exemptions;
pub(crate) mod fragments;
pub(crate) mod int;
pub mod kube_version;
pub mod library;
pub(crate) mod mutation;
pub(crate) mod regex;
pub(crate) mod shutdown;
pub(crate) mod templates;
pub(crate) mod text;
