//! The documentation's pages and their marked blocks: the README, the
//! changelog and `docs/`, which the tests hold to what the binaries print.

use std::path::{Path, PathBuf};

use crate::repo_root;

/// Every page, relative to the repository root: the README, the
/// changelog and `docs/*.md`.
pub fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("CHANGELOG.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo_root().join("docs"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter_map(|p| p.strip_prefix(repo_root()).ok().map(Path::to_path_buf))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The text of a page (`docs/webhook.md`).
pub fn page(page: &str) -> String {
    std::fs::read_to_string(repo_root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

/// The body of the fenced block between `<!-- NAME` and `<!-- /NAME -->`
/// in `page` (without its fences).
pub fn marked_block(page_name: &str, name: &str) -> String {
    let text = page(page_name);
    let open = format!("<!-- {name}");
    let close = format!("<!-- /{name} -->");
    let start = text.find(&open).unwrap_or_else(|| panic!("{page_name} has no {open} block"));
    let end = text[start..].find(&close).unwrap_or_else(|| panic!("{page_name} does not close {open}")) + start;
    let inside = &text[start..end];
    let body = inside
        .split_once("\n```")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(_, body)| body)
        .unwrap_or_else(|| panic!("{page_name}: no fenced block inside {open}"));
    body.rsplit_once("```").map(|(b, _)| b.to_owned()).unwrap_or_else(|| panic!("{page_name}: {open} unclosed fence"))
}

/// Checks that the marked block `name` of `page_name` is `actual`; with
/// `LIFEGUARD_BLESS` set, rewrites the block with it instead (as the docs
/// test blesses the blocks it runs).
pub fn assert_marked_block(page_name: &str, name: &str, actual: &str) {
    let documented = marked_block(page_name, name);
    if documented == actual {
        return;
    }
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        let text = page(page_name);
        let open = text.find(&format!("<!-- {name}")).unwrap_or_else(|| panic!("{page_name}: no {name} block"));
        let at = text[open..].find(&documented).map(|i| i + open).unwrap_or_else(|| panic!("{page_name}: {name}"));
        let blessed = format!("{}{actual}{}", &text[..at], &text[at + documented.len()..]);
        std::fs::write(repo_root().join(page_name), blessed).unwrap_or_else(|e| panic!("{page_name}: {e}"));
        return;
    }
    assert_eq!(documented, actual, "{page_name}'s {name} block (LIFEGUARD_BLESS=1 rewrites it)");
}
