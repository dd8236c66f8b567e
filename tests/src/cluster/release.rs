//! The Kubernetes releases a control plane can run: the newest, which every
//! cluster test runs, and the older ones of the version matrix
//! (`tests/tests/cluster_versions.rs`). Only kube-apiserver and
//! kube-controller-manager differ; etcd and kubectl are the newest's.

use std::path::PathBuf;

use crate::installed_tool;

/// A release of kube-apiserver and kube-controller-manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// v1.37.2, built by `.ci/install-control-plane.sh`: every cluster test's.
    Newest,
    /// v1.34.4, the oldest minor the project supports.
    V1_34,
    /// v1.36.3, the first whose MutatingAdmissionPolicy is GA.
    V1_36,
}

impl Release {
    /// `MAJOR.MINOR`, as the API server's `/version` gives them.
    pub fn minor(self) -> &'static str {
        match self {
            Release::Newest => "1.37",
            Release::V1_34 => "1.34",
            Release::V1_36 => "1.36",
        }
    }

    /// Whether its API server serves MutatingAdmissionPolicy v1 by default
    /// (GA from v1.36).
    pub fn serves_mutating_admission_policy_v1(self) -> bool {
        !matches!(self, Release::V1_34)
    }

    /// The directory, under the repository, that holds its binaries.
    pub fn tools(self) -> &'static str {
        match self {
            Release::Newest => super::control_plane::TOOLS,
            Release::V1_34 => "target/tools/k8s-v1.34",
            Release::V1_36 => "target/tools/k8s-v1.36",
        }
    }

    /// The script that builds them.
    pub fn installer(self) -> &'static str {
        match self {
            Release::Newest => ".ci/install-control-plane.sh",
            _ => ".ci/install-control-plane-versions.sh",
        }
    }

    /// The directory of its kube-apiserver and kube-controller-manager, or
    /// `None` after printing why the test skips.
    pub fn server_tools(self) -> Option<PathBuf> {
        let apiserver = installed_tool(&format!("{}/kube-apiserver", self.tools()), self.installer())?;
        installed_tool(&format!("{}/kube-controller-manager", self.tools()), self.installer())?;
        apiserver.parent().map(PathBuf::from)
    }
}
