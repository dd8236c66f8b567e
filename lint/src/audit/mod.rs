//! `lifeguard audit`'s machinery (the command is `crate::commands::audit`):
//! judges what runs in a cluster now, through the Kubernetes API, with the
//! engine, policy and report formats of `lint`.
//! Namespaces are read one at a time (their Services, then each kind,
//! page by page), each page judged as it comes and dropped, each
//! namespace's findings rendered and dropped: memory holds a page of
//! objects and one namespace's findings, not the cluster.

pub mod connect;
pub mod connect_error;
pub mod fetch;
pub mod identity;
pub mod judge;
pub mod policy;
pub mod read;
pub mod resources;
pub mod table;
pub mod transport;
pub mod verdicts;
pub mod write;
