//! The built-in packs, shipped in `policies/packs/` and compiled in, so
//! `--policy gpu-serving` needs no file and gives the same verdict everywhere.

/// A built-in pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pack {
    /// The name `--policy` and `extends` take.
    pub name: &'static str,
    /// The pack's policy file.
    pub text: &'static str,
}

/// Every built-in pack; `default` first.
pub static PACKS: &[Pack] = &[
    Pack { name: "default", text: include_str!("../../packs/default.yaml") },
    Pack { name: "strict", text: include_str!("../../packs/strict.yaml") },
    Pack { name: "gpu-serving", text: include_str!("../../packs/gpu-serving.yaml") },
];

/// The pack a file without `extends` starts from.
pub const BASE_PACK: &str = "default";

/// Looks a pack up by name.
pub fn find_pack(name: &str) -> Option<&'static Pack> {
    PACKS.iter().find(|p| p.name == name)
}

/// `default, strict, gpu-serving`, for messages.
pub fn pack_names() -> String {
    PACKS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}
