//! `--format github`: GitHub Actions workflow commands, one per finding
//! (`::error file=...,line=...,col=...,title=...::message`), which Actions
//! shows as annotations on the pull request. Info findings are notices.
//! Input errors, warnings and notes are annotations too, so a failing run
//! says why and an input that gave nothing to check says so.

use policies::Severity;

use crate::outcome::{InputError, InputLevel, Located, Origin, Outcome};

/// Renders every finding, then every input error, one command per line.
pub fn render(out: &Outcome) -> String {
    let mut s = String::new();
    for l in &out.findings {
        s.push_str(&finding(l));
    }
    for (level, e) in out.input_messages() {
        s.push_str(&input_message(level, e));
    }
    s
}

/// One finding as a workflow command.
pub fn finding(l: &Located) -> String {
    let f = &l.finding;
    let command = command(f.severity);
    let mut message = format!("{}: {}", l.object(), f.located_message());
    if l.origin == Origin::Cluster {
        // No file to attach to: the annotation is the run's, and names the object and field.
        message.push_str(&format!("\nat: {}", l.pointer));
    }
    if !f.help.is_empty() {
        message.push_str(&format!("\nhelp: {}", f.help));
    }
    if let Some(fix) = f.automatic_fix() {
        message.push_str(&format!("\nfix (`lifeguard fix`): {}", fix.description));
    }
    if let Some((label, note)) = crate::report::text::helm_note(l) {
        message.push_str(&format!("\n{label}: {note}"));
    }
    let title = property(&format!("lifeguard {}", f.rule));
    if l.origin == Origin::Cluster {
        return format!("::{command} title={title}::{}\n", data(&message));
    }
    let (file, at) = l.primary();
    // Annotations attach to repository-relative paths; `./x.yaml` would not match `x.yaml`.
    let file = file.strip_prefix("./").unwrap_or(file);
    // Without a line (stdin whose template line is unknown) the annotation is on the whole file.
    let at = at.map_or(String::new(), |(line, col)| format!("line={line},col={col},"));
    format!("::{command} file={},{at}title={title}::{}\n", property(file), data(&message))
}

/// One message about an input as a workflow command: an error, a warning
/// or (an input that gave no object to check) a notice.
pub(crate) fn input_message(level: InputLevel, e: &InputError) -> String {
    let file = e.file.strip_prefix("./").unwrap_or(&e.file);
    let mut props = vec![format!("file={}", property(file))];
    if let Some(line) = e.line {
        props.push(format!("line={line}"));
    }
    if let Some(col) = e.column {
        props.push(format!("col={col}"));
    }
    props.push(format!("title={}", property(&format!("lifeguard {}", level.label()))));
    format!("::{} {}::{}\n", command(level.severity()), props.join(","), data(&e.message))
}

/// The workflow command of a severity: info is a notice.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// Escapes a command's message, as the Actions toolkit does.
fn data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value: also `:` and `,`, which delimit properties.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::{data, property};

    #[test]
    fn escapes_what_would_end_a_command_or_a_property() {
        assert_eq!(data("50% of\nit"), "50%25 of%0Ait");
        assert_eq!(property("a:b,c%\r"), "a%3Ab%2Cc%25%0D");
    }
}
