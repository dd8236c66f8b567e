//! GitOps against the export: every object of the shared corpus that a fix
//! changes, and an exec sleep the default pack rewrites, applied twice,
//! unchanged, with `kubectl apply` and with server-side apply under Argo
//! CD's field manager, under the default pack and gpu-serving (whose
//! fixInfoFindings rewrites every exec sleep), and a bare Pod and a Job
//! whose files set a value a fix changes. The second apply of each mode is
//! accepted and stores nothing new: the fixes are made again on what the
//! file sends back, or leave the file's values as they are; on the Pod and
//! the Job, whose pod spec cannot change, they put back what is stored.

use lifeguard_e2e::cluster::ControlPlane;
use lifeguard_e2e::cluster::reapply::{
    ApplyMode, apply_twice, fixed_workloads_under, immutable_with_a_fixed_value, short_exec_sleep,
    updates_of_a_fixed_pod,
};
use lifeguard_e2e::corpus_dir;
use policies::Policy;

use crate::TURN;
use crate::install::{install_map, remove_map};
use crate::support::{self, namespace};

#[test]
fn a_second_apply_of_the_corpus_is_accepted_and_stores_nothing_new() {
    let Some(plane) = ControlPlane::shared() else { return };
    let Some(corpus) = corpus_dir() else { return };
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut failures = Vec::new();
    for pack in ["default", "gpu-serving"] {
        remove_map(plane);
        support::remove(plane);
        let ns = format!("map-reapply-{pack}");
        namespace(plane, &ns);
        plane.kubectl.default_service_account(&ns);
        install_map(plane, pack, &ns);
        let mut objects = fixed_workloads_under(&corpus, &Policy::pack(pack).expect("a built-in pack"));
        objects.push(short_exec_sleep());
        let immutable = objects.len();
        objects.extend(immutable_with_a_fixed_value());
        for mode in ApplyMode::ALL {
            let started = std::time::Instant::now();
            let done = apply_twice(&plane.kubectl, &ns, &objects, mode);
            failures.extend(done.failures(&format!("{pack}, {mode:?}"), objects.len(), started.elapsed()));
            assert!(done.stored >= 15, "{pack}, {mode:?}: {} objects stored", done.stored);
            let started = std::time::Instant::now();
            failures.extend(
                updates_of_a_fixed_pod(&plane.kubectl, &ns, &mode.name(immutable), &mode.name(immutable + 1))
                    .into_iter()
                    .map(|f| format!("{pack}, {mode:?}: {f}")),
            );
            eprintln!("{pack}, {mode:?}: the fixed Pod's updates, {:.0?}", started.elapsed());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    remove_map(plane);
}
