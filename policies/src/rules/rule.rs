//! What a rule is: its entry in the registry, with everything the rule
//! declares (its check, its fix, what the exports carry of them, what an
//! editor shows with its findings), and what its check sees.

use std::cell::OnceCell;

use crate::cel::check::CelCheck;
use crate::cel::mutation::Mutation;
pub use crate::finding::FixAvailability;
use crate::finding::{Finding, Fix, Naming, Severity};
use crate::model::{Batch, ShutdownNeed, Workload, shutdown_needs};
use crate::policy::Policy;
use crate::simulate::Verdict;

/// What a rule's check sees besides the workload. One `Ctx` serves the
/// rules of one workload: what several rules derive from it is kept here.
pub struct Ctx<'a> {
    /// The policy in force.
    pub policy: &'a Policy,
    /// Other objects of the same input (Services).
    pub batch: &'a Batch,
    /// The workload's shutdown needs, read once for the three rules that
    /// weigh them (parsing preStop scripts and env is a good part of a lint).
    needs: OnceCell<Vec<ShutdownNeed>>,
}

impl<'a> Ctx<'a> {
    /// The context for the rules of one workload.
    pub fn new(policy: &'a Policy, batch: &'a Batch) -> Ctx<'a> {
        Ctx { policy, batch, needs: OnceCell::new() }
    }

    /// [`shutdown_needs`] of `w`, the workload this context serves.
    pub fn shutdown_needs(&self, w: &Workload) -> &[ShutdownNeed] {
        self.needs.get_or_init(|| shutdown_needs(w, self.policy))
    }
}

/// A registered rule.
pub struct Rule {
    /// Stable name: the public interface (`probe-endpoint-reused`).
    pub name: &'static str,
    /// Default severity; some findings of a rule may use another one (the doc says when).
    pub severity: Severity,
    /// One line for `lifeguard rules`.
    pub summary: &'static str,
    /// Markdown doc for `lifeguard explain`: why, bad and good examples, the fix.
    pub doc: &'static str,
    /// Whether the rule has an automatic fix.
    pub fix: FixAvailability,
    /// The check.
    pub check: fn(&Workload, &Ctx<'_>, &mut Vec<Finding>),
    /// What `lifeguard export vap` carries of the check.
    pub vap: VapExport,
    /// What `lifeguard export map` carries of the fix.
    pub map: MapExport,
    /// The other places an editor shows with a finding.
    pub related: Related,
    /// Where `lifeguard simulate` shows the harm of the rule's error findings.
    pub harm: HarmShown,
}

impl Rule {
    /// Builds a finding of this rule (no fix). `message` and `short` do not
    /// name the container: front ends put `container "x": ` before them
    /// ([`Finding::located_message`]). `short` is the fact and the fix in a
    /// few words: with a container name of 20 characters, `rule: container
    /// "x": short` must fit in [`crate::finding::SHORT_LINE_CHARS`], which
    /// leaves `84 - rule.len()` characters, values included.
    pub fn finding(
        &self,
        severity: Severity,
        pointer: String,
        container: Option<&str>,
        message: String,
        short: String,
        help: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: self.name.to_owned(),
            severity,
            message,
            short,
            help: help.into(),
            pointer,
            container: container.map(str::to_owned),
            naming: Naming::Prefix,
            fix: None,
            availability: Some(self.fix),
            assumptions: Vec::new(),
        }
    }
}

/// Attaches a fix to a finding (builder style).
pub(crate) fn with_fix(mut f: Finding, fix: Option<Fix>) -> Finding {
    f.fix = fix;
    f
}

/// What `lifeguard export vap` carries of a rule's check. Every rule says,
/// so a new one cannot be left out unsaid (the field has no default), and
/// its checks are named here, so no table elsewhere can miss it. A CEL
/// check must never report what the linter would not: a rule is covered
/// only where its CEL form is exact.
#[derive(Debug, Clone, Copy)]
pub enum VapExport {
    /// Exactly the linter's check, for the object alone, by these checks.
    Yes(Checks),
    /// A part of the linter's check, exactly, by these checks: they never
    /// report what the linter does not, and miss what the text says.
    Partly(&'static str, Checks),
    /// Left out; why.
    No(&'static str),
}

impl VapExport {
    /// Left out: it needs the Services that select the pod.
    pub(crate) const NEEDS_SERVICES: VapExport =
        VapExport::No("needs the Services that select the pod, which an admission policy cannot see");
    /// Left out: it reads scripts and command lines.
    pub(crate) const READS_SCRIPTS: VapExport = VapExport::No(
        "reads shell scripts and command lines (what a command reaches, whether a loop ends): \
         beyond a fixed form CEL cannot parse them exactly",
    );
}

/// A rule's CEL checks under a policy (`crate::vap`): a rule whose
/// findings come at several severities has one check per severity.
#[derive(Debug, Clone, Copy)]
pub struct Checks(pub(crate) fn(&Rule, &Policy) -> Vec<CelCheck>);

/// What `lifeguard export map` carries of a rule's fix: like [`VapExport`], said
/// by every rule.
#[derive(Debug, Clone, Copy)]
pub enum MapExport {
    /// Every fix `lifeguard fix` makes (the text says how), by these mutations.
    Yes(&'static str, Fixes),
    /// The fix where the text says, by these mutations; elsewhere the
    /// object is left as it came, for the webhook or `lifeguard fix`.
    Partly(&'static str, Fixes),
    /// The rule has no automatic fix ([`Rule::fix`] says why).
    NoFix,
    /// Left out; why.
    No(&'static str),
}

/// A rule's mutations under a policy (`crate::vap::mutation`), given the
/// CEL of the rule's exemptions over container `c`; none when the policy
/// makes its findings info and their fixes are opt-in.
#[derive(Debug, Clone, Copy)]
pub struct Fixes(pub(crate) fn(&Rule, &Policy, &str) -> Vec<Mutation>);

/// Where `lifeguard simulate` shows the harm an error finding of the rule
/// names, under the same assumptions: lint, fix and simulate tell one story
/// about an object, which the consistency tests hold to every input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarmShown {
    /// In these scenarios: an error finding's container gets one of the
    /// verdicts listed with a scenario, and once the rule's fix is applied,
    /// none of them. A finding about an annotation that cannot be read is
    /// about the input, not the pod, and is not held to it.
    In(&'static [Harm]),
    /// In these workload scenarios (`rollout`, `drain`, which `simulate`
    /// runs when named): a finding's object gets one of the verdicts listed,
    /// whatever the finding's severity, and once the rule's fix is applied,
    /// none of them.
    InWorkload(&'static [Harm]),
    /// simulate cannot show it; why.
    NotSimulated(&'static str),
}

/// A scenario of the standard set and the verdicts that show a rule's harm in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Harm {
    /// The scenario as written (`boot`, `stall:2m`, `pause:5s`, `wedge`,
    /// `delete`; `rollout`, `drain`).
    pub scenario: &'static str,
    /// The verdicts that show the harm.
    pub verdicts: &'static [Verdict],
}

/// The other places an editor shows with a rule's finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Related {
    /// None.
    Nothing,
    /// The readiness probe whose handler the finding's liveness probe shares.
    SharedReadiness,
    /// The Services that send the pod traffic.
    SendingServices,
    /// The PodDisruptionBudgets that select the pods, and the autoscaler
    /// that scales the workload.
    Budgets,
}
