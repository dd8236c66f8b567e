//! Unified diffs of fixed files, with `a/` and `b/` headers like git's.

use similar::TextDiff;

/// The unified diff from `old` to `new` (empty when they are equal).
pub fn unified(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let name = name.trim_start_matches("./").trim_start_matches('/');
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn git_style_headers_and_hunks() {
        let d = unified("./k8s/app.yaml", "a: 1\nb: 2\n", "a: 1\nb: 3\n");
        assert_eq!(d, "--- a/k8s/app.yaml\n+++ b/k8s/app.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n");
        assert_eq!(unified("x", "same", "same"), "");
    }
}
