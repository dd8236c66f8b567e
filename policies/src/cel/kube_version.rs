//! The Kubernetes version an export targets (`--kube-version`): which API
//! versions of the admission policies it serves, and which CEL
//! environment it checks new expressions against ([`super::library`]).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A Kubernetes minor release, `MAJOR.MINOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// `1`.
    pub major: u32,
    /// `34`.
    pub minor: u32,
}

/// The oldest release the project supports, and the exports' default: a
/// cluster two or three minors behind the newest is still served.
pub const OLDEST: KubeVersion = KubeVersion { major: 1, minor: 34 };

/// The first release that serves MutatingAdmissionPolicy as
/// `admissionregistration.k8s.io/v1`, on by default (GA).
pub const MAP_V1: KubeVersion = KubeVersion { major: 1, minor: 36 };

/// The first release that no longer serves its v1beta1 (1.37's API server
/// says so when one is written).
pub const MAP_V1BETA1_GONE: KubeVersion = KubeVersion { major: 1, minor: 40 };

/// A `--kube-version` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KubeVersionError {
    /// Not `MAJOR.MINOR`.
    #[error("{0:?} is not a Kubernetes version: write MAJOR.MINOR, e.g. 1.34")]
    Unreadable(String),
    /// Older than [`OLDEST`].
    #[error("Kubernetes {0} is older than {OLDEST}, the oldest release lifeguard's exports support")]
    TooOld(KubeVersion),
}

impl KubeVersion {
    /// The CEL environment an API server of this release checks a new or
    /// changed expression against: its compatibility version, the previous
    /// minor (k8s.io/apiserver's `DefaultCompatibilityVersion`), so that a
    /// rollback to that minor can still run what was admitted.
    pub fn cel_environment(self) -> KubeVersion {
        KubeVersion { major: self.major, minor: self.minor.saturating_sub(1) }
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for KubeVersion {
    type Err = KubeVersionError;

    /// `1.34`; a leading `v` and a patch (`v1.34.2`) are read too, as
    /// `kubectl version` prints them. Refuses what is older than [`OLDEST`].
    fn from_str(text: &str) -> Result<KubeVersion, KubeVersionError> {
        let unreadable = || KubeVersionError::Unreadable(text.to_owned());
        let trimmed = text.trim();
        let bare = trimmed.strip_prefix('v').unwrap_or(trimmed);
        let mut parts = bare.split('.');
        let number = |part: Option<&str>| -> Result<u32, KubeVersionError> {
            let part = part.ok_or_else(unreadable)?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(unreadable());
            }
            part.parse().map_err(|_| unreadable())
        };
        let version = KubeVersion { major: number(parts.next())?, minor: number(parts.next())? };
        // A patch release changes no API: read and dropped.
        if let Some(patch) = parts.next() {
            number(Some(patch))?;
        }
        if parts.next().is_some() {
            return Err(unreadable());
        }
        if version < OLDEST {
            return Err(KubeVersionError::TooOld(version));
        }
        Ok(version)
    }
}

/// The API version of a MutatingAdmissionPolicy export (`--map-api`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapApi {
    /// `admissionregistration.k8s.io/v1`: GA and on by default from 1.36.
    V1,
    /// `admissionregistration.k8s.io/v1beta1`: from 1.34, off by default.
    V1beta1,
}

impl MapApi {
    /// The `apiVersion` of the policy and its binding.
    pub fn api_version(self) -> &'static str {
        match self {
            MapApi::V1 => "admissionregistration.k8s.io/v1",
            MapApi::V1beta1 => "admissionregistration.k8s.io/v1beta1",
        }
    }
}

/// What to enable on an API server before 1.36 for the v1beta1 API.
pub const MAP_V1BETA1_SWITCHES: &str = "the feature gate MutatingAdmissionPolicy=true and \
     --runtime-config=admissionregistration.k8s.io/v1beta1=true";

/// The MutatingAdmissionPolicy API a release serves as asked.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MapApiError {
    /// No API asked for, and the release serves v1 not at all.
    #[error(
        "Kubernetes {0} serves MutatingAdmissionPolicy only as admissionregistration.k8s.io/v1beta1, off by default: \
         enable {MAP_V1BETA1_SWITCHES} on the API server and export with --map-api v1beta1, or target {MAP_V1} or later \
         (--kube-version), where v1 is on by default"
    )]
    OnlyBeta(KubeVersion),
    /// v1beta1 asked for on a release that no longer serves it.
    #[error(
        "admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy is not served from Kubernetes {MAP_V1BETA1_GONE}: use v1"
    )]
    BetaGone(KubeVersion),
    /// v1 asked for on a release that does not serve it.
    #[error(
        "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy is served from Kubernetes {MAP_V1}, not by {0}: \
         use --map-api v1beta1 (with {MAP_V1BETA1_SWITCHES} on the API server)"
    )]
    V1NotServed(KubeVersion),
}

/// The API to write for `version`: `asked`, if the release serves it, else
/// v1 where it is on by default; before 1.36, v1beta1 only when asked for,
/// as it needs switches on the API server (1.34 to 1.39 serve it).
pub fn map_api(version: KubeVersion, asked: Option<MapApi>) -> Result<MapApi, MapApiError> {
    match asked {
        Some(MapApi::V1beta1) if version >= MAP_V1BETA1_GONE => Err(MapApiError::BetaGone(version)),
        Some(MapApi::V1beta1) => Ok(MapApi::V1beta1),
        Some(MapApi::V1) | None if version >= MAP_V1 => Ok(MapApi::V1),
        Some(MapApi::V1) => Err(MapApiError::V1NotServed(version)),
        None => Err(MapApiError::OnlyBeta(version)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(minor: u32) -> KubeVersion {
        KubeVersion { major: 1, minor }
    }

    #[test]
    fn versions_read_as_kubectl_prints_them() {
        for text in ["1.34", "v1.34", "1.34.2", " v1.34.0 "] {
            assert_eq!(text.parse::<KubeVersion>(), Ok(v(34)), "{text}");
        }
        assert_eq!("1.40".parse::<KubeVersion>(), Ok(v(40)));
        assert_eq!("2.0".parse::<KubeVersion>(), Ok(KubeVersion { major: 2, minor: 0 }));
        for text in ["", "1", "1.", "1.x", "one.34", "1.34.2.1", "1.-34", "1.34-rc.1"] {
            assert_eq!(text.parse::<KubeVersion>(), Err(KubeVersionError::Unreadable(text.to_owned())), "{text}");
        }
    }

    #[test]
    fn a_release_before_the_oldest_supported_is_refused_saying_which() {
        let err = "1.33".parse::<KubeVersion>().expect_err("too old");
        assert_eq!(err, KubeVersionError::TooOld(v(33)));
        let text = err.to_string();
        assert_eq!(text, "Kubernetes 1.33 is older than 1.34, the oldest release lifeguard's exports support");
        assert!("0.99".parse::<KubeVersion>().is_err());
    }

    #[test]
    fn new_expressions_are_checked_against_the_previous_minor() {
        assert_eq!(v(34).cel_environment(), v(33));
    }

    #[test]
    fn map_v1_from_1_36_and_v1beta1_only_when_asked() {
        assert_eq!(map_api(v(36), None), Ok(MapApi::V1));
        assert_eq!(map_api(v(37), Some(MapApi::V1)), Ok(MapApi::V1));
        assert_eq!(map_api(v(37), Some(MapApi::V1beta1)), Ok(MapApi::V1beta1));
        assert_eq!(map_api(v(34), Some(MapApi::V1beta1)), Ok(MapApi::V1beta1));
        let refused = map_api(v(35), None).expect_err("beta only").to_string();
        for part in ["Kubernetes 1.35", "MutatingAdmissionPolicy=true", "--map-api v1beta1", "1.36"] {
            assert!(refused.contains(part), "{part}: {refused}");
        }
        assert_eq!(map_api(v(34), Some(MapApi::V1)), Err(MapApiError::V1NotServed(v(34))));
        assert_eq!(map_api(v(39), Some(MapApi::V1beta1)), Ok(MapApi::V1beta1));
        assert_eq!(map_api(v(40), Some(MapApi::V1beta1)), Err(MapApiError::BetaGone(v(40))));
    }
}
