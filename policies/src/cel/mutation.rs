//! One fix of a rule as one mutation: what every carried rule's `export
//! map` code makes, and the MutatingAdmissionPolicy is built from.

use crate::finding::Severity;
use crate::policy::Policy;

/// One fix of a rule, as one mutation.
#[derive(Debug, Clone)]
pub(crate) struct Mutation {
    /// The rule.
    pub(crate) rule: &'static str,
    /// The variable that lists what it changes, named after the fix.
    pub(crate) variable: &'static str,
    /// Whether it must read the object as submitted, before the other fixes
    /// change it: it runs first.
    pub(crate) as_submitted: bool,
    /// What it changes.
    pub(crate) change: Change,
}

/// What a fix changes, and where.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Operations below each container `c` of `variables.containers` for
    /// which `which` (CEL over `c`) holds, the policy's exemptions of the
    /// rule added to it: a field set ([`Change::fields`]), a part written
    /// whole (a probe, a hook) or copied from elsewhere in the container.
    ContainerPatch {
        /// The containers fixed.
        which: String,
        /// The operations, each on the containers where its own condition holds too.
        ops: Vec<ContainerOp>,
        /// On an UPDATE that only restores (`build::RESTORING`), whether
        /// the old container `o` holds what the operations write on `c`
        /// (CEL over both): the fix is made there alone. `None`: not made
        /// on such an update (the webhook's `/mutate` restores it).
        restored: Option<String>,
    },
    /// A field of the pod spec, set to `value` when
    /// `when` holds (CEL over the object, exemptions included by the rule:
    /// which container's finding carries the fix is the rule's to say).
    PodSpec {
        /// When the pod is fixed.
        when: String,
        /// The field.
        field: &'static str,
        /// Its new value (an int).
        value: String,
    },
}

impl Change {
    /// The fields `set` on each container `c` for which `which` holds: an
    /// `add` of each, made on an UPDATE that only restores where the old
    /// container `o` holds every one (those written only `when` a
    /// condition holds, where it holds).
    pub(crate) fn fields(which: String, set: &[Set]) -> Change {
        let ops = set
            .iter()
            .map(|s| ContainerOp {
                path: crate::cel::fragments::quoted(&format!("/{}/{}", s.part, s.field)),
                write: Write::Add(s.value.clone()),
                when: s.when.clone().unwrap_or_else(|| "true".to_owned()),
            })
            .collect();
        let held: Vec<String> = set
            .iter()
            .map(|s| {
                let at = format!("o.{}", s.part);
                let equal = format!("has({at}) && has({at}.{f}) && {at}.{f} == {v}", f = s.field, v = s.value);
                match &s.when {
                    Some(when) => format!("(!({when}) || ({equal}))"),
                    None => format!("({equal})"),
                }
            })
            .collect();
        Change::ContainerPatch { which, ops, restored: Some(held.join(" && ")) }
    }
}

/// A field set on a container's `part`, which the fix's condition finds there.
#[derive(Debug, Clone)]
pub(crate) struct Set {
    /// `livenessProbe`, ...
    pub(crate) part: &'static str,
    /// `failureThreshold`, ...
    pub(crate) field: &'static str,
    /// The value, CEL over `c`.
    pub(crate) value: String,
    /// When the field is written (CEL over `c`), `None` for always: a field
    /// `lifeguard fix` leaves unset where it changes nothing stays unset (a
    /// custom resource's template gets no default the API server would
    /// give a pod's).
    pub(crate) when: Option<String>,
}

/// A JSON Patch operation below a container.
#[derive(Debug, Clone)]
pub(crate) struct ContainerOp {
    /// The path below the container, a CEL string over `c` (`'/startupProbe'`).
    pub(crate) path: String,
    /// What the operation writes there.
    pub(crate) write: Write,
    /// When this operation applies, CEL over `c` (`true`: always).
    pub(crate) when: String,
}

/// What a [`ContainerOp`] writes.
#[derive(Debug, Clone)]
pub(crate) enum Write {
    /// `add` of a value computed in CEL, over `c`.
    Add(String),
    /// `copy` from another path below the container, a CEL string over `c`:
    /// the object's own values cannot be marshalled into a patch's value
    /// (the API server holds them typed), but a copy moves them as they are.
    Copy(String),
}

/// Whether `lifeguard fix` fixes `rule`'s findings that the rule reports at
/// `severity`: not when the policy makes them info and `fixInfoFindings`
/// is off (an info finding's fix is opt-in).
pub(crate) fn fixes_at(policy: &Policy, rule: &str, severity: Severity) -> bool {
    policy.settings.fix_info_findings || policy.severity_override(rule).unwrap_or(severity) != Severity::Info
}

/// The CEL condition for the findings of `rule` that `lifeguard fix` fixes,
/// for a rule whose finding is an error where `error_when` holds and a
/// warning elsewhere: `None` when it fixes neither tier.
pub(crate) fn fixed_tiers(policy: &Policy, rule: &str, error_when: &str) -> Option<String> {
    match (fixes_at(policy, rule, Severity::Error), fixes_at(policy, rule, Severity::Warning)) {
        (false, false) => None,
        (true, true) => Some("true".to_owned()),
        (true, false) => Some(error_when.to_owned()),
        (false, true) => Some(format!("!{error_when}")),
    }
}
