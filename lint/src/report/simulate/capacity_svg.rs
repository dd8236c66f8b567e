//! A workload scenario's picture: Ready and available pods over time as
//! steps, the replicas as a dashed line, and the controller's marks (a
//! progress deadline exceeded, the rollout complete, a refused eviction).

use std::fmt::Write as _;

use policies::simulate::WorkloadOutcome;
use policies::simulate::controllers::StepKind;

use super::svg::{AXIS, Header, LEFT, RIGHT, WIDTH, time_axis};

/// The chart's height.
const CHART: i64 = 120;

/// The panel's height.
pub(crate) fn height(header: &Header) -> i64 {
    header.height() + CHART + AXIS
}

/// Draws the panel at `top`.
pub(crate) fn panel(out: &mut String, top: i64, header: &Header, o: &WorkloadOutcome) {
    let run = &o.run;
    let end = (run.end_ms + run.end_ms / 10).max(10_000);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |ms: i64| LEFT + ms.clamp(0, end) * plot / end;
    let chart_top = top + header.height();
    let bottom = chart_top + CHART;
    let most = run.capacity.iter().map(|c| c.pods.max(c.ready)).max().unwrap_or(0).max(o.replicas).max(1);
    let y = |n: i64| bottom - n * (CHART - 12) / most;
    let _ = writeln!(out, r##"<g class="panel workload">"##);
    header.write(out, top, o.verdict);
    let _ = writeln!(out, r##"<rect x="{LEFT}" y="{chart_top}" width="{plot}" height="{CHART}" fill="#f6f8fa"/>"##);
    let _ = writeln!(out, r##"<text x="12" y="{}">pods</text>"##, chart_top + 14);
    for (label, colour) in [("ready", "#0969da"), ("available", "#1a7f37")] {
        let dy = if label == "ready" { 32 } else { 48 };
        let _ = writeln!(out, r##"<text x="12" y="{}" fill="{colour}">{label}</text>"##, chart_top + dy);
    }
    // The replicas, dashed.
    let ry = y(o.replicas);
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{ry}" x2="{}" y2="{ry}" stroke="#8c959f" stroke-dasharray="4 3"/>"##,
        LEFT + plot
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="{}" font-size="10" fill="#57606a">{}</text>"##,
        LEFT - 24,
        ry + 4,
        o.replicas
    );
    let _ = writeln!(out, r##"<text x="{}" y="{}" font-size="10" fill="#57606a">0</text>"##, LEFT - 24, bottom);
    // Ready and available as steps.
    for (colour, of) in [("#1a7f37", 1), ("#0969da", 0)] {
        let mut points = Vec::new();
        for (i, c) in run.capacity.iter().enumerate() {
            let n = if of == 0 { c.ready } else { c.available };
            let until = run.capacity.get(i + 1).map_or(end, |next| next.at_ms);
            // Available a little below ready, so both show where they are equal.
            let dy = if of == 1 { 2 } else { 0 };
            points.push(format!("{},{}", x(c.at_ms), y(n) + dy));
            points.push(format!("{},{}", x(until), y(n) + dy));
        }
        let _ = writeln!(
            out,
            r##"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"##,
            points.join(" ")
        );
    }
    // The controller's marks.
    for s in &run.steps {
        let (word, colour) = match s.kind {
            StepKind::ProgressDeadlineExceeded => ("deadline exceeded", "#9a6700"),
            StepKind::Complete => ("complete", "#1a7f37"),
            StepKind::EvictionRefused => ("eviction refused", "#cf222e"),
            _ => continue,
        };
        let mx = x(s.at_ms);
        let _ = writeln!(
            out,
            r##"<line x1="{mx}" y1="{chart_top}" x2="{mx}" y2="{bottom}" stroke="{colour}" stroke-width="1.5"/>"##
        );
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="10" fill="{colour}">{word}</text>"##,
            mx + 3,
            chart_top + 10
        );
    }
    time_axis(out, bottom, end, &x);
    let _ = writeln!(out, "</g>");
}
