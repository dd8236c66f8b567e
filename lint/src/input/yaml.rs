//! The YAML loader. It lives in the engine crate (policy files use it too);
//! this path is kept for callers of `lifeguard::input::yaml`.

pub use policies::yaml::parse::*;
