//! A finding placed where a person (or a viewer) finds it: its file, line
//! and column, its object, and the Helm template it came from.

use std::sync::Arc;

use policies::Finding;
use policies::model::{ObjectLabel, object_label};

use crate::input::helm::Template;
use crate::input::source::Location;

/// A finding placed in its file.
#[derive(Debug, Clone)]
pub struct Located {
    /// The engine's finding; its pointer is relative to the object.
    pub finding: Finding,
    /// File name as shown.
    pub file: Arc<str>,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
    /// Object kind.
    pub kind: Arc<str>,
    /// Object namespace.
    pub namespace: Option<Arc<str>>,
    /// Object name.
    pub name: Option<Arc<str>>,
    /// Pointer from the document root (differs from the finding's for `List` items).
    pub pointer: String,
    /// Where the object starts in the file (tells apart objects with the same name).
    pub object_at: Location,
    /// The Helm template the object was rendered from, for `helm template` output.
    pub template: Option<Template>,
    /// Read from a file, or from a cluster (no line: the pointer locates it).
    pub origin: Origin,
}

/// Where findings were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// A file (or stdin): findings have a line and column.
    #[default]
    File,
    /// A cluster's API (`lifeguard audit`): `file` is the object's
    /// namespace, and the object and pointer locate a finding.
    Cluster,
}

impl Located {
    /// `Kind/namespace/name`, with `<unnamed>` for a missing name.
    pub fn object(&self) -> String {
        self.label().to_string()
    }

    /// [`Located::object`], to write where it is shown.
    pub fn label(&self) -> ObjectLabel<'_> {
        ObjectLabel { kind: &self.kind, namespace: self.namespace.as_deref(), name: self.name.as_deref() }
    }

    /// The file and line to show a person: the Helm template and its own
    /// line when the template is on disk and the line is matched, else the
    /// input file and line (the rendered position).
    pub fn shown_at(&self) -> (&str, u32) {
        match self.template_line() {
            Some((path, line)) => (path, line),
            None => (&self.file, self.line),
        }
    }

    /// The Helm template on disk and its line holding the finding's key,
    /// when both are known.
    pub fn template_line(&self) -> Option<(&str, u32)> {
        let t = self.template.as_ref()?;
        t.place(self.line).map(|(file, line, _)| (file, line))
    }

    /// The column to show beside [`Located::shown_at`]: a Kustomize
    /// build's fields sit at their own columns in their own files.
    pub fn template_column(&self) -> u32 {
        let placed = self.template.as_ref().and_then(|t| t.place(self.line));
        placed.and_then(|(_, _, column)| column).unwrap_or(self.column)
    }

    /// The location for tools that open files (SARIF, GitHub annotations):
    /// a file that exists. The template and its line when matched; else the
    /// input file and line; for stdin, which no viewer can open, the
    /// template's file (or its subchart's archive) with no line when that
    /// exists. `(file, line and column)`.
    pub fn primary(&self) -> (&str, Option<(u32, u32)>) {
        if let Some((path, line)) = self.template_line() {
            return (path, Some((line, self.template_column())));
        }
        // `<stdin>`, `<kustomize build DIR>`, `<helm template DIR>`: no
        // file a viewer opens (see [`crate::input::InputName`]).
        let unopenable = self.file.starts_with('<');
        match &self.template {
            Some(t) if unopenable && t.exists() => (&t.path, None),
            _ => (&self.file, Some((self.line, self.column))),
        }
    }
}

/// A pod-bearing object that was linted, with or without findings.
#[derive(Debug, Clone)]
pub struct Linted {
    /// File name as shown.
    pub file: Arc<str>,
    /// Where the object starts in the file.
    pub at: Location,
    /// Object kind.
    pub kind: Arc<str>,
    /// Object namespace.
    pub namespace: Option<Arc<str>>,
    /// Object name.
    pub name: Option<Arc<str>>,
    /// The Helm template the object was rendered from.
    pub template: Option<Template>,
}

impl Linted {
    /// `Kind/namespace/name`, with `<unnamed>` for a missing name.
    pub fn object(&self) -> String {
        object_label(&self.kind, self.namespace.as_deref(), self.name.as_deref())
    }
}

/// A finding the policy suppressed, placed in its file.
#[derive(Debug, Clone)]
pub struct SuppressedAt {
    /// The finding and where it is.
    pub located: Located,
    /// The reason the exemption or annotation gives.
    pub reason: String,
    /// What suppressed it (`annotation lifeguard.dev/ignore`, `policy exemptions[0]`).
    pub by: String,
}
