//! Where a rule's documentation is: what editors, cluster reports and the
//! exported admission policies' messages link to. A leaf, so the exports
//! the rules' entries point to can name it without the registry.

/// Where the rules' documentation is: a row per rule in docs/rules.md.
pub const RULES_PAGE: &str = "https://github.com/lifeguard-dev/lifeguard/blob/main/docs/rules.md";

/// The link to a rule's documentation (its row of docs/rules.md), as
/// editors, cluster reports and the exported admission policies' messages give it.
pub fn docs_url(rule: &str) -> String {
    format!("{RULES_PAGE}#{rule}")
}
