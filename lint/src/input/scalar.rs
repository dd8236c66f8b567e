//! Resolving YAML scalars. The loader lives in the engine crate (policy files
//! use it too); this path is kept for callers of `lifeguard::input::scalar`.

pub use policies::yaml::scalar::*;
