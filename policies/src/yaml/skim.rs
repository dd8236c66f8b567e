//! Reading a document without building what no rule can read: once a
//! document's top-level `kind` says it holds no pod spec, is no Service and
//! no `List`, the loader stops building its values (a CRD's schema, a
//! ConfigMap's data) and only checks them: the keys of each mapping (for
//! repeated keys), the nesting depth and explicit tags.
//!
//! An object of any other kind is a workload only if it has
//! `/spec/template/spec/containers`, so that path is still built. Whatever
//! could make the object other than it looked — a second `kind`, a merge
//! key, an alias, that path present — makes the loader read the part again
//! in full (see [`super::parse::parse_part_lean`]).

use std::collections::HashMap;

use super::source::{DuplicateKey, Mark};

/// The path along which a document of another kind is still built: an
/// object whose `/spec/template/spec/containers` exists is a workload.
pub(super) const PATH: [&str; 4] = ["spec", "template", "spec", "containers"];

/// Marks a mapping off [`PATH`].
pub(super) const OFF_PATH: usize = usize::MAX;

/// Whether an object of this kind can be neither a workload nor an
/// object of the context (a Service, a PodDisruptionBudget, a
/// HorizontalPodAutoscaler) nor a `List`
/// of objects, whatever else it holds (but the pod template [`PATH`]): the
/// one list of what no rule reads, built from the engine's tables of
/// pod-bearing kinds and of the context's kinds.
pub fn inert_kind(kind: &str) -> bool {
    !(crate::model::names_pod_kind(kind) || crate::model::names_custom_pod_kind(kind) || !not_context(kind))
}

/// Whether a document of this kind can be neither an object of the
/// context ([`crate::model::CONTEXT_KINDS`]) nor a `List` (for a read that
/// needs the context alone).
pub(super) fn not_context(kind: &str) -> bool {
    !(crate::model::CONTEXT_KINDS.contains(&kind) || kind.ends_with("List"))
}

/// A mapping or sequence being read without building it.
pub(super) struct Skipped {
    /// A mapping's keys so far: (key, where the key is).
    keys: Vec<(String, Mark)>,
    /// The key whose value comes next (mappings).
    pub(super) key: Option<String>,
    pub(super) key_at: Mark,
    pub(super) is_map: bool,
    pub(super) start: Mark,
}

impl Skipped {
    pub(super) fn new(is_map: bool, start: Mark) -> Skipped {
        Skipped { keys: Vec::new(), key: None, key_at: start, is_map, start }
    }

    /// Records an entry whose value is complete.
    pub(super) fn entry(&mut self) {
        if let Some(key) = self.key.take() {
            self.keys.push((key, self.key_at));
        }
    }

    /// The repeated keys, as building the mapping would report them: each
    /// repeat points back at the previous place of its key.
    pub(super) fn finish(self, duplicates: &mut Vec<DuplicateKey>) {
        if self.keys.len() < 2 {
            return;
        }
        let mut last: HashMap<&str, Mark> = HashMap::with_capacity(self.keys.len());
        for (key, at) in &self.keys {
            if let Some(first) = last.insert(key, *at) {
                duplicates.push(DuplicateKey { key: key.clone(), at: *at, first });
            }
        }
    }
}
