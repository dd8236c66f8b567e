//! The crates' layers, file by file: every `use` and every `crate::` path
//! between two source files is an edge (a `mod.rs` that re-exports a
//! child and a child that uses the parent's re-export make a circle, which
//! a module graph does not show), and the circles are the graph's strongly
//! connected components: there is none, in any crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use lifeguard_e2e::repo_root;

/// A crate's source files by module path (`simulate::pod`; the root is `""`).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, src, out);
                continue;
            }
            let Some(rel) = path.strip_prefix(src).ok().and_then(|r| r.to_str()) else { continue };
            let Some(stem) = rel.strip_suffix(".rs") else { continue };
            // Test modules in files of their own are the tests', not a layer.
            if stem.ends_with("tests") {
                continue;
            }
            let mut module = stem.replace('/', "::");
            if let Some(parent) = module.strip_suffix("::mod") {
                module = parent.to_owned();
            }
            if module == "lib" || module == "main" {
                module = String::new();
            }
            out.insert(module, path);
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The text of a file without its comments and its inline test module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) if !l[..at].contains('"') => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths of a `use` tree (`a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`).
fn use_paths(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or_default().trim().trim_end_matches("::*");
        return vec![path.to_owned()];
    };
    let prefix = tree[..open].trim().trim_end_matches("::");
    let inner = tree[open + 1..].trim_end().trim_end_matches('}');
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(use_paths)
        .map(|p| if p == "self" { prefix.to_owned() } else { format!("{prefix}::{p}") })
        .collect()
}

/// The module a path names from `module`, if it is one of `known`: the
/// longest prefix that is a file.
fn resolve(module: &str, path: &str, known: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut at: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
    match segments.first().copied() {
        Some("crate") => {
            at.clear();
            segments.remove(0);
        }
        Some("self") => {
            segments.remove(0);
        }
        Some("super") => {
            while segments.first() == Some(&"super") {
                at.pop();
                segments.remove(0);
            }
        }
        // A child module of this one, or another crate.
        Some(first) if known.contains_key(&[at.as_slice(), &[first]].concat().join("::")) => {}
        _ => return None,
    }
    let full: Vec<&str> = at.into_iter().chain(segments).collect();
    (0..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| known.contains_key(m))
}

/// Every file's edges to the other files.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = known.keys().map(|m| (m.clone(), BTreeSet::new())).collect();
    for (module, path) in &known {
        let text = code(path);
        let mut targets = Vec::new();
        // `use` declarations, to their `;`.
        let mut rest = text.as_str();
        while let Some(at) = rest.find("use ") {
            let before = rest[..at].chars().last();
            rest = &rest[at + 4..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let Some(end) = rest.find(';') else { break };
            targets.extend(use_paths(&rest[..end]));
        }
        // `crate::` paths anywhere in the code.
        for (at, _) in text.match_indices("crate::") {
            let path: String =
                text[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            targets.push(path);
        }
        for t in targets {
            if let Some(to) = resolve(module, &t, &known).filter(|to| to != module) {
                edges.entry(module.clone()).or_default().insert(to);
            }
        }
    }
    edges
}

/// The strongly connected components of more than one file.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.on.contains(w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    component.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.out.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn no_file_of_any_crate_is_in_a_circle() {
    let mut found = Vec::new();
    for krate in ["policies", "lint", "webhook"] {
        let src = repo_root().join(krate).join("src");
        found.extend(circles(&graph(&src)).into_iter().map(|c| format!("{krate}: {c:?}")));
    }
    assert!(found.is_empty(), "files that import each other, directly or around a circle:\n{}", found.join("\n"));
}

#[test]
fn a_use_tree_and_its_paths() {
    let paths = use_paths("crate::model::{Workload, rollout::{Rollout, Update}, self}");
    assert_eq!(
        paths,
        ["crate::model::Workload", "crate::model::rollout::Rollout", "crate::model::rollout::Update", "crate::model"]
    );
    let known: BTreeMap<String, PathBuf> =
        ["", "model", "model::rollout", "rules"].iter().map(|m| ((*m).to_owned(), PathBuf::new())).collect();
    assert_eq!(resolve("rules", "crate::model::rollout::Rollout", &known).as_deref(), Some("model::rollout"));
    assert_eq!(resolve("model::rollout", "super::Workload", &known).as_deref(), Some("model"));
    assert_eq!(resolve("model", "rollout::Update", &known).as_deref(), Some("model::rollout"));
    assert_eq!(resolve("model", "serde_json::Value", &known), None);
    // A circle of two, and a file in none.
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.insert("a".into(), ["b".to_owned()].into());
    edges.insert("b".into(), ["a".to_owned(), "c".to_owned()].into());
    edges.insert("c".into(), BTreeSet::new());
    assert_eq!(circles(&edges), vec![BTreeSet::from(["a".to_owned(), "b".to_owned()])]);
}
