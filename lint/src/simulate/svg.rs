//! The SVG rendering: one timeline picture per object, container and
//! scenario, stacked in one document. Lanes: one per probe (its failures,
//! its restarts, the startup probe's success), then "running", "in
//! endpoints" and "terminating"; the disruption is a shaded band.

use std::fmt::Write as _;

use policies::Severity;
use policies::model::ProbeKind;
use policies::simulate::{ContainerOutcome, EventKind, Verdict, repeats, seconds};

use super::read::SimulateRun;
use super::text::label;

const WIDTH: i64 = 960;
const LEFT: i64 = 120;
const RIGHT: i64 = 24;
const LANE: i64 = 22;
const HEADER: i64 = 44;
const AXIS: i64 = 30;
const GAP: i64 = 18;
const LEGEND: i64 = 18;

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

/// Renders a whole run as one SVG document.
pub fn render(run: &SimulateRun) -> String {
    let mut panels = Vec::new();
    for s in &run.simulated {
        let title = label(&s.simulation);
        for o in &s.simulation.outcomes {
            panels.push((format!("{}: {title}, container {:?}", s.file, o.container), o));
        }
    }
    let heights: Vec<i64> = panels.iter().map(|(_, o)| height(o)).collect();
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
    for ((title, o), h) in panels.iter().zip(heights) {
        panel(&mut out, y, title, o);
        y += h + GAP;
    }
    out.push_str("</svg>\n");
    out
}

fn lanes(o: &ContainerOutcome) -> Vec<&'static str> {
    let mut lanes: Vec<&'static str> = o.probes.iter().map(|p| p.word()).collect();
    lanes.extend(["running", "in endpoints", "terminating"]);
    lanes
}

fn height(o: &ContainerOutcome) -> i64 {
    HEADER + LANE * lanes(o).len() as i64 + AXIS
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn verdict_colour(v: Verdict) -> &'static str {
    match v.severity() {
        None => "#1a7f37",
        Some(Severity::Info) => "#0969da",
        Some(Severity::Warning) => "#9a6700",
        Some(Severity::Error) => "#cf222e",
    }
}

/// A step for axis ticks that gives at most ten of them.
fn tick_step(end_ms: i64) -> i64 {
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

fn panel(out: &mut String, top: i64, title: &str, o: &ContainerOutcome) {
    let last = o.events.iter().map(|e| e.at_ms).max().unwrap_or(0);
    let end = (last + last / 10).max(10_000);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |ms: i64| LEFT + ms.clamp(0, end) * plot / end;
    let lanes = lanes(o);
    let lanes_top = top + HEADER;
    let lanes_bottom = lanes_top + LANE * lanes.len() as i64;
    let _ = writeln!(out, r##"<g class="panel">"##);
    let _ = writeln!(
        out,
        r##"<text x="12" y="{}" font-weight="bold">{} · {}</text>"##,
        top + 14,
        escape(title),
        escape(&o.scenario)
    );
    let _ = writeln!(
        out,
        r##"<text x="12" y="{}" fill="{}">{}: {}</text>"##,
        top + 32,
        verdict_colour(o.verdict),
        o.verdict.name(),
        escape(&o.message)
    );
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
    let steady = !o.events.iter().any(|e| e.kind == EventKind::Started && e.at_ms == 0);
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
    // The time axis.
    let step = tick_step(end);
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{lanes_bottom}" x2="{}" y2="{lanes_bottom}" stroke="#8c959f"/>"##,
        LEFT + plot
    );
    let mut t = 0;
    while t <= end {
        let tx = x(t);
        let _ = writeln!(
            out,
            r##"<line x1="{tx}" y1="{lanes_bottom}" x2="{tx}" y2="{}" stroke="#8c959f"/>"##,
            lanes_bottom + 4
        );
        let _ = writeln!(
            out,
            r##"<text x="{tx}" y="{}" font-size="10" text-anchor="middle" fill="#57606a">{} s</text>"##,
            lanes_bottom + 16,
            seconds(t)
        );
        t += step;
    }
    let _ = writeln!(out, "</g>");
}
