//! The text rendering: per object and container, one verdict line per
//! scenario and a compact timeline of its worst case.

use std::fmt::Write as _;

use policies::model::object_label;
use policies::simulate::{ContainerOutcome, Event, EventKind, ObjectSimulation, PodOutcome, plural, repeats, seconds};

use crate::simulate::read::{SimulateRun, Simulated};

/// Width of each column when `--diff-fix` shows two timelines side by
/// side; a longer line is wrapped, so the right column starts at the same
/// place on every line.
const COLUMN: usize = 58;

/// Where an event's words start in a timeline line (the two spaces of its
/// indent, then the time and probe columns of [`line`]): a wrapped event
/// goes on under its own words.
const EVENT_COLUMN: usize = 2 + TIME_WIDTH + 1 + PROBE_WIDTH + 1;

/// Widths of a timeline line's time and probe columns.
const TIME_WIDTH: usize = 12;
const PROBE_WIDTH: usize = 9;

/// Renders a whole run.
pub fn render(run: &SimulateRun) -> String {
    let mut out = String::new();
    for s in &run.simulated {
        object(&mut out, s);
    }
    out
}

/// `Kind/namespace/name` of a simulation.
pub fn label(sim: &ObjectSimulation) -> String {
    object_label(&sim.kind, sim.namespace.as_deref(), sim.name.as_deref())
}

fn object(out: &mut String, s: &Simulated) {
    let sim = &s.simulation;
    let _ = writeln!(out, "{}:{}: {}", s.file, s.line, label(sim));
    if s.fixed.as_ref().is_some_and(|f| f.fixes.is_empty()) {
        let _ = writeln!(out, "  as `lifeguard fix` leaves it (right): no fix applies");
    } else if let Some(fixed) = &s.fixed {
        let _ = writeln!(out, "  as `lifeguard fix` leaves it (right):");
        for f in &fixed.fixes {
            let _ = writeln!(out, "    - {f}");
        }
    }
    let mut container = None;
    let mut pod_shown: Option<&[String]> = None;
    for (i, o) in sim.outcomes.iter().enumerate() {
        // A pod of several containers: its row above its containers.
        if let Some(pod) = o.pod.as_ref().filter(|p| pod_shown != Some(p.containers.as_slice())) {
            pod_shown = Some(&pod.containers);
            let same = |x: &&ContainerOutcome| x.pod.as_ref().is_some_and(|p| p.containers == pod.containers);
            let of_pod: Vec<&ContainerOutcome> = sim.outcomes[i..].iter().take_while(same).collect();
            for line in pod_lines(&of_pod) {
                let _ = writeln!(out, "  {line}");
            }
        }
        if container != Some(&o.pointer) {
            container = Some(&o.pointer);
            let line = s.container_lines.get(i).copied().unwrap_or(s.line);
            let _ = writeln!(out, "  container {:?} (line {line})", o.container);
        }
        let after = s.fixed.as_ref().and_then(|f| f.simulation.outcomes.get(i));
        match after {
            None => {
                for line in outcome_lines(o) {
                    let _ = writeln!(out, "    {line}");
                }
            }
            Some(after) => {
                let (left, right) = (outcome_rows(o), outcome_rows(after));
                let wrapped = |rows: &[(String, usize)], i: usize| {
                    rows.get(i).map_or_else(Vec::new, |(text, hang)| wrap(text, COLUMN, *hang))
                };
                for i in 0..left.len().max(right.len()) {
                    // A line and its counterpart start on the same row, however
                    // many rows either wraps to.
                    let (l, r) = (wrapped(&left, i), wrapped(&right, i));
                    for k in 0..l.len().max(r.len()) {
                        let l = l.get(k).map_or("", String::as_str);
                        let r = r.get(k).map_or("", String::as_str);
                        let line = format!("    {l:<COLUMN$} | {r}");
                        let _ = writeln!(out, "{}", line.trim_end());
                    }
                }
            }
        }
    }
    workload_lines(out, s);
    out.push('\n');
}

/// The workload scenarios' outcomes below the containers', and with
/// `--diff-fix` the fixed object's after each.
fn workload_lines(out: &mut String, s: &Simulated) {
    let sim = &s.simulation;
    if !sim.workload.is_empty() || !sim.not_simulated.is_empty() {
        let _ = writeln!(out, "  workload (line {})", s.line);
    }
    for (i, o) in sim.workload.iter().enumerate() {
        for line in super::workload::lines(o) {
            let _ = writeln!(out, "    {line}");
        }
        if let Some(after) = s.fixed.as_ref().and_then(|f| f.simulation.workload.get(i)) {
            let _ = writeln!(out, "    as `lifeguard fix` leaves it:");
            for line in super::workload::lines(after) {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    for n in &sim.not_simulated {
        let _ = writeln!(out, "    {}", super::workload::not_simulated_line(n));
    }
}

/// The pod row of a pod of several containers: a line per scenario of
/// when the pod is out of the endpoints and what held it out (one per
/// container where the scenario is each container's own, a pause or a
/// wedge).
pub(crate) fn pod_lines(outcomes: &[&ContainerOutcome]) -> Vec<String> {
    let Some(pod) = outcomes.first().and_then(|o| o.pod.as_ref()) else { return Vec::new() };
    let names: Vec<String> = pod.containers.iter().map(|n| format!("{n:?}")).collect();
    let mut lines = vec![format!("pod (containers {}: in endpoints only when every one is ready)", names.join(", "))];
    let mut scenarios: Vec<&str> = Vec::new();
    for o in outcomes {
        if !scenarios.contains(&o.scenario.as_str()) {
            scenarios.push(&o.scenario);
        }
    }
    for scenario in scenarios {
        let pods: Vec<(&str, &PodOutcome)> = outcomes
            .iter()
            .filter(|o| o.scenario == scenario)
            .filter_map(|o| Some((o.container.as_str(), o.pod.as_ref()?)))
            .collect();
        match pods.first() {
            Some((_, first)) if pods.iter().all(|(_, p)| p == first) => {
                lines.push(format!("  {scenario}: {}", pod_line(first)));
            }
            _ => lines.extend(pods.iter().map(|(c, p)| format!("  {scenario} of {c:?}: {}", pod_line(p)))),
        }
    }
    lines
}

/// When a pod's containers started, where they did not all start at
/// once, when the pod is out of the endpoints, each span with what held it
/// out, and in a deletion the order its containers stop in.
fn pod_line(pod: &PodOutcome) -> String {
    let mut parts = Vec::new();
    if pod.started_ms.iter().any(|t| *t != Some(0)) {
        let starts: Vec<String> = pod
            .containers
            .iter()
            .zip(&pod.started_ms)
            .map(|(n, t)| t.map_or_else(|| format!("{n:?} never"), |t| format!("{n:?} at {} s", seconds(t))))
            .collect();
        parts.push(format!("starts {}", starts.join(", ")));
    }
    for span in &pod.out {
        let when = if span.open {
            format!("from {} s on", seconds(span.from_ms))
        } else {
            format!("{}-{} s", seconds(span.from_ms), seconds(span.to_ms))
        };
        parts.push(format!("out of endpoints {when} (held out by {})", span.held()));
    }
    if pod.out.is_empty() {
        parts.push("in endpoints throughout".to_owned());
    }
    if !pod.stops.is_empty() {
        let stops: Vec<String> = pod
            .stops
            .iter()
            .map(|s| {
                let end = if s.killed { "SIGKILL" } else { "exit" };
                format!("{:?} (signal {} s, {end} {} s)", s.container, seconds(s.sigterm_ms), seconds(s.end_ms))
            })
            .collect();
        parts.push(format!("stops {}", stops.join(", then ")));
    }
    parts.join("; ")
}

/// The verdict line, the figures and the compact timeline of one outcome.
pub fn outcome_lines(o: &ContainerOutcome) -> Vec<String> {
    outcome_rows(o).into_iter().map(|(line, _)| line).collect()
}

/// [`outcome_lines`], each with the column its continuation starts at when
/// it is wrapped (see [`wrap`]).
fn outcome_rows(o: &ContainerOutcome) -> Vec<(String, usize)> {
    let mut rows = vec![(format!("{} [{}] {}", o.scenario, o.verdict.name(), o.message), 4)];
    if !o.assumptions.is_empty() {
        rows.push((format!("  assumes: {}", policies::assumption::joined_brief(&o.assumptions)), 6));
    }
    if o.offsets > 1 {
        let fig = |f: &policies::simulate::Figures| {
            let first = f.restart_at_ms.map_or_else(String::new, |t| format!(" (first at {} s)", seconds(t)));
            format!("{}{first}, {} s out of endpoints", plural(i64::from(f.restarts), "restart"), seconds(f.unready_ms))
        };
        rows.push((format!("  worst of {} offsets: {}", o.offsets, fig(&o.worst)), 6));
        rows.push((format!("  best: {}", fig(&o.best)), 6));
        // The least time all replicas are out together, which the verdict's line reads.
        if let Some(ms) = o.unready_at_once_ms {
            rows.push((format!("  every offset at once: {} s out of endpoints", seconds(ms)), 6));
        }
    }
    rows.extend(compact(&o.events).into_iter().map(|l| (format!("  {l}"), EVENT_COLUMN)));
    rows
}

/// `text` in rows of at most `width` characters, broken after a word where
/// one ends in time (else inside the word), each row after the first
/// starting at column `hang`.
fn wrap(text: &str, width: usize, hang: usize) -> Vec<String> {
    let hang = " ".repeat(hang.min(width / 2));
    let mut rows = Vec::new();
    let mut rest = text.to_owned();
    while rest.chars().count() > width {
        let indent = rest.len() - rest.trim_start().len();
        let limit = rest.char_indices().nth(width).map_or(rest.len(), |(i, _)| i);
        if indent >= limit {
            break;
        }
        let space = if rest[limit..].starts_with(' ') { Some(limit) } else { rest[..limit].rfind(' ') };
        let cut = space.filter(|&i| i > indent).unwrap_or(limit);
        rows.push(rest[..cut].trim_end().to_owned());
        rest = format!("{hang}{}", rest[cut..].trim_start());
    }
    rows.push(rest);
    rows
}

/// Events as lines: a cycle that repeats the one before it summarised in
/// one line ([`repeats`]), failures merged by [`merged`].
fn compact(events: &[Event]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut from = 0;
    for r in repeats(events) {
        lines.extend(merged(&events[from..r.events.start]));
        lines.push(line(format!("{}-{}s", seconds(r.span.0), seconds(r.span.1)), "", &r.summary(), ""));
        from = r.events.end;
    }
    lines.extend(merged(&events[from..]));
    lines
}

fn is_failure(e: &Event) -> bool {
    matches!(e.kind, EventKind::ProbeFailed | EventKind::ProbeTimedOut | EventKind::ProbeErrored)
}

/// A failure that changes nothing however often it comes: past the
/// probe's threshold, or errored (the kubelet discards the result).
fn changes_nothing(e: &Event) -> bool {
    e.past_threshold || e.kind == EventKind::ProbeErrored
}

/// Events as lines. A run of the same probe failing is one line; a probe's
/// failures that change nothing (past its threshold, the container already
/// unready; or errored, discarded by the kubelet) are one line until the
/// probe does something else or the container starts again, whatever
/// happens in between.
fn merged(events: &[Event]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut used = vec![false; events.len()];
    for i in 0..events.len() {
        if used[i] {
            continue;
        }
        let e = &events[i];
        let mut group = vec![i];
        if is_failure(e) && changes_nothing(e) {
            for (k, f) in events.iter().enumerate().skip(i + 1) {
                if f.kind == EventKind::Started {
                    break;
                }
                if f.probe != e.probe || used[k] {
                    continue;
                }
                if f.kind != e.kind || !changes_nothing(f) {
                    break;
                }
                group.push(k);
            }
        } else if is_failure(e) {
            let same = |f: &Event| f.kind == e.kind && f.probe == e.probe && !f.past_threshold;
            group.extend((i + 1..events.len()).take_while(|&k| same(&events[k])));
        }
        for &k in &group {
            used[k] = true;
        }
        let last = &events[group[group.len() - 1]];
        let probe = e.probe.map_or("", |p| p.word());
        let (at, detail) = if group.len() > 1 {
            let details =
                if e.detail == last.detail { e.detail.clone() } else { format!("{} .. {}", e.detail, last.detail) };
            (format!("{}-{}s", seconds(e.at_ms), seconds(last.at_ms)), format!("x{} ({details})", group.len()))
        } else if e.detail.is_empty() {
            (format!("{}s", seconds(e.at_ms)), String::new())
        } else {
            (format!("{}s", seconds(e.at_ms)), format!("({})", e.detail))
        };
        // The stop event names the signal sent when it is not SIGTERM.
        // In a pod of several containers a container's readiness is its
        // own: the pod's row says when the pod is in the endpoints.
        let what = match e.kind {
            EventKind::ContainerReady if e.detail.is_empty() => "container ready",
            _ => e.signal.as_deref().unwrap_or(phrase(e.kind)),
        };
        lines.push(line(at, probe, what, &detail));
    }
    lines
}

/// One timeline line: time, probe, what happened and its detail, in columns.
fn line(at: String, probe: &str, what: &str, detail: &str) -> String {
    format!("{at:>TIME_WIDTH$} {probe:<PROBE_WIDTH$} {what} {detail}").trim_end().to_owned()
}

/// How a person reads an event.
pub fn phrase(kind: EventKind) -> &'static str {
    match kind {
        EventKind::Started => "container started",
        EventKind::PostStart => "postStart hook runs",
        EventKind::AppHealthy => "app answers",
        EventKind::DisruptionStart => "disruption starts",
        EventKind::DisruptionEnd => "disruption ends",
        EventKind::ProbeFailed => "failed",
        EventKind::ProbeTimedOut => "timed out",
        EventKind::ProbeErrored => "errored",
        EventKind::StartupSucceeded => "succeeded",
        EventKind::Ready => "in endpoints",
        EventKind::ContainerReady => "container ready, not in endpoints",
        EventKind::Unready => "out of endpoints",
        EventKind::ContainerUnready => "container unready",
        EventKind::Kill => "restart",
        EventKind::BackOff => "back-off",
        EventKind::NotRestarted => "not restarted",
        EventKind::Deleted => "pod deleted",
        EventKind::EndpointsRemoved => "endpoint removal reaches the proxies",
        EventKind::PreStop => "preStop",
        EventKind::Sigterm => "SIGTERM",
        EventKind::WorkDone => "in-flight work and shutdown done",
        EventKind::Exited => "exited",
        EventKind::Sigkill => "SIGKILL",
    }
}
