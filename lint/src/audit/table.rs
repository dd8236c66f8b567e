//! The per-namespace table that ends an audit's report: workloads judged,
//! findings by severity, and the worst workload of each namespace.

use std::fmt::Write as _;

use super::judge::Row;

/// The table, one line per namespace audited, with a header; columns
/// padded to their widest cell.
pub fn render(rows: &[Row]) -> String {
    let header = ["NAMESPACE", "WORKLOADS", "ERRORS", "WARNINGS", "INFO", "WORST"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.namespace.clone(),
                r.workloads.to_string(),
                r.findings[0].to_string(),
                r.findings[1].to_string(),
                r.findings[2].to_string(),
                r.worst.as_ref().map_or("-".to_owned(), |(label, severity)| format!("{label} ({})", severity.as_str())),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: [&str; 6]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            match i {
                0 => {
                    let _ = write!(text, "{cell:<width$}");
                }
                5 => {
                    let _ = write!(text, "  {cell}");
                }
                _ => {
                    let _ = write!(text, "  {cell:>width$}");
                }
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(header);
    for row in &cells {
        line([&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use policies::Severity;

    use super::*;

    #[test]
    fn columns_line_up_and_an_empty_namespace_has_no_worst() {
        let rows = vec![
            Row {
                namespace: "shop".into(),
                workloads: 12,
                owned: 3,
                findings: [2, 10, 0],
                worst: Some(("Deployment/shop/api".into(), Severity::Error)),
            },
            Row { namespace: "kube-public".into(), ..Row::default() },
        ];
        assert_eq!(
            render(&rows),
            "NAMESPACE    WORKLOADS  ERRORS  WARNINGS  INFO  WORST\n\
             shop                12       2        10     0  Deployment/shop/api (error)\n\
             kube-public          0       0         0     0  -\n"
        );
    }
}
