//! Which rules the export carries, and why the others are left to the
//! linter and the webhook. A CEL check must never report what the linter
//! would not: a rule is covered only where its CEL form is exact.

/// How far a rule's CEL form goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covered {
    /// Exactly the linter's check, for the object alone.
    Yes,
    /// A part of the linter's check, exactly: the CEL form never reports
    /// what the linter does not, and misses what the text says.
    Partly(&'static str),
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
        "probe-port-unknown" | "liveness-too-aggressive" | "probe-window-too-long" | "readiness-port-only" => {
            Covered::Yes
        }
        "probe-endpoint-reused" => Covered::Partly(
            "every finding, at the severity the object alone settles: whether a shared exec command only \
             checks that a process exists (a warning) and what it or an httpGet `host` reaches (which can make \
             it an error) need the command line and the env read, so such a finding is reported as a warning, \
             never above the linter's severity, and in enforce mode may be warned where the linter denies",
        ),
        "startup-probe-missing" => Covered::Partly(
            "all of it but two signs of a slow boot that only the linter reads: a slow-boot image with a \
             command of its own and no port or GPU (a toolbox's sleep or a server: the command line would need \
             reading) and a cold-start annotation of 19 digits or more; with slowBootImages patterns that RE2 \
             reads differently, no image counts. Such a container is reported for its other signs only",
        ),
        "startup-budget-too-short" => Covered::Partly(
            "all of it with a declared cold start (annotation lifeguard.dev/cold-start-seconds, read as the linter \
             reads it; one of 19 digits or more is left to the linter); without one, a model server's window below gpuBootSeconds is found on containers with \
             a GPU or a slow-boot image run by its own entrypoint or declaring a port, not on a slow-boot image \
             with a command of its own and no port (telling a toolbox's sleep from a server needs the command \
             line read)",
        ),
        "prestop-sleep-only" => Covered::Partly(
            "every finding on a container whose preStop, drain and shutdown budget CEL reads as the linter \
             does: the native sleep, `[busybox] sleep N` and a shell's `-c` script in printable ASCII are read \
             alike; a script with other characters, sleep arguments whose order decides (an `infinity` and \
             an unreadable one), a drain or budget value of 19 digits or more, or a slow-boot image with a \
             command of its own and no port (the policy may assume a model server's drain) leave the container \
             to the linter",
        ),
        "grace-period-too-short" => Covered::Partly(
            "every finding on a pod whose containers' preStop sleeps, drains and shutdown budgets CEL reads \
             as the linter does (see prestop-sleep-only); where one of them only the linter can read, the \
             grace period is left to it (which container needs the most depends on all of them); the \
             annotations that are no number of seconds are always found",
        ),
        "probe-invalid" => Covered::Partly(
            "only an exec command whose program is empty: what else it checks the API server rejects before \
             any admission policy runs (negative values, no or several handlers, ports out of range) or has \
             already defaulted (a 0 it replaces), and `pgrep` patterns need the command line read",
        ),
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
