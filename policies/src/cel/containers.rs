//! What the linter knows about the containers, in CEL, as policy
//! variables computed once per request: which request a GPU, which are
//! sidecars, which are certainly model servers. Each is a list of
//! container names (unique across a pod's containers and init containers).

use super::regex::any_match;
use crate::policy::Policy;

/// Whether container `c` requests or limits a GPU (`*/gpu` or `gpu`, not
/// 0). The API server has put quantities in their canonical form, where a
/// zero is `0`, so this is never true where the linter's reading of the
/// raw quantity is false.
fn gpu() -> &'static str {
    "has(c.resources) && [has(c.resources.limits) ? c.resources.limits : {}, has(c.resources.requests) ? \
     c.resources.requests : {}].exists(m, m.exists(k, (k.endsWith('/gpu') || k == 'gpu') && \
     string(m[k]).trim() != '0'))"
}

/// Whether `c.image` is one of the policy's `slowBootImages`, matched as
/// `is_slow_boot_image` does on the repository path without registry
/// host, tag or digest, or on its last component; `None` when a pattern
/// does not read the same in CEL. `[x].exists(v, ...)` binds `v` to `x`.
fn slow_boot_image(policy: &Policy) -> Option<String> {
    image_matches(&policy.settings.slow_boot_images)
}

/// Whether `c.image` matches one of `patterns`, read as `slowBootImages`
/// are (see [`slow_boot_image`]); `None` when a pattern does not read the
/// same in CEL.
pub(crate) fn image_matches(patterns: &[String]) -> Option<String> {
    let (with_slash, without): (Vec<String>, Vec<String>) = patterns.iter().cloned().partition(|p| p.contains('/'));
    let (by_path, by_name) =
        (any_match("p", &with_slash)?, any_match("p.substring(p.lastIndexOf('/') + 1)", &without)?);
    Some(format!(
        "[(has(c.image) ? c.image : '').split('@')[0]].exists(i, \
         [i.lastIndexOf(':') >= 0 && !i.substring(i.lastIndexOf(':')).contains('/') ? i.substring(0, i.lastIndexOf(':')) : i].exists(u, \
         [u.contains('/') && [u.split('/')[0]].exists(h, h.contains('.') || h.contains(':') || h == 'localhost') ? \
         u.substring(u.indexOf('/') + 1) : u].exists(p, {by_name} || {by_path})))"
    ))
}

/// The variables: `gpus`, `sidecars`, `modelServers`.
///
/// A model server (`is_model_server`) has a GPU or runs a slow-boot image
/// that serves here: the linter does not count an image whose own command
/// only sleeps, with no port and no GPU (a toolbox). Telling a sleep from
/// a server's command needs the command line read, so a slow-boot image
/// with a command of its own and no port is not counted here, nor any
/// image when the patterns are not portable.
pub(crate) fn variables(policy: &Policy) -> Vec<(&'static str, String)> {
    let gpus = format!("variables.containers.filter(c, {}).map(c, c.name)", gpu());
    let sidecars = "has(variables.podSpec.initContainers) ? variables.podSpec.initContainers.filter(c, \
                    has(c.restartPolicy) && c.restartPolicy == 'Always').map(c, c.name) : []"
        .to_owned();
    let serves = "(!has(c.command) || size(c.command) == 0 || (has(c.ports) && size(c.ports) > 0))";
    let model_servers = match slow_boot_image(policy) {
        Some(slow) => {
            format!("variables.containers.filter(c, c.name in variables.gpus || ({serves} && {slow})).map(c, c.name)")
        }
        None => "variables.gpus".to_owned(),
    };
    // What the linter may count as a model server and this cannot tell.
    let unsure = match slow_boot_image(policy) {
        Some(slow) => format!(
            "variables.containers.filter(c, !(c.name in variables.modelServers) && has(c.command) && size(c.command) > 0 && {slow}).map(c, c.name)"
        ),
        None => "variables.containers.filter(c, !(c.name in variables.gpus)).map(c, c.name)".to_owned(),
    };
    vec![("gpus", gpus), ("sidecars", sidecars), ("modelServers", model_servers), ("unsureModelServers", unsure)]
}

/// Whether container `c` requests a GPU.
pub(crate) const GPU: &str = "(c.name in variables.gpus)";
/// Whether container `c` is a sidecar.
pub(crate) const SIDECAR: &str = "(c.name in variables.sidecars)";
/// Whether container `c` is certainly a model server.
pub(crate) const MODEL_SERVER: &str = "(c.name in variables.modelServers)";
