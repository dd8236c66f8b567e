//! Certificates and policy kept fresh from files. cert-manager and
//! ConfigMap volumes replace files by swapping a `..data` symlink, which
//! file-event APIs report unevenly, so the files are read again every
//! `--reload-interval-seconds` and compared with what was last seen: a
//! change (the swap included) is loaded, validated and swapped in whole; a
//! bad one is logged and counted, and the old one keeps serving.

use std::path::PathBuf;

use policies::Policy;
use policies::policy::find_pack;
use policies::policy::packs::pack_names;

use crate::config::TlsFiles;
use crate::metrics::Reloaded;
use crate::state::Shared;
use crate::tls::{read_limited, serving_pair};

/// Where the policy comes from: a file (an existing path wins over a pack
/// of the same name, as for `lifeguard lint`) or a built-in pack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// A policy file, watched for changes.
    File(PathBuf),
    /// A built-in pack, loaded once.
    Pack(String),
}

impl PolicySource {
    /// The source for a `--policy` value.
    pub fn choose(arg: &str) -> PolicySource {
        let path = PathBuf::from(arg);
        if !path.exists() && find_pack(arg).is_some() {
            PolicySource::Pack(arg.to_owned())
        } else {
            PolicySource::File(path)
        }
    }
}

/// The last content seen of each watched file, applied or refused, so a
/// refused change is reported once, not on every tick.
#[derive(Debug, Default)]
pub struct Seen {
    cert: Option<(Vec<u8>, Vec<u8>)>,
    policy: Option<Vec<u8>>,
    cert_error: Option<String>,
    policy_error: Option<String>,
}

/// Loads (or reloads, when the files changed) the serving pair.
pub fn check_certificate(state: &Shared, tls: &TlsFiles, seen: &mut Seen) {
    let first = !state.resolver.is_loaded();
    let read = || -> Result<(Vec<u8>, Vec<u8>), String> { Ok((read_limited(&tls.cert)?, read_limited(&tls.key)?)) };
    // Read twice: a writer replacing the files one by one (not by symlink
    // swap) can be caught between the two; equal reads are a stable pair.
    let content = match (read(), read()) {
        (Ok(a), Ok(b)) if a == b => a,
        (Ok(_), Ok(_)) => return,
        (Err(why), _) | (_, Err(why)) => {
            if first {
                state.health.cert_loaded(Err(format!("the serving certificate cannot be read: {why}")));
            }
            unreadable(state, Reloaded::Certificate, !first, &mut seen.cert_error, why);
            seen.cert = None;
            return;
        }
    };
    seen.cert_error = None;
    if seen.cert.as_ref() == Some(&content) {
        return;
    }
    let (cert_name, key_name) = (tls.cert.display().to_string(), tls.key.display().to_string());
    match serving_pair(&content.0, &content.1, &cert_name, &key_name) {
        Ok(pair) => {
            state.resolver.store(pair.key);
            state.metrics.certificate_expiry(pair.not_after);
            state.metrics.reload(Reloaded::Certificate, true);
            state.health.cert_loaded(Ok(()));
            let verb = if first { "loaded" } else { "reloaded" };
            tracing::info!(subject = %pair.subject, not_after = %date(pair.not_after), "serving certificate {verb}");
        }
        Err(why) => {
            state.metrics.reload(Reloaded::Certificate, false);
            if first {
                state.health.cert_loaded(Err(format!("the serving certificate is invalid: {why}")));
                tracing::error!(error = %why, "serving certificate refused; not serving TLS until a valid pair appears");
            } else {
                tracing::error!(error = %why, "new serving certificate refused; keeping the current pair");
            }
        }
    }
    seen.cert = Some(content);
}

/// Loads (or reloads, when the file changed) the policy.
pub fn check_policy(state: &Shared, source: &PolicySource, seen: &mut Seen) {
    let first = state.policy.load().is_none();
    match source {
        PolicySource::Pack(name) => {
            if first {
                match Policy::pack(name) {
                    Ok(policy) => {
                        tracing::info!(policy = %policy.origin, mode = %policy.mode, "policy loaded");
                        state.set_policy(policy);
                    }
                    Err(e) => state.health.policy_loaded(Err(format!("policy pack {name}: {e}"))),
                }
            }
        }
        PolicySource::File(path) => {
            let name = path.display().to_string();
            let text = match read_limited(path) {
                Ok(bytes) => bytes,
                Err(why) => {
                    let why =
                        if path.exists() { why } else { format!("{why} (and not a built-in pack: {})", pack_names()) };
                    if first {
                        state.health.policy_loaded(Err(format!("policy: {why}")));
                    }
                    unreadable(state, Reloaded::Policy, !first, &mut seen.policy_error, why);
                    seen.policy = None;
                    return;
                }
            };
            seen.policy_error = None;
            if seen.policy.as_ref() == Some(&text) {
                return;
            }
            let loaded = std::str::from_utf8(&text)
                .map_err(|e| format!("{name}: not UTF-8: {e}"))
                .and_then(|t| Policy::load(t, &name).map_err(|e| e.to_string()));
            match loaded {
                Ok(policy) => {
                    let verb = if first { "loaded" } else { "reloaded" };
                    tracing::info!(policy = %name, mode = %policy.mode, "policy {verb}");
                    state.set_policy(policy);
                    state.metrics.reload(Reloaded::Policy, true);
                }
                Err(why) => {
                    state.metrics.reload(Reloaded::Policy, false);
                    if first {
                        state.health.policy_loaded(Err(format!("policy: {why}")));
                        tracing::error!(error = %why, "policy refused; not ready until a valid policy appears");
                    } else {
                        tracing::error!(error = %why, "policy change refused; keeping the current policy");
                    }
                }
            }
            seen.policy = Some(text);
        }
    }
}

/// Logs and counts a file that cannot be read, once per distinct error (a
/// missing file would otherwise be reported on every tick). What it says
/// about the consequence depends on whether an earlier load is `serving`:
/// before the first one (a Secret not issued yet) there is nothing to keep.
fn unreadable(state: &Shared, what: Reloaded, serving: bool, last: &mut Option<String>, why: String) {
    if last.as_ref() == Some(&why) {
        return;
    }
    match (what, serving) {
        (Reloaded::Certificate, true) => {
            tracing::error!(error = %why, "certificate files cannot be read; keeping the current pair");
        }
        (Reloaded::Certificate, false) => {
            tracing::error!(error = %why, "certificate files cannot be read; not serving TLS until a valid pair appears");
        }
        (Reloaded::Policy, true) => {
            tracing::error!(error = %why, "policy file cannot be read; keeping the current policy");
        }
        (Reloaded::Policy, false) => {
            tracing::error!(error = %why, "policy file cannot be read; not ready until a valid policy appears");
        }
    }
    state.metrics.reload(what, false);
    *last = Some(why);
}

/// A Unix time as an RFC 3339 UTC date (`2030-01-01T00:00:00Z`), which a
/// person reading the log can compare with today; the raw number when it is
/// outside the years a date can show (no certificate's is).
fn date(unix_seconds: i64) -> String {
    jiff::Timestamp::from_second(unix_seconds).map_or_else(|_| unix_seconds.to_string(), |t| t.to_string())
}

/// Checks both every interval, forever (the task is dropped at exit).
pub async fn watch(state: Shared, source: PolicySource, mut seen: Seen) {
    let mut tick = tokio::time::interval(state.config.reload_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if let Some(tls) = &state.config.tls {
            check_certificate(&state, tls, &mut seen);
        }
        check_policy(&state, &source, &mut seen);
    }
}

#[cfg(test)]
mod tests {
    use super::date;

    #[test]
    fn dates_are_rfc_3339_in_utc() {
        assert_eq!(date(0), "1970-01-01T00:00:00Z");
        assert_eq!(date(1_905_424_496), "2030-05-19T12:34:56Z");
        assert_eq!(date(i64::MAX), i64::MAX.to_string());
    }
}
