//! An analysis as LSP diagnostics: the severity mapped, the rule as the
//! code with a link to its documentation, the second place of a finding
//! as related information.

use std::str::FromStr;

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};
use policies::Severity;

use super::analysis::Analysis;

/// What diagnostics say they come from.
pub const SOURCE: &str = "lifeguard";

fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The diagnostics of `analysis` for the file `uri`.
pub fn diagnostics(uri: &Uri, analysis: &Analysis) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = analysis
        .problems
        .iter()
        .map(|p| Diagnostic {
            range: p.range,
            severity: Some(p.severity),
            source: Some(SOURCE.to_owned()),
            message: p.message.clone(),
            ..Diagnostic::default()
        })
        .collect();
    for placed in &analysis.findings {
        let f = &placed.located.finding;
        let related = (!placed.related.is_empty()).then(|| {
            placed
                .related
                .iter()
                .map(|(file, range, what)| DiagnosticRelatedInformation {
                    location: Location { uri: file.clone().unwrap_or_else(|| uri.clone()), range: *range },
                    message: what.clone(),
                })
                .collect()
        });
        out.push(Diagnostic {
            range: placed.range,
            severity: Some(severity(f.severity)),
            code: Some(NumberOrString::String(f.rule.clone())),
            code_description: Uri::from_str(&policies::rules::docs_url(&f.rule))
                .ok()
                .map(|href| CodeDescription { href }),
            source: Some(SOURCE.to_owned()),
            message: f.located_message().into_owned(),
            related_information: related,
            ..Diagnostic::default()
        });
    }
    out
}
