//! Reports rendered as the input is linted: text, JSON, SARIF and GitHub
//! commands and HTML (which keeps its summary's counts, see
//! [`crate::outcome::tally`]) print
//! finding by finding, so each document's findings are
//! rendered as soon as the document is linted (in input order, see
//! [`crate::pipeline::Keep`]) and dropped. Memory then holds the report's
//! text, not the findings, which take several times as much (their message,
//! help, fix and location, each in its own allocation). JUnit groups test
//! cases by file and object across the whole input, so it keeps them.
//!
//! The output is byte for byte what the whole-outcome renderers give (a
//! test holds them to it); they stay for library callers.

use std::borrow::Cow;
use std::io::Write;

use crate::outcome::tally::Tally;
use crate::outcome::{Outcome, Rendered};
use crate::report::entries::{json_entry, write_entries};
use crate::report::format::Format;
use crate::report::{github, html, json, sarif, summary, text};

/// The formats printed finding by finding.
#[derive(Debug)]
pub struct Render {
    format: Format,
    /// Whether the text format keeps its styles (see [`Render::plain`]).
    color: bool,
    /// SARIF's rule list, which a custom rule joins at its first finding.
    sarif: sarif::RulesSeen,
    /// Where a text finding is written before it joins the report: one
    /// buffer reused rather than a string per finding.
    scratch: String,
    /// Whether a baseline is in use: SARIF then gives each result its
    /// `baselineState`, and lists the accepted ones as `unchanged`.
    baseline: bool,
    /// Whether [`Render::stream`] has written the JSON array's opening and
    /// first entry.
    opened: bool,
}

impl Render {
    /// `None` for JUnit, which groups test cases by file and object across
    /// the whole input.
    pub fn new(format: Format) -> Option<Render> {
        (format != Format::Junit).then(|| Render {
            format,
            color: true,
            sarif: sarif::RulesSeen::default(),
            scratch: String::new(),
            baseline: false,
            opened: false,
        })
    }

    /// The same renderer, for a run with a baseline (`--baseline`).
    pub fn with_baseline(self) -> Render {
        Render { baseline: true, ..self }
    }

    /// The same renderer, with the text format's styles left out: for a
    /// destination that would strip them (a pipe, a file, `NO_COLOR`), so
    /// the report is written as rendered rather than scanned again.
    pub fn plain(self) -> Render {
        Render { color: false, ..self }
    }

    /// Renders a document's findings into its outcome's text and drops
    /// them, with what only the report would read (the suppressed findings,
    /// the objects' records); the counts stay.
    pub(crate) fn document(&mut self, out: &mut Outcome) {
        let mut rendered = Rendered::default();
        for l in &out.findings {
            match self.format {
                Format::Json => rendered.push_str(&json_entry(&json::JsonFinding::new(l))),
                Format::Github => rendered.push_str(&github::finding(l)),
                Format::Sarif => {
                    let state = self.baseline.then_some(sarif::BaselineState::New);
                    rendered.push_str(&self.sarif.result_entry(l, state));
                }
                Format::Html => {
                    self.scratch.clear();
                    html::write_finding(&mut self.scratch, l);
                    rendered.push_str(&self.scratch);
                }
                _ => {
                    self.scratch.clear();
                    text::write_finding(&mut self.scratch, l, self.color);
                    rendered.push_str(&self.scratch);
                }
            }
            rendered.note(l);
        }
        if self.format == Format::Html {
            let mut tally = Tally::default();
            tally.document(&out.findings);
            rendered.tally = Some(tally);
        }
        if self.format == Format::Sarif {
            for l in &out.baselined {
                rendered.push_str(&self.sarif.result_entry(l, Some(sarif::BaselineState::Unchanged)));
            }
        }
        rendered.suppressed = out.suppressed.len();
        rendered.baselined = out.baselined.len();
        out.findings = Vec::new();
        out.suppressed = Vec::new();
        out.baselined = Vec::new();
        out.linted = Vec::new();
        out.rendered.absorb(rendered);
    }

    /// Appends to a JSON report entries that are not findings (`lifeguard
    /// audit --simulate`'s verdicts), after the findings rendered so far;
    /// other formats leave them out. They are not counted as findings.
    pub(crate) fn json_entries(&mut self, out: &mut Outcome, entries: &[serde_json::Value]) {
        if self.format != Format::Json {
            return;
        }
        let mut rendered = Rendered::default();
        for e in entries {
            rendered.push_str(&json_entry(e));
        }
        out.rendered.absorb(rendered);
    }

    /// Appends to an HTML report a part that is not a finding (`lifeguard
    /// audit --simulate`'s simulated workloads), after the findings
    /// rendered so far; other formats leave it out.
    pub(crate) fn html_part(&mut self, out: &mut Outcome, html: &str) {
        if self.format != Format::Html || html.is_empty() {
            return;
        }
        let mut rendered = Rendered::default();
        rendered.push_str(html);
        out.rendered.absorb(rendered);
    }

    /// Writes the text rendered so far into `out` and drops it, for a report
    /// whose size would otherwise grow with the input until its end
    /// (`audit`'s namespaces): text, GitHub commands and JSON, which are
    /// sequences of entries. SARIF and HTML are documents whose head
    /// depends on the whole input, so they keep their text for
    /// [`Render::write`]. What `stream` and `write` write together is what
    /// `write` alone would.
    pub(crate) fn stream(&mut self, out: &mut Outcome, w: &mut dyn Write) -> std::io::Result<()> {
        match self.format {
            Format::Sarif | Format::Html | Format::Junit => Ok(()),
            Format::Json => {
                let pieces = out.rendered.take_pieces();
                if pieces.is_empty() {
                    return Ok(());
                }
                if self.opened {
                    pieces.iter().try_for_each(|p| w.write_all(p.as_bytes()))
                } else {
                    self.opened = true;
                    w.write_all(b"[")?;
                    write_entries(pieces.iter(), w)
                }
            }
            Format::Text | Format::Github => {
                out.rendered.take_pieces().iter().try_for_each(|p| w.write_all(p.as_bytes()))
            }
        }
    }

    /// Writes the whole report of `out` (whose findings were rendered as
    /// they came, and any it still holds after them): what the format's
    /// `render` gives for the same findings. `quiet`: text without its summary.
    pub fn write(mut self, out: &Outcome, quiet: bool, w: &mut dyn Write) -> std::io::Result<()> {
        let pieces = out.rendered.pieces();
        match self.format {
            Format::Sarif => {
                let state = self.baseline.then_some(sarif::BaselineState::New);
                let held: Vec<String> = out.findings.iter().map(|l| self.sarif.result_entry(l, state)).collect();
                sarif::write_streamed(out, self.sarif, pieces.chain(held.iter().map(String::as_str)), w)
            }
            Format::Json => {
                let held = out.findings.iter().map(|l| Cow::Owned(json_entry(&json::JsonFinding::new(l))));
                let errors =
                    out.input_messages().map(|(level, e)| Cow::Owned(json_entry(&json::JsonInputError::at(level, e))));
                let mut entries = pieces.map(Cow::Borrowed).chain(held).chain(errors).peekable();
                if self.opened {
                    // The array is open and has its first entry: the rest follow it.
                    entries.try_for_each(|e| w.write_all(e.as_bytes()))?;
                    return w.write_all(b"\n]\n");
                }
                if entries.peek().is_none() {
                    return w.write_all(b"[]\n");
                }
                w.write_all(b"[")?;
                write_entries(entries, w)?;
                w.write_all(b"\n]\n")
            }
            Format::Html => html::write_streamed(out, out.rendered.tally.clone().unwrap_or_default(), pieces, w),
            Format::Github => {
                for piece in pieces {
                    w.write_all(piece.as_bytes())?;
                }
                for l in &out.findings {
                    w.write_all(github::finding(l).as_bytes())?;
                }
                for (level, e) in out.input_messages() {
                    w.write_all(github::input_message(level, e).as_bytes())?;
                }
                Ok(())
            }
            _ => {
                for piece in pieces {
                    w.write_all(piece.as_bytes())?;
                }
                for l in &out.findings {
                    self.scratch.clear();
                    text::write_finding(&mut self.scratch, l, self.color);
                    w.write_all(self.scratch.as_bytes())?;
                }
                if quiet {
                    return Ok(());
                }
                if out.finding_count() > 0 {
                    w.write_all(b"\n")?;
                }
                let line = summary::line(out);
                let line = if self.color { text::summary_line(&line) } else { text::plain_summary_line(&line) };
                w.write_all(line.as_bytes())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use policies::Policy;
    use serde_json::{Value, json};

    use super::*;
    use crate::audit::judge::{Judge, Judged, Namespace, judge};
    use crate::outcome::Origin;

    /// A namespace of Deployments, those named in `reused` with their
    /// readiness endpoint reused for liveness.
    fn namespace(name: &str, deployments: &[(&str, bool)]) -> Namespace {
        let objects = deployments
            .iter()
            .map(|(d, reused)| {
                let liveness = if *reused { "/readyz" } else { "/livez" };
                let probe = |path: &str| json!({"httpGet": {"path": path, "port": 8080}});
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": d, "namespace": name},
                    "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "example/app:1",
                        "livenessProbe": probe(liveness), "readinessProbe": probe("/readyz")}]}}}})
            })
            .collect::<Vec<Value>>();
        Namespace { name: name.into(), objects, services: Some(Vec::new()) }
    }

    /// How `audited` renders a namespace's findings.
    #[derive(Clone, Copy, PartialEq)]
    enum Pace {
        /// Held, and written at the end.
        AtTheEnd,
        /// Written as each namespace is judged.
        ByNamespace,
        /// Rendered as each object (a page of one) is judged, written by namespace.
        ByPage,
    }

    /// The report of `namespaces` as `audit` writes it: each namespace
    /// judged and rendered in turn, at the `pace` given.
    fn audited(format: Format, pace: Pace) -> String {
        let namespaces = [
            namespace("clean", &[("web", false)]),
            namespace("shop", &[("orders", true), ("cart", false), ("pay", true)]),
            namespace("empty", &[]),
            namespace("ml", &[("serve", true)]),
        ];
        let mut render = Render::new(format).expect("a streamed format").plain();
        let mut total = Outcome { origin: Origin::Cluster, ..Outcome::default() };
        let mut bytes = Vec::new();
        let policy = Policy::default();
        for ns in namespaces {
            let Judged { outcome: mut part, verdicts, .. } = if pace == Pace::ByPage {
                let mut judge = Judge::new(&ns.name, ns.services.as_deref(), &policy);
                for object in &ns.objects {
                    judge.objects(std::slice::from_ref(object), None);
                    judge.render(&mut render);
                }
                judge.finish()
            } else {
                judge(ns, &policy, None)
            };
            render.document(&mut part);
            render.json_entries(&mut part, &verdicts);
            total.files += 1;
            total.absorb(part);
            if pace != Pace::AtTheEnd {
                render.stream(&mut total, &mut bytes).expect("write to memory");
            }
        }
        render.write(&total, false, &mut bytes).expect("write to memory");
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn a_report_written_as_it_goes_is_the_report_written_at_the_end() {
        for format in [Format::Text, Format::Json, Format::Github, Format::Sarif, Format::Html] {
            let whole = audited(format, Pace::AtTheEnd);
            assert_eq!(audited(format, Pace::ByNamespace), whole, "{format:?}");
            assert_eq!(audited(format, Pace::ByPage), whole, "{format:?}");
            assert!(whole.contains("orders") && whole.contains("serve"), "{format:?}: {whole}");
        }
        let json: Value = serde_json::from_str(&audited(Format::Json, Pace::ByPage)).expect("JSON");
        assert_eq!(json.as_array().map(Vec::len), Some(3), "{json:#}");
    }
}
