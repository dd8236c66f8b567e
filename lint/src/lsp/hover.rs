//! Hover: on a finding's field, the rule's summary, the finding and its
//! help; on a `lifeguard.dev/*` annotation key, what it means.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position, Range};
use policies::model::annotation_doc;

use super::text::Lines;
use super::workspace::Open;

fn contains(range: &Range, at: Position) -> bool {
    range.start <= at && at <= range.end
}

/// The hover at `at` in the open file, if anything there is lifeguard's.
pub fn hover(open: &Open, at: Position) -> Option<Hover> {
    if let Some(hover) = annotation(open, at) {
        return Some(hover);
    }
    // The innermost field holding the position: the shortest range.
    let placed = open
        .analysis
        .findings
        .iter()
        .filter(|p| contains(&p.range, at))
        .min_by_key(|p| (p.range.end.line - p.range.start.line, p.range.end.character))?;
    let f = &placed.located.finding;
    let summary = policies::rules::find(&f.rule).map(|r| r.summary).unwrap_or_default();
    // The words `lint` prints; only a fix the policy applies is a quick fix.
    let fix = match f.fix_note() {
        Ok(note) if f.automatic_fix().is_some() => format!("\n\n**Fix** (quick fix, or `lifeguard fix`): {note}"),
        Ok(note) => format!("\n\n**Fix**: {note}"),
        Err(why) => format!("\n\n**No automatic fix**: {why}"),
    };
    // What the finding rests on, each with how to declare it when it is wrong.
    let assumes: String = f.assumptions.iter().map(|a| format!("\n- {} (declare: {})", a.line(), a.declare)).collect();
    let assumes = if assumes.is_empty() { assumes } else { format!("\n\n**Assumes**:{assumes}") };
    let value = format!(
        "**{}** ({}): {summary}\n\n{}\n\n**Help**: {}{assumes}{fix}\n\n`lifeguard explain {}` says why, with examples.",
        f.rule,
        f.severity.as_str(),
        f.located_message(),
        f.help,
        f.rule
    );
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
        range: Some(placed.range),
    })
}

/// The annotation key under the position, if it is one of lifeguard's.
fn annotation(open: &Open, at: Position) -> Option<Hover> {
    let lines = Lines::new(&open.text);
    let line_start = lines.offset(Position { line: at.line, character: 0 });
    let cursor = lines.offset(at);
    let line_end = open.text[line_start..].find(['\n', '\r']).map_or(open.text.len(), |e| line_start + e);
    let line = &open.text[line_start..line_end];
    let mut from = 0;
    while let Some(found) = line[from..].find("lifeguard.dev/") {
        let start = from + found;
        let len = line[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || "./-".contains(c)))
            .unwrap_or(line.len() - start);
        let end = start + len;
        if (line_start + start..=line_start + end).contains(&cursor) {
            let key = &line[start..end];
            let doc = annotation_doc(key)?;
            return Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: format!("**{key}**\n\n{doc}"),
                }),
                range: Some(Range {
                    start: lines.position_of_offset(line_start + start),
                    end: lines.position_of_offset(line_start + end),
                }),
            });
        }
        from = end.max(start + 1);
    }
    None
}
