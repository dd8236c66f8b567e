//! Input limits. The loader lives in the engine crate (policy files use it
//! too); this path is kept for callers of `lifeguard::input::limits`.

pub use policies::yaml::limits::*;
