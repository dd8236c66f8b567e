//! A Helm template's path under the chart's own directory: what a
//! template's place and a rendered chart's sources both need.

/// Replaces the first component of a Helm source path (the chart name) with
/// `chart_root`: `demo/templates/x.yaml` under `charts/demo-app` is
/// `charts/demo-app/templates/x.yaml`.
pub fn rebase(path: &str, chart_root: &str) -> String {
    let rest = path.split_once('/').map_or(path, |(_, rest)| rest);
    let mut root = chart_root.trim_end_matches('/');
    while let Some(stripped) = root.strip_prefix("./") {
        root = stripped;
    }
    if root.is_empty() || root == "." { rest.to_owned() } else { format!("{root}/{rest}") }
}
