//! Which rules the export carries, and why the others are left to the
//! linter and the webhook. A CEL check must never report what the linter
//! would not: a rule is covered only where its CEL form is exact.

/// How far a rule's CEL form goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covered {
    /// Exactly the linter's check, for the object alone.
    Yes,
    /// Left out; why.
    No(&'static str),
}

/// Every built-in rule's coverage, in the registry's order.
pub fn coverage() -> Vec<(&'static str, Covered)> {
    crate::rules::RULES.iter().map(|r| (r.name, of(r.name))).collect()
}

/// One rule's coverage.
pub fn of(rule: &str) -> Covered {
    const SERVICES: &str = "needs the Services that select the pod, which an admission policy cannot see";
    const NOT_YET: &str = "CEL could express it for the object alone, but its CEL form is not written yet";
    match rule {
        "probe-port-unknown" | "liveness-too-aggressive" | "probe-window-too-long" => Covered::Yes,
        "readiness-probe-missing" | "prestop-bridge-missing" => Covered::No(SERVICES),
        "liveness-checks-dependency" | "probe-runs-inference" | "exec-probe" | "prestop-loop-unbounded" => Covered::No(
            "reads shell scripts and command lines (what a command reaches, whether a loop ends): \
             beyond a fixed form CEL cannot parse them exactly",
        ),
        "ignore-annotation-invalid" => {
            Covered::No("about lifeguard's own annotations: the export honours them, reporting them is the linter's")
        }
        _ => Covered::No(NOT_YET),
    }
}
