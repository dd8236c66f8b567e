//! A run a command cannot start: a flag, a policy, a baseline or a
//! connection that is wrong. Commands return it as their error; the
//! binary's edge tells it once, `lifeguard: MESSAGE`, and exits 2 (the exit
//! code every command documents for usage and input errors), instead of
//! each command printing and returning 2 itself.

/// Why a command stopped before its work.
#[derive(Debug, thiserror::Error)]
pub enum Stop {
    /// What to tell the user (without the `lifeguard: ` the edge adds).
    #[error("{0}")]
    Usage(String),
    /// Already told on stderr, where it was found with its details (each
    /// error of a policy file, with its file and line).
    #[error("stopped: the reason was printed above")]
    Told,
}

impl Stop {
    /// A [`Stop::Usage`] as the `anyhow` error a command returns.
    pub fn usage(message: impl Into<String>) -> anyhow::Error {
        Stop::Usage(message.into()).into()
    }

    /// A [`Stop::Told`] as the `anyhow` error a command returns.
    pub fn told() -> anyhow::Error {
        Stop::Told.into()
    }
}
