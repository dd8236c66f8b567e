//! The page around an HTML report (`lint`, `audit` and `simulate` share
//! it): one self-contained file, with its style and its few lines of
//! script inline and nothing fetched, so it reads the same from a CI
//! artifact, an e-mail or a printer.
//!
//! Severities are told apart by an icon and a word as well as a colour
//! (and by the style of the finding's left border), so neither a
//! colour-blind reader nor a black-and-white print loses them. The script
//! only adds filters: without it every finding is shown.

use super::escape::push_escaped;
use policies::Severity;

const STYLE: &str = r#"
:root { color-scheme: light; }
* { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; background: #ffffff; max-width: 1100px; margin: 0 auto; padding: 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 18px 0 8px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 14px; margin: 2px 0; overflow-wrap: anywhere; }
/* The summary is written last (a report streams), and shown first. */
main { display: flex; flex-direction: column; }
.summary { order: -1; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border: 1px solid #d0d7de; padding: 6px 8px; }
a { color: #0b5cad; }
p { margin: 3px 0; overflow-wrap: anywhere; }
.item { border: 1px solid #d0d7de; border-left: 6px solid #6e7781; padding: 6px 12px; margin: 0 0 10px; break-inside: avoid; }
.label { font-weight: bold; color: #57606a; }
.sev { font-weight: bold; white-space: nowrap; }
.sev-error { color: #b3261e; }
.sev-warning { color: #8a5a00; }
.sev-info { color: #0b5cad; }
.sev-ok { color: #1a7f37; }
.item.sev-error { border-left: 6px solid #b3261e; color: inherit; }
.item.sev-warning { border-left: 6px dashed #8a5a00; color: inherit; }
.item.sev-info { border-left: 6px dotted #0b5cad; color: inherit; }
.item.sev-ok { border-left: 6px double #1a7f37; color: inherit; }
table { border-collapse: collapse; margin: 4px 0 8px; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.filters label { margin-right: 14px; white-space: nowrap; }
figure { margin: 8px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
@media print { .filters { display: none; } body { max-width: none; } }
"#;

/// Adds a severity filter and a rule (or verdict) filter above the items
/// (every element with a `data-severity`): hidden ones get `hidden`.
const SCRIPT: &str = r#"
(function () {
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-severity]"));
  var bar = document.getElementById("filters");
  if (!bar || items.length === 0) { return; }
  var sevs = [], rules = [];
  items.forEach(function (e) {
    if (sevs.indexOf(e.dataset.severity) < 0) { sevs.push(e.dataset.severity); }
    if (e.dataset.rule && rules.indexOf(e.dataset.rule) < 0) { rules.push(e.dataset.rule); }
  });
  var order = ["error", "warning", "info", "ok"];
  sevs.sort(function (a, b) { return order.indexOf(a) - order.indexOf(b); });
  var boxes = sevs.map(function (s) {
    var label = document.createElement("label"), box = document.createElement("input");
    box.type = "checkbox"; box.checked = true; box.value = s; box.onchange = apply;
    label.appendChild(box); label.appendChild(document.createTextNode(" " + s)); bar.appendChild(label);
    return box;
  });
  var select = document.createElement("select");
  [""].concat(rules.sort()).forEach(function (r) {
    var o = document.createElement("option"); o.value = r; o.textContent = r || "every " + bar.dataset.label;
    select.appendChild(o);
  });
  select.onchange = apply; bar.appendChild(select);
  function apply() {
    var on = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    items.forEach(function (e) {
      e.hidden = on.indexOf(e.dataset.severity) < 0 || (select.value !== "" && e.dataset.rule !== select.value);
    });
  }
})();
"#;

/// Opens the page and its `<main>`: `title` in the tab and as the heading,
/// then the filters' place (`label`: what the second filter picks, `rule`
/// or `verdict`).
pub(crate) fn open(out: &mut String, title: &str, label: &str) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // Nothing is fetched: no script, style, font or image from elsewhere.
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>");
    push_escaped(out, title);
    out.push_str("</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<h1>");
    push_escaped(out, title);
    out.push_str("</h1>\n<p class=\"filters\" id=\"filters\" data-label=\"");
    push_escaped(out, label);
    out.push_str("\"></p>\n<main>\n");
}

/// Closes `<main>` and the page, with the filters' script.
pub(crate) fn close(out: &mut String) {
    out.push_str("</main>\n<script>");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
}

/// The class of a severity (`None`: a simulation's verdict that is fine).
pub(crate) fn class(severity: Option<Severity>) -> &'static str {
    match severity {
        Some(Severity::Error) => "sev-error",
        Some(Severity::Warning) => "sev-warning",
        Some(Severity::Info) => "sev-info",
        None => "sev-ok",
    }
}

/// A severity as shown: an icon and the word, in its colour.
pub(crate) fn badge(out: &mut String, severity: Option<Severity>) {
    let (icon, word) = match severity {
        Some(Severity::Error) => ("\u{2716}", "error"),
        Some(Severity::Warning) => ("\u{25B2}", "warning"),
        Some(Severity::Info) => ("\u{2139}", "info"),
        None => ("\u{2714}", "ok"),
    };
    out.push_str("<span class=\"sev ");
    out.push_str(class(severity));
    out.push_str("\">");
    out.push_str(icon);
    out.push(' ');
    out.push_str(word);
    out.push_str("</span>");
}
