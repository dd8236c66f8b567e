//! The SVG rendering: one timeline picture per object, container and
//! scenario, stacked in one document. Lanes: one per probe (its failures,
//! its restarts, the startup probe's success), then "running", "in
//! endpoints" and "terminating"; the disruption is a shaded band. A
//! workload scenario's picture is its capacity over time
//! ([`super::capacity_svg`]).
//!
//! Over 400 lines: the geometry (sizes, and the wrapping that keeps a panel's
//! text inside the canvas), the header and time axis `capacity_svg` shares, and
//! `panel` (about 155 lines), which draws every lane of a timeline in one pass
//! over its events, all work in one coordinate system.

use std::fmt::Write as _;

use policies::Severity;
use policies::model::ProbeKind;
use policies::simulate::{ContainerOutcome, EventKind, PodOutcome, Verdict, WorkloadOutcome, repeats, seconds};

use super::text::label;
use crate::outcome::Origin;
use crate::report::html::escape::escape;
use crate::simulate::read::{SimulateRun, Simulated};

pub(crate) const WIDTH: i64 = 960;
pub(crate) const LEFT: i64 = 120;
pub(crate) const RIGHT: i64 = 24;
const LANE: i64 = 22;
const HEADER: i64 = 44;
pub(crate) const AXIS: i64 = 30;
pub(crate) const GAP: i64 = 18;
const LEGEND: i64 = 18;
/// Where a panel's title and verdict lines start, and the room they leave
/// on the right (as much as on the left).
pub(crate) const TEXT_X: i64 = 12;
/// The font size of the title and the verdict, and the distance between
/// their lines when they wrap.
const FONT_PX: f64 = 12.0;
pub(crate) const LINE: i64 = 16;
/// A glyph's width in em, estimated from above for Helvetica and Arial:
/// lower case and digits are 0.5-0.56 em, most capitals 0.61-0.72; bold a
/// little wider. A line of `chars_per_line` glyphs then ends inside the
/// canvas unless it is mostly capitals or `m`/`w`.
const GLYPH_EM: f64 = 0.6;
const BOLD_GLYPH_EM: f64 = 0.66;

/// How many glyphs of the panel's text fit between `TEXT_X` and as much
/// room on the right.
fn chars_per_line(bold: bool) -> usize {
    let em = if bold { BOLD_GLYPH_EM } else { GLYPH_EM };
    let room = (WIDTH - 2 * TEXT_X) as f64;
    (room / (FONT_PX * em)).floor() as usize
}

/// `text` in lines of at most `max` characters, broken at spaces (a word
/// longer than a line is cut where the line ends).
pub(crate) fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + word.len() > max {
            lines.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        while len + word.len() > max {
            let rest = word.split_off(max - len);
            line.extend(word);
            lines.push(std::mem::take(&mut line));
            len = 0;
            word = rest;
        }
        len += word.len();
        line.extend(word);
    }
    lines.push(line);
    lines
}

/// A panel's header: its title (bold) and its verdict, each wrapped to the canvas.
pub(crate) struct Header {
    pub(crate) title: Vec<String>,
    pub(crate) verdict: Vec<String>,
}

impl Header {
    fn new(title: &str, o: &ContainerOutcome) -> Header {
        Header {
            title: wrap(&format!("{title} · {}", o.scenario), chars_per_line(true)),
            verdict: wrap(&format!("{}: {}", o.verdict.name(), o.message), chars_per_line(false)),
        }
    }

    fn of_workload(title: &str, o: &WorkloadOutcome) -> Header {
        Header {
            title: wrap(&format!("{title} · {}", o.scenario), chars_per_line(true)),
            verdict: wrap(&format!("{}: {}", o.verdict.name(), o.message), chars_per_line(false)),
        }
    }

    /// Writes its lines from `top`: the title in bold, then the verdict's
    /// in its colour, one <text> a line, so each line stands alone (and is
    /// found whole).
    pub(crate) fn write(&self, out: &mut String, top: i64, verdict: Verdict) {
        let mut line_y = top + 14;
        for line in &self.title {
            let _ = writeln!(out, r##"<text x="{TEXT_X}" y="{line_y}" font-weight="bold">{}</text>"##, escape(line));
            line_y += LINE;
        }
        line_y += 18 - LINE;
        let colour = verdict_colour(verdict);
        for line in &self.verdict {
            let _ = writeln!(out, r##"<text x="{TEXT_X}" y="{line_y}" fill="{colour}">{}</text>"##, escape(line));
            line_y += LINE;
        }
    }

    /// Its height above the lanes: 44 px for one line of each, and a line
    /// more for each wrapped one.
    pub(crate) fn height(&self) -> i64 {
        HEADER + LINE * (self.title.len() + self.verdict.len()).saturating_sub(2) as i64
    }
}

/// What the marks mean, once at the top.
fn legend(out: &mut String) {
    let y = GAP + 2;
    let _ = writeln!(out, r##"<g class="legend" font-size="11" fill="#57606a">"##);
    let _ = writeln!(
        out,
        r##"<circle cx="16" cy="{}" r="3.5" fill="#cf222e"/><text x="24" y="{y}">probe check failed or timed out</text>"##,
        y - 4
    );
    let _ = writeln!(
        out,
        r##"<circle cx="226" cy="{}" r="4" fill="#1a7f37"/><text x="234" y="{y}">startup probe succeeded</text>"##,
        y - 4
    );
    let _ = writeln!(
        out,
        r##"<line x1="396" y1="{}" x2="396" y2="{}" stroke="#cf222e" stroke-width="2"/><text x="402" y="{y}">kubelet restarts the container</text>"##,
        y - 10,
        y + 2
    );
    let _ = writeln!(
        out,
        r##"<rect x="600" y="{}" width="14" height="10" fill="#fff1c2"/><text x="620" y="{y}">the scenario's stall, pause or wedge</text>"##,
        y - 9
    );
    let _ = writeln!(out, "</g>");
}

/// One picture: a container's timeline or a workload's capacity.
enum Panel<'a> {
    Container(Header, &'a ContainerOutcome),
    Workload(Header, &'a WorkloadOutcome),
}

impl Panel<'_> {
    fn height(&self) -> i64 {
        match self {
            Panel::Container(header, o) => height(header, o),
            Panel::Workload(header, _) => super::capacity_svg::height(header),
        }
    }
}

/// Renders a whole run as one SVG document.
pub fn render(run: &SimulateRun) -> String {
    document(run.simulated.iter().flat_map(|s| panels(s, |_| true).into_iter().chain(workload_panels(s))).collect())
}

/// One container's scenarios of a simulated object as one SVG document
/// (the HTML report shows each container's beside its verdicts).
pub fn render_container(s: &Simulated, container: &str) -> String {
    document(panels(s, |o| o.container == container))
}

/// An object's workload scenarios as one SVG document.
pub fn render_workload(s: &Simulated) -> String {
    document(workload_panels(s))
}

fn title(s: &Simulated) -> String {
    match s.origin {
        Origin::File => format!("{}: {}", s.file, label(&s.simulation)),
        Origin::Cluster => label(&s.simulation),
    }
}

/// The panels of an object's outcomes that `keep` accepts.
fn panels(s: &Simulated, keep: impl Fn(&ContainerOutcome) -> bool) -> Vec<Panel<'_>> {
    let title = title(s);
    let outcomes = s.simulation.outcomes.iter().filter(|o| keep(o));
    outcomes.map(|o| Panel::Container(Header::new(&format!("{title}, container {:?}", o.container), o), o)).collect()
}

/// The panels of an object's workload scenarios.
fn workload_panels(s: &Simulated) -> Vec<Panel<'_>> {
    let title = title(s);
    s.simulation.workload.iter().map(|o| Panel::Workload(Header::of_workload(&title, o), o)).collect()
}

fn document(panels: Vec<Panel<'_>>) -> String {
    let heights: Vec<i64> = panels.iter().map(Panel::height).collect();
    let total: i64 = heights.iter().sum::<i64>() + GAP * (panels.len() as i64 + 1) + LEGEND;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{total}" viewBox="0 0 {WIDTH} {total}" font-family="Helvetica, Arial, sans-serif" font-size="12">"##
    );
    let _ = writeln!(out, "<title>lifeguard simulate</title>");
    let _ = writeln!(out, r##"<rect x="0" y="0" width="{WIDTH}" height="{total}" fill="#ffffff"/>"##);
    legend(&mut out);
    let mut y = GAP + LEGEND;
    for (p, h) in panels.iter().zip(heights) {
        match p {
            Panel::Container(header, o) => panel(&mut out, y, header, o),
            Panel::Workload(header, o) => super::capacity_svg::panel(&mut out, y, header, o),
        }
        y += h + GAP;
    }
    out.push_str("</svg>\n");
    out
}

fn lanes(o: &ContainerOutcome) -> Vec<&'static str> {
    // In a pod of several containers a container's readiness is its own,
    // and the pod's row, at the top, says when the pod is in the endpoints.
    let pod: &[&'static str] = if o.pod.is_some() { &["pod in endpoints"] } else { &[] };
    let mut lanes: Vec<&'static str> = pod.iter().copied().chain(o.probes.iter().map(|p| p.word())).collect();
    if o.pod.is_some() {
        lanes.extend(["running", "ready", "terminating"]);
    } else {
        lanes.extend(["running", "in endpoints", "terminating"]);
    }
    lanes
}

/// The spans (ms) a pod is in the endpoints, up to `end`: between its
/// spans out.
fn pod_in(pod: &PodOutcome, end: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut from = 0;
    for span in &pod.out {
        if span.from_ms > from {
            out.push((from, span.from_ms));
        }
        from = if span.open { end } else { span.to_ms };
    }
    if from < end {
        out.push((from, end));
    }
    out
}

fn height(header: &Header, o: &ContainerOutcome) -> i64 {
    header.height() + LANE * lanes(o).len() as i64 + AXIS
}

pub(crate) fn verdict_colour(v: Verdict) -> &'static str {
    match v.severity() {
        None => "#1a7f37",
        Some(Severity::Info) => "#0969da",
        Some(Severity::Warning) => "#9a6700",
        Some(Severity::Error) => "#cf222e",
    }
}

/// The time axis under a panel's lanes or chart at `bottom`, from 0 to
/// `end` ms, ticks placed by `x`.
pub(crate) fn time_axis(out: &mut String, bottom: i64, end: i64, x: &dyn Fn(i64) -> i64) {
    let step = tick_step(end);
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{bottom}" x2="{}" y2="{bottom}" stroke="#8c959f"/>"##,
        LEFT + WIDTH - LEFT - RIGHT
    );
    let mut t = 0;
    while t <= end {
        let tx = x(t);
        let _ = writeln!(out, r##"<line x1="{tx}" y1="{bottom}" x2="{tx}" y2="{}" stroke="#8c959f"/>"##, bottom + 4);
        let _ = writeln!(
            out,
            r##"<text x="{tx}" y="{}" font-size="10" text-anchor="middle" fill="#57606a">{} s</text>"##,
            bottom + 16,
            seconds(t)
        );
        t += step;
    }
}

/// A step for axis ticks that gives at most ten of them.
pub(crate) fn tick_step(end_ms: i64) -> i64 {
    [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600]
        .into_iter()
        .map(|s| s * 1000)
        .find(|s| end_ms / s <= 10)
        .unwrap_or(3_600_000)
}

/// Spans (ms) a lane is "on", from events that switch it on and off.
fn spans(o: &ContainerOutcome, on_at_start: bool, on: &[EventKind], off: &[EventKind], end: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut since = on_at_start.then_some(0);
    for e in &o.events {
        if on.contains(&e.kind) && since.is_none() {
            since = Some(e.at_ms);
        } else if off.contains(&e.kind) {
            if let Some(s) = since.take() {
                out.push((s, e.at_ms));
            }
        }
    }
    if let Some(s) = since {
        out.push((s, end));
    }
    out
}

fn panel(out: &mut String, top: i64, header: &Header, o: &ContainerOutcome) {
    let last = o.events.iter().map(|e| e.at_ms).max().unwrap_or(0);
    let end = (last + last / 10).max(10_000);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |ms: i64| LEFT + ms.clamp(0, end) * plot / end;
    let lanes = lanes(o);
    let lanes_top = top + header.height();
    let lanes_bottom = lanes_top + LANE * lanes.len() as i64;
    let _ = writeln!(out, r##"<g class="panel">"##);
    header.write(out, top, o.verdict);
    // The disruption, shaded across every lane.
    let start = o.events.iter().find(|e| e.kind == EventKind::DisruptionStart);
    if let Some(s) = start {
        let stop = o.events.iter().find(|e| e.kind == EventKind::DisruptionEnd).map_or(end, |e| e.at_ms);
        let (x0, x1) = (x(s.at_ms), x(stop).max(x(s.at_ms) + 2));
        let _ = writeln!(
            out,
            r##"<rect x="{x0}" y="{lanes_top}" width="{}" height="{}" fill="#fff1c2"/>"##,
            x1 - x0,
            lanes_bottom - lanes_top
        );
        let what = if s.detail.is_empty() { "disruption" } else { s.detail.as_str() };
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="10" fill="#9a6700">{}</text>"##,
            x0 + 3,
            lanes_top - 2,
            escape(what)
        );
    }
    let steady = match &o.pod {
        // A container of a pod may start after the pod's 0, behind its
        // sidecars, or never.
        Some(_) => o.events.first().is_some_and(|e| e.kind != EventKind::Started),
        None => !o.events.iter().any(|e| e.kind == EventKind::Started && e.at_ms == 0),
    };
    let deleted = o.events.iter().any(|e| e.kind == EventKind::Deleted);
    for (i, name) in lanes.iter().enumerate() {
        let y = lanes_top + LANE * i as i64;
        let mid = y + LANE / 2;
        let fill = if i % 2 == 0 { "#f6f8fa" } else { "#ffffff" };
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{y}" width="{plot}" height="{LANE}" fill="{fill}" fill-opacity="0.6"/>"##
        );
        let _ = writeln!(out, r##"<text x="12" y="{}">{name}</text>"##, mid + 4);
        let bars = |out: &mut String, spans: Vec<(i64, i64)>, colour: &str| {
            for (a, b) in spans {
                let _ = writeln!(
                    out,
                    r##"<rect x="{}" y="{}" width="{}" height="{}" fill="{colour}" rx="2"/>"##,
                    x(a),
                    y + 5,
                    (x(b) - x(a)).max(1),
                    LANE - 10
                );
            }
        };
        match *name {
            "running" => {
                let on =
                    spans(o, steady || deleted, &[EventKind::Started], &[EventKind::Exited, EventKind::Sigkill], end);
                bars(out, on, "#2da44e");
            }
            "in endpoints" => {
                let off = [EventKind::Unready, EventKind::EndpointsRemoved];
                bars(out, spans(o, steady || deleted, &[EventKind::Ready], &off, end), "#0969da");
            }
            "ready" => {
                let off = [EventKind::ContainerUnready, EventKind::EndpointsRemoved];
                bars(out, spans(o, steady || deleted, &[EventKind::ContainerReady], &off, end), "#54aeff");
            }
            "pod in endpoints" => {
                bars(out, o.pod.as_ref().map_or_else(Vec::new, |p| pod_in(p, end)), "#0969da");
            }
            "terminating" => {
                let on = [EventKind::Kill, EventKind::Deleted];
                bars(out, spans(o, false, &on, &[EventKind::Exited, EventKind::Sigkill], end), "#fb8f44");
                // The wait before the next start, where the container is neither running nor
                // terminating; cycles that repeat the one before them get one label, as in the text.
                let repeats = repeats(&o.events);
                let repeated = |i: usize| repeats.iter().any(|r| r.events.contains(&i));
                let labels = o.events.iter().enumerate().filter(|&(i, e)| e.kind == EventKind::BackOff && !repeated(i));
                let labels = labels.map(|(_, e)| (e.at_ms, e.detail.replace("CrashLoopBackOff", "back-off")));
                for (at, what) in labels.chain(repeats.iter().map(|r| (r.span.0, r.summary()))) {
                    let _ = writeln!(
                        out,
                        r##"<text x="{}" y="{}" font-size="10" fill="#57606a">{}</text>"##,
                        x(at) + 3,
                        mid + 4,
                        escape(&what)
                    );
                }
                for e in o.events.iter().filter(|e| matches!(e.kind, EventKind::Sigterm | EventKind::Sigkill)) {
                    let colour = if e.kind == EventKind::Sigkill { "#cf222e" } else { "#57606a" };
                    let word = match e.kind {
                        EventKind::Sigkill => "SIGKILL",
                        _ => e.signal.as_deref().unwrap_or("SIGTERM"),
                    };
                    let _ = writeln!(
                        out,
                        r##"<line x1="{0}" y1="{y}" x2="{0}" y2="{1}" stroke="{colour}" stroke-width="2"/>"##,
                        x(e.at_ms),
                        y + LANE
                    );
                    let _ = writeln!(
                        out,
                        r##"<text x="{}" y="{}" font-size="10" fill="{colour}">{}</text>"##,
                        x(e.at_ms) + 3,
                        y + 9,
                        // The signal comes from the manifest.
                        escape(word)
                    );
                }
            }
            probe => {
                for e in o.events.iter().filter(|e| e.probe.map(ProbeKind::word) == Some(probe)) {
                    let cx = x(e.at_ms);
                    match e.kind {
                        EventKind::ProbeFailed | EventKind::ProbeTimedOut => {
                            let _ = writeln!(out, r##"<circle cx="{cx}" cy="{mid}" r="3.5" fill="#cf222e"/>"##);
                        }
                        // A check the kubelet could not send: no result, hollow.
                        EventKind::ProbeErrored => {
                            let _ = writeln!(
                                out,
                                r##"<circle cx="{cx}" cy="{mid}" r="3.5" fill="none" stroke="#6e7781"/>"##
                            );
                        }
                        EventKind::StartupSucceeded => {
                            let _ = writeln!(out, r##"<circle cx="{cx}" cy="{mid}" r="4" fill="#1a7f37"/>"##);
                        }
                        EventKind::Kill => {
                            let _ = writeln!(
                                out,
                                r##"<line x1="{cx}" y1="{y}" x2="{cx}" y2="{}" stroke="#cf222e" stroke-width="2"/>"##,
                                y + LANE
                            );
                            let _ = writeln!(
                                out,
                                r##"<text x="{}" y="{}" font-size="10" fill="#cf222e">restart</text>"##,
                                cx + 3,
                                y + 9
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    time_axis(out, lanes_bottom, end, &x);
    let _ = writeln!(out, "</g>");
}

#[cfg(test)]
mod tests {
    use super::{chars_per_line, wrap};

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_only_a_word_longer_than_a_line() {
        assert_eq!(wrap("restart storm: all 3 replicas restart", 16), ["restart storm:", "all 3 replicas", "restart"]);
        assert_eq!(wrap("a Service/aaaaaaaaaaaaaaaaaaaa b", 10), ["a", "Service/aa", "aaaaaaaaaa", "aaaaaaaa b"]);
        assert_eq!(wrap("short", 130), ["short"]);
        assert_eq!(wrap("", 10), [""]);
        for line in wrap(&"word ".repeat(200), 37) {
            assert!(line.chars().count() <= 37, "{line:?}");
        }
        // Characters, not bytes.
        assert_eq!(wrap("·· ··", 2), ["··", "··"]);
    }

    #[test]
    fn a_line_of_the_most_that_fits_ends_inside_the_canvas() {
        assert_eq!((chars_per_line(false), chars_per_line(true)), (130, 118));
    }
}
