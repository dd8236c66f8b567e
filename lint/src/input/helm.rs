//! Helm-rendered streams: `helm template` writes `# Source: chart/templates/x.yaml`
//! before each document, so a finding can name the template a person edits
//! instead of a line of the rendered stream.
//!
//! Over 400 lines: the `# Source:` scanner, the finder that puts each template
//! on disk (packaged subcharts and Kustomize builds included) and the
//! `Template` they fill are one pipeline, and the tests (about 100 lines) feed
//! it rendered streams; the line alignment is already apart in `helm_lines`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::helm_lines::{LineMap, align};
use super::helm_path::rebase;
use super::render::Rendered;
use super::render::source_map::SourceMap;
use super::source::{Document, Location};

const SOURCE_PREFIX: &str = "# Source: ";

/// The Helm template a rendered document came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The template's path as Helm wrote it (`chart/templates/x.yaml`), or
    /// under `--helm-chart-root` once rebased.
    pub path: String,
    /// Line of the `# Source:` comment in the rendered stream.
    pub comment_line: u32,
    /// Whether the template is on disk, and how its lines map.
    pub on_disk: OnDisk,
    /// Named by a Kustomize build's `# Source:` (the object's own file).
    pub kustomize: bool,
}

/// What [`Template::locate`] found on disk at a template's path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OnDisk {
    /// Not looked for yet.
    #[default]
    Unchecked,
    /// No file at the path: committed `helm template` output whose chart is
    /// not in the repository, or a path not under `--helm-chart-root`.
    Missing,
    /// The template is inside a packaged subchart; `path` is the archive
    /// (`charts/redis-1.0.0.tgz`), which holds no line a viewer can open.
    Archive,
    /// The template file, aligned with what it rendered.
    File(Arc<LineMap>),
    /// The files a Kustomize build took the object's fields from (its
    /// origin and its patches), field by field.
    Sources(Arc<SourceMap>),
}

impl Template {
    /// A template read from a `# Source:` comment, not yet looked for on disk.
    pub fn new(path: impl Into<String>, comment_line: u32) -> Template {
        Template { path: path.into(), comment_line, on_disk: OnDisk::Unchecked, kustomize: false }
    }

    /// The template's own line holding the key of `rendered_line` (a line of
    /// the rendered stream), when the template file is on disk and that
    /// line is matched with confidence.
    pub fn line(&self, rendered_line: u32) -> Option<u32> {
        self.place(rendered_line).map(|(_, line, _)| line)
    }

    /// The file and line holding the key of `rendered_line`, and its column
    /// where known: the template's own line, or for a Kustomize build the
    /// line of the base or patch that set the field.
    pub fn place(&self, rendered_line: u32) -> Option<(&str, u32, Option<u32>)> {
        let offset = rendered_line.checked_sub(self.comment_line.saturating_add(1))?;
        let offset = usize::try_from(offset).ok()?;
        match &self.on_disk {
            OnDisk::File(map) => Some((&self.path, map.get(offset)?, None)),
            OnDisk::Sources(map) => {
                map.get(offset).map(|(file, at): (&str, Location)| (file, at.line, Some(at.column)))
            }
            _ => None,
        }
    }

    /// The file a finding at `rendered_line` is in and, when matched, its
    /// line and column there: [`Template::place`], else the template's (or
    /// the object's own) file without a line.
    pub fn file_at(&self, rendered_line: u32) -> (&str, Option<(u32, Option<u32>)>) {
        match self.place(rendered_line) {
            Some((file, line, column)) => (file, Some((line, column))),
            None => (&self.path, None),
        }
    }

    /// Whether the object was built by Kustomize (its `path` is the
    /// object's own file, not a Helm template).
    pub fn is_kustomize(&self) -> bool {
        self.kustomize
    }

    /// Why a finding in this template is shown at its rendered line; `None`
    /// before the template was looked for on disk.
    pub fn why_rendered_line(&self) -> Option<&'static str> {
        match self.on_disk {
            OnDisk::Unchecked => None,
            OnDisk::Missing => Some("not on disk"),
            OnDisk::Archive => Some("in a packaged subchart"),
            OnDisk::File(_) => Some("no line of it holds this key with confidence"),
            OnDisk::Sources(_) => Some("no base or patch line sets this field with confidence"),
        }
    }

    /// Whether a file exists at `path` (the template, or the archive of its
    /// packaged subchart).
    pub fn exists(&self) -> bool {
        matches!(self.on_disk, OnDisk::File(_) | OnDisk::Archive | OnDisk::Sources(_))
    }

    /// The same template with its path under `chart_root`, the chart's
    /// directory: Helm names templates `<chart name>/templates/x.yaml`, and
    /// the chart name is not necessarily its directory.
    pub fn rebased(&self, chart_root: &str) -> Template {
        Template { path: rebase(&self.path, chart_root), on_disk: OnDisk::Unchecked, ..self.clone() }
    }

    /// Looks for the template under `base` (relative paths are taken from
    /// there) and aligns its lines with `rendered`, what it rendered for the
    /// document (the lines after the `# Source:` comment, through the
    /// document's last line), asked for only when the file is there: `read`
    /// returns a file's text, or `None` when there is no file. A template
    /// of a packaged subchart takes the archive's path.
    pub fn locate<'a>(
        &self,
        base: &Path,
        rendered: impl FnOnce() -> &'a str,
        read: &mut impl FnMut(&Path) -> Option<Arc<str>>,
    ) -> Template {
        if let Some(text) = read(&base.join(&self.path)) {
            let map = align(rendered(), &text);
            return Template { on_disk: OnDisk::File(Arc::new(map)), ..self.clone() };
        }
        match packaged_subchart(base, &self.path) {
            Some(archive) => Template { path: archive, on_disk: OnDisk::Archive, ..self.clone() },
            None => Template { on_disk: OnDisk::Missing, ..self.clone() },
        }
    }
}

/// Puts each document's template on disk as soon as the template is known,
/// while the rendered text is at hand (so no copy of it is kept): under
/// `--helm-chart-root` when given, relative paths from the working
/// directory, each template file read once.
#[derive(Debug, Default)]
pub struct TemplateFinder {
    /// `None`: templates stay [`OnDisk::Unchecked`] (library callers that
    /// show no template lines).
    active: Option<Active>,
}

#[derive(Debug, Default)]
struct Active {
    chart_root: Option<String>,
    base: PathBuf,
    files: HashMap<PathBuf, Option<Arc<str>>>,
    /// The Kustomize builds among the inputs, by input name: their objects
    /// are placed field by field in their bases and patches.
    builds: HashMap<String, Arc<Rendered>>,
}

impl TemplateFinder {
    /// A finder that looks on disk, with template paths under `chart_root` when given.
    pub fn on_disk(chart_root: Option<&str>) -> TemplateFinder {
        let active = Active { chart_root: chart_root.map(str::to_owned), ..Active::default() };
        TemplateFinder { active: Some(active) }
    }

    /// The same finder, with relative template paths taken from `base`
    /// instead of the working directory.
    pub fn from(mut self, base: &Path) -> TemplateFinder {
        if let Some(active) = &mut self.active {
            active.base = base.to_path_buf();
        }
        self
    }

    /// Knows the Kustomize builds among `inputs`, to place their objects.
    pub fn knowing(mut self, inputs: &[super::Input]) -> TemplateFinder {
        if let Some(active) = &mut self.active {
            for input in inputs {
                if let super::Input::Rendered(r) = input
                    && r.build.is_some()
                {
                    active.builds.insert(r.name.clone(), Arc::clone(r));
                }
            }
        }
        self
    }

    /// The template as the report shows it, for a document of the input
    /// named `source`; `rendered` gives what it rendered, asked for only
    /// when the template file is there to align.
    pub fn find<'a>(&mut self, source: &str, template: Template, rendered: impl FnOnce() -> &'a str) -> Template {
        let Some(active) = &mut self.active else { return template };
        if let Some(rendered_by) = active.builds.get(source).map(Arc::clone) {
            return active.place_built(&rendered_by, template, rendered);
        }
        let template = match &active.chart_root {
            Some(root) => template.rebased(root),
            None => template,
        };
        let files = &mut active.files;
        template.locate(&active.base, rendered, &mut |path: &Path| read_once(files, path))
    }
}

/// A file's text, read once per run (`None`: no file there).
fn read_once(files: &mut HashMap<PathBuf, Option<Arc<str>>>, path: &Path) -> Option<Arc<str>> {
    files
        .entry(path.to_path_buf())
        .or_insert_with(|| path.is_file().then(|| std::fs::read_to_string(path).ok()).flatten().map(Arc::from))
        .clone()
}

impl Active {
    /// An object of a Kustomize build, placed in its own file and patches.
    fn place_built<'a>(
        &mut self,
        build: &Rendered,
        template: Template,
        rendered: impl FnOnce() -> &'a str,
    ) -> Template {
        let template = Template { kustomize: true, ..template };
        let path = self.base.join(&template.path);
        let (Some(text), Some(build)) = (read_once(&mut self.files, &path), build.build.as_ref()) else {
            return Template { on_disk: OnDisk::Missing, ..template };
        };
        let file: Arc<str> = template.path.as_str().into();
        match build.map(&file, &text, rendered()) {
            Some(map) => Template { on_disk: OnDisk::Sources(Arc::new(map)), ..template },
            None => Template { on_disk: OnDisk::Missing, ..template },
        }
    }
}

/// The archive of the packaged subchart a template path runs through:
/// `DIR/charts/redis/templates/x.yaml`, where `DIR/charts/redis/` is not a
/// directory, is in `DIR/charts/redis-<version>.tgz`. Subcharts nest, so the
/// outermost `charts/NAME` that is not a directory decides.
fn packaged_subchart(base: &Path, path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    for i in 1..parts.len().saturating_sub(1) {
        if parts[i] != "charts" {
            continue;
        }
        let (dir, name) = (parts[..=i].join("/"), parts[i + 1]);
        if base.join(&dir).join(name).is_dir() {
            continue;
        }
        let entries = std::fs::read_dir(base.join(&dir)).ok()?;
        let mut archives: Vec<String> = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|file| is_archive_of(file, name))
            .collect();
        archives.sort();
        // Two versions of one subchart: Helm would refuse the chart; claim neither.
        return match archives.as_slice() {
            [one] => Some(format!("{dir}/{one}")),
            _ => None,
        };
    }
    None
}

/// `redis-1.0.0.tgz` is an archive of `redis`; `redis-cluster-1.0.0.tgz` is not.
fn is_archive_of(file: &str, chart: &str) -> bool {
    file.strip_prefix(chart)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".tgz"))
        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
}

/// The template of each document, aligned with `documents`: the last
/// `# Source:` comment between the end of the previous document and the
/// first node of this one, or `None` where there is none.
pub fn templates(text: &str, documents: &[Document]) -> Vec<Option<Template>> {
    let mut scanner = TemplateScanner::new(text);
    documents.iter().map(|doc| scanner.next(doc).map(|(t, _)| t)).collect()
}

/// Finds documents' templates one document at a time, in input order, so
/// a stream can be linted while it is still being parsed.
#[derive(Debug, Clone, Default)]
pub struct TemplateScanner<'a> {
    text: &'a str,
    comments: Vec<(u32, String)>,
    /// Comments before this index lie above documents already seen: a
    /// cursor keeps the whole scan linear in the number of comments.
    next_comment: usize,
    previous_end: u32,
    /// Lines already found and the bytes where they start: spans come in
    /// increasing line order, so each search goes on from the last ones
    /// (linear in the text, with no table of every line's start).
    cursor: [(u32, usize); 2],
}

/// The lines a template rendered for a document, cut from the text only
/// when asked for ([`TemplateScanner::rendered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    from: u32,
    to: u32,
}

impl<'a> TemplateScanner<'a> {
    /// Reads the `# Source:` comments of a text.
    pub fn new(text: &'a str) -> TemplateScanner<'a> {
        let comments = source_comments(text);
        TemplateScanner { text, comments, next_comment: 0, previous_end: 0, cursor: [(1, 0); 2] }
    }

    /// Byte where 1-based `line` starts (the text's end past its last line),
    /// searching on from the latest known line at or before it.
    fn start_of(&self, line: u32) -> (u32, usize) {
        let known = self.cursor.iter().filter(|(l, _)| *l <= line).max_by_key(|(l, _)| *l);
        let (mut at_line, mut at) = known.copied().unwrap_or((1, 0));
        while at_line < line {
            match self.text.get(at..).and_then(|rest| rest.find('\n')) {
                Some(i) => {
                    at += i + 1;
                    at_line += 1;
                }
                None => return (line, self.text.len()),
            }
        }
        (at_line, at)
    }

    /// What a template rendered: lines `from..=to` (1-based) of the text.
    pub fn rendered(&mut self, span: Span) -> &'a str {
        let a = self.start_of(span.from);
        self.cursor[0] = a;
        let b = self.start_of(span.to.saturating_add(1));
        self.cursor[1] = b;
        self.text.get(a.1..b.1.max(a.1)).unwrap_or("")
    }

    /// The template of the next document and the lines it rendered there.
    pub fn next(&mut self, doc: &Document) -> Option<(Template, Span)> {
        self.next_at(doc.root.start.line, doc.root.end.line)
    }

    /// The template of the next document and the lines it rendered there
    /// (after the `# Source:` comment, through the document's last line),
    /// given the lines where its root node starts and ends (what
    /// [`TemplateScanner::next`] reads of it).
    pub fn next_at(&mut self, first_node: u32, end: u32) -> Option<(Template, Span)> {
        let mut found = None;
        while let Some((line, path)) = self.comments.get(self.next_comment) {
            if *line >= first_node {
                break;
            }
            if *line >= self.previous_end {
                found = Some((path.clone(), *line));
            }
            self.next_comment += 1;
        }
        self.previous_end = end.max(first_node);
        let (path, comment_line) = found?;
        Some((Template::new(path, comment_line), Span { from: comment_line + 1, to: self.previous_end }))
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
    fn each_template_keeps_the_text_of_its_document() {
        let text = "---\n# Source: demo/templates/a.yaml\nkind: A\nmetadata:\n  name: a\n---\n# Source: demo/templates/b.yaml\nkind: B\n";
        let (docs, _) = parse_stream(text, &Limits::default());
        let mut scanner = TemplateScanner::new(text);
        let spans: Vec<Span> = docs.iter().filter_map(|d| scanner.next(d)).map(|(_, span)| span).collect();
        let rendered: Vec<&str> = spans.into_iter().map(|span| scanner.rendered(span)).collect();
        assert!(rendered[0].starts_with("kind: A\nmetadata:\n  name: a\n"), "{rendered:?}");
        assert!(!rendered[0].contains("kind: B"), "{rendered:?}");
        assert_eq!(rendered[1], "kind: B\n");
    }

    #[test]
    fn a_template_on_disk_maps_lines_and_one_missing_maps_none() {
        let text = "# Source: demo/templates/x.yaml\nkind: A\nspec:\n  replicas: 2\n";
        let (docs, _) = parse_stream(text, &Limits::default());
        let mut scanner = TemplateScanner::new(text);
        let (t, span) = scanner.next(&docs[0]).expect("a template");
        let rendered = scanner.rendered(span);
        let file = "{{- if true }}\nkind: A\nspec:\n  replicas: {{ .Values.n }}\n{{- end }}\n";
        let found = t.locate(Path::new("chart"), || rendered, &mut |_| Some(file.into()));
        assert!(found.exists());
        assert_eq!((found.line(2), found.line(4)), (Some(2), Some(4)));
        assert_eq!(found.line(1), None, "the comment is no line of the template");
        let missing = t.locate(Path::new("/nonexistent"), || rendered, &mut |_| None);
        assert_eq!((missing.on_disk.clone(), missing.line(4)), (OnDisk::Missing, None));
        assert_eq!(t.line(4), None, "unchecked: no line is claimed");
    }

    #[test]
    fn a_packaged_subchart_maps_to_its_archive() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("app/charts")).expect("mkdir");
        std::fs::write(dir.path().join("app/charts/redis-1.2.0.tgz"), "").expect("write");
        std::fs::write(dir.path().join("app/charts/redis-cluster-9.0.0.tgz"), "").expect("write");
        let archive = packaged_subchart(dir.path(), "app/charts/redis/templates/master.yaml");
        assert_eq!(archive.as_deref(), Some("app/charts/redis-1.2.0.tgz"));
        assert_eq!(packaged_subchart(dir.path(), "app/charts/etcd/templates/x.yaml"), None);
        assert_eq!(packaged_subchart(dir.path(), "app/templates/x.yaml"), None);
        assert!(is_archive_of("redis-17.0.1.tgz", "redis"));
        assert!(!is_archive_of("redis-cluster-1.0.0.tgz", "redis"));
    }
}
