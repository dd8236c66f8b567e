//! Helm-rendered streams: `helm template` writes `# Source: chart/templates/x.yaml`
//! before each document, so a finding can name the template a person edits
//! instead of a line of the rendered stream.

use super::source::Document;

const SOURCE_PREFIX: &str = "# Source: ";

/// The Helm template a rendered document came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The template's path as Helm wrote it (`chart/templates/x.yaml`), or
    /// under `--helm-chart-root` once rebased.
    pub path: String,
    /// Line of the `# Source:` comment in the rendered stream.
    pub comment_line: u32,
}

impl Template {
    /// The line within what the template rendered (1 = the line after the
    /// `# Source:` comment). It is the template's own line wherever the
    /// template neither adds nor removes lines above it.
    pub fn line(&self, rendered_line: u32) -> u32 {
        rendered_line.saturating_sub(self.comment_line).max(1)
    }

    /// The same template with its path under `chart_root`, the chart's
    /// directory: Helm names templates `<chart name>/templates/x.yaml`, and
    /// the chart name is not necessarily its directory.
    pub fn rebased(&self, chart_root: &str) -> Template {
        Template { path: rebase(&self.path, chart_root), comment_line: self.comment_line }
    }
}

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

/// The template of each document, aligned with `documents`: the last
/// `# Source:` comment between the end of the previous document and the
/// first node of this one, or `None` where there is none.
pub fn templates(text: &str, documents: &[Document]) -> Vec<Option<Template>> {
    let mut scanner = TemplateScanner::new(text);
    documents.iter().map(|doc| scanner.next(doc)).collect()
}

/// Finds documents' templates one document at a time, in input order, so
/// a stream can be linted while it is still being parsed.
#[derive(Debug, Clone, Default)]
pub struct TemplateScanner {
    comments: Vec<(u32, String)>,
    /// Comments before this index lie above documents already seen: a
    /// cursor keeps the whole scan linear in the number of comments.
    next_comment: usize,
    previous_end: u32,
}

impl TemplateScanner {
    /// Reads the `# Source:` comments of a text.
    pub fn new(text: &str) -> TemplateScanner {
        TemplateScanner { comments: source_comments(text), next_comment: 0, previous_end: 0 }
    }

    /// The template of the next document.
    pub fn next(&mut self, doc: &Document) -> Option<Template> {
        let first_node = doc.root.start.line;
        let mut found = None;
        while let Some((line, path)) = self.comments.get(self.next_comment) {
            if *line >= first_node {
                break;
            }
            if *line >= self.previous_end {
                found = Some(Template { path: path.clone(), comment_line: *line });
            }
            self.next_comment += 1;
        }
        self.previous_end = doc.root.end.line.max(first_node);
        found
    }
}

/// Every `# Source: path` comment line: (1-based line, path).
fn source_comments(text: &str) -> Vec<(u32, String)> {
    if !text.contains(SOURCE_PREFIX) {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let path = line.trim_end().strip_prefix(SOURCE_PREFIX)?.trim();
            let number = u32::try_from(i + 1).ok()?;
            (!path.is_empty()).then(|| (number, path.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse_stream};

    fn paths(text: &str) -> Vec<Option<(String, u32)>> {
        let (docs, err) = parse_stream(text, &Limits::default());
        assert!(err.is_none(), "{err:?}");
        templates(text, &docs).into_iter().map(|t| t.map(|t| (t.path, t.comment_line))).collect()
    }

    #[test]
    fn each_document_takes_the_source_comment_just_above_it() {
        let text = "---\n# Source: demo/templates/service.yaml\nkind: Service\nmetadata:\n  name: a\n\
                    ---\n# Source: demo/templates/deployment.yaml\nkind: Deployment\n";
        assert_eq!(
            paths(text),
            vec![Some(("demo/templates/service.yaml".into(), 2)), Some(("demo/templates/deployment.yaml".into(), 7)),]
        );
    }

    #[test]
    fn a_document_without_its_own_comment_takes_none() {
        let text = "# Source: demo/templates/a.yaml\nkind: A\n---\nkind: B\n";
        assert_eq!(paths(text), vec![Some(("demo/templates/a.yaml".into(), 1)), None]);
    }

    #[test]
    fn an_empty_template_does_not_lend_its_name_to_the_next_document() {
        // Helm still writes the header of a template that rendered to nothing.
        let text = "---\n# Source: demo/templates/empty.yaml\n---\n# Source: demo/templates/b.yaml\nkind: B\n";
        assert_eq!(paths(text), vec![Some(("demo/templates/b.yaml".into(), 4))]);
    }

    #[test]
    fn a_comment_inside_a_document_is_not_a_source() {
        let text = "kind: A\nmetadata:\n  # Source: nope.yaml\n  name: a\n";
        assert_eq!(paths(text), vec![None]);
    }

    #[test]
    fn plain_files_have_no_templates() {
        assert_eq!(paths("kind: A\n---\nkind: B\n"), vec![None, None]);
    }

    #[test]
    fn rebase_replaces_the_chart_name_with_the_chart_directory() {
        assert_eq!(rebase("demo/templates/x.yaml", "charts/demo-app"), "charts/demo-app/templates/x.yaml");
        assert_eq!(rebase("demo/templates/x.yaml", "./charts/demo/"), "charts/demo/templates/x.yaml");
        assert_eq!(rebase("demo/templates/x.yaml", "."), "templates/x.yaml");
        assert_eq!(
            rebase("demo/charts/redis/templates/x.yaml", "deploy/demo"),
            "deploy/demo/charts/redis/templates/x.yaml"
        );
    }

    #[test]
    fn the_template_line_counts_from_the_comment() {
        let t = Template { path: "demo/templates/x.yaml".into(), comment_line: 10 };
        assert_eq!(t.line(14), 4);
        assert_eq!(t.line(3), 1);
    }
}
