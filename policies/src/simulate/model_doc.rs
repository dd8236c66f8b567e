//! The model's documentation, printed by `lifeguard explain simulate`.

/// Markdown: how `lifeguard simulate` models the kubelet, and every assumption.
pub const MODEL: &str = r#"# lifeguard simulate: the kubelet model

`lifeguard simulate` runs the kubelet's probe, restart and termination
state machine over a timeline, per object, container and scenario, and says
what happens: restarts, time out of the Service's endpoints, SIGKILL.

## Scenarios
- `boot[:DURATION]`: the container starts at t=0 and the app answers only
  after DURATION. Default: the pod template's
  `lifeguard.dev/cold-start-seconds`, else the policy's `gpuBootSeconds` for
  a model server (a GPU request or a slow-boot image), else 0.
- `stall:DURATION`: from t=0, every dependency a probe checks is slow for
  DURATION, on all replicas at once: a check started in the stall is
  answered when it ends, and fails if that is later than `timeoutSeconds`.
- `pause:DURATION`: from t=0, the process answers nothing for DURATION (a GC
  pause, CPU throttling); a check started in the pause is answered when it
  ends, and fails if that is later than `timeoutSeconds`.
- `wedge`: from t=0, the process answers nothing, for good.
- `delete`: the pod is deleted at t=0 while serving.
- `crash[:AFTER]`: the app exits by itself (code 1) AFTER seconds (default
  0) after each start of its container: a crash loop, with the restart
  policy and the back-off.
- `poststart-fail`: the container's postStart hook fails when it ends (its
  length as below), at every start.
- `rollout`: the workload's controller replaces every pod with one of a new
  template (a Deployment's rolling update or `Recreate`, a StatefulSet's or
  a DaemonSet's rolling update), each new pod booting as in `boot` and each deleted pod
  stopping as in `delete`; see "The workload" below.
- `drain`: the nodes that hold the pods (one on each) are drained one after
  another against the input's PodDisruptionBudgets.

Without `--scenario`: `boot`, `stall:2m`, `pause:5s`, `wedge`, `delete`.

## Probes
- Defaults when unset: `initialDelaySeconds` 0, `periodSeconds` 10,
  `timeoutSeconds` 1, `successThreshold` 1, `failureThreshold` 3.
- Each probe's first check runs `initialDelaySeconds` after the container
  starts, but not before the kubelet has seen it running (its pod lifecycle
  event generator relists every second: the model takes 1 s; a postStart
  hook holds it until the hook ends), then one every `periodSeconds`; a
  check that takes longer than `periodSeconds` delays the next to the next
  tick of its grid.
- A check answered later than `timeoutSeconds` is a failure (reported as
  timed out at `timeoutSeconds`).
- The startup probe holds liveness and readiness until it succeeds;
  they then run on their own grids.
- Readiness also runs at once, off its grid, when the kubelet syncs a
  started container that is not ready: once it has seen a container start
  (without a startup probe) and when the startup probe succeeds.
- `failureThreshold` consecutive failures of startup or liveness kill the
  container; of readiness, take the pod out of the Service's endpoints.
  `successThreshold` consecutive readiness successes bring it back. A
  readiness failure never restarts the container.
- A check whose `httpGet` or `tcpSocket` port is a name the container's
  `ports` do not declare (what `probe-port-unknown` reports) cannot be sent:
  it errors every period (prober.go, `probe`: "probe errored"), and the
  probe worker discards an errored result (worker.go, `doProbe`), so the
  probe keeps its first value for good: readiness, not ready (the pod never
  joins the endpoints); startup, unknown (the container never counts as
  started, and liveness and readiness never run); liveness, success (it
  never fails, so nothing it watches for, a wedge or a boot that never
  answers, restarts the container). Nothing stated about the handler
  changes that.
- A container without a readiness probe is in the endpoints once started
  (once its startup probe succeeded and its postStart hook ended). A new
  container is out of the endpoints until readiness succeeds, and the pod
  until its readiness gates are True too (below).

## What a probe checks
Inferred from the handler, as the rules read it:
- `local`: the process answers from its own state; fails while it boots, is
  paused or is wedged;
- `dependency`: anything `liveness-checks-dependency` reports on the handler
  (a client aimed at another host, an aggregate path such as
  `/actuator/health`, a readiness path); also fails during a stall. A
  handler liveness shares with readiness is `dependency` only on that
  evidence, read as `probe-endpoint-reused` reads it: local where it is a
  model server's (a GPU request or a slow-boot image: vLLM's, TGI's,
  Triton's health endpoint reports its own engine), the policy's
  `localHealthPaths` (named for liveness) and `localHealthImages`
  (node_exporter, the OpenTelemetry Collector), and of unknown reach otherwise, which is not stalled: the
  rule reports it as a warning that says how to declare it;
- `port only`: a bare `tcpSocket` to the pod's own port; the kernel accepts
  the connection once the app listens, even when the process is paused or
  wedged;
- `process exists`: an `exec` that only looks for a process; passes for as
  long as the container runs, even while it boots.

State what a handler really does with the pod template annotation
`lifeguard.dev/probe-checks` or the flag `--probe-checks` (the flag wins),
as comma-separated `PROBE=local|dependency` or `CONTAINER/PROBE=...`
entries, e.g. `"liveness=local,readiness=dependency"`. One handler shared
by liveness and readiness checks one thing: what is stated of either holds
for both. `lint` reads the same annotation.

While the app boots, every check except `process exists` fails at once
(nothing listens yet).

## postStart hooks
- The kubelet runs the hook right after the runtime starts the container,
  in the same sync, and waits for it (kuberuntime_container.go,
  `startContainer`): the app runs meanwhile, but the pod's status does not
  show the container running until the hook ends, so no probe checks it
  and it is not ready (the first check comes when it ends, readiness at
  once); `initialDelaySeconds` still counts from the container's start.
  Every start of the container runs it again.
- Its length: a native `sleep`, or an `exec` of `sleep N` (read as a
  preStop sleep is), lasts that long; a hook whose length the spec does not
  show (an `exec` of a script, an `httpGet`) lasts what `--poststart-seconds`
  or the pod template's `lifeguard.dev/poststart-seconds` states, else 0 s,
  and the timeline says it was not stated. A hook that never ends (`sleep
  infinity`) leaves the container unprobed and never ready.
- A hook that fails (an `exec` that exits non-zero, an `httpGet` whose
  connection fails; the kubelet does not look at the HTTP status, and
  waits for an answer without a timeout) makes the kubelet
  kill the container (`FailedPostStartHook`: preStop, stop signal, SIGKILL
  at the grace period's end, as any kill); the next sync starts it again
  under the restart policy, judging the back-off by that exit, as for a
  crash. The hooks that fail by themselves: a `tcpSocket` hook, which the
  kubelet cannot run (lifecycle/handlers.go: "invalid handler"), at once;
  an `httpGet` to a port name the container does not declare, whose
  request the kubelet cannot build, at once; an `httpGet` to the container itself (no `host`, or a loopback one) while
  the app boots, at once, since it is sent as soon as the container starts.
  `poststart-fail` fails any hook when it ends.

## The pod
- A pod of several containers runs them together. It is in the Service's
  endpoints only when every container, regular and native sidecar (an init
  container with `restartPolicy: Always`), is ready and every readiness
  gate is True (status/generate.go, `GenerateContainersReadyCondition`,
  `GeneratePodReadyCondition`); a container without a readiness probe
  counts ready once started (prober/prober_manager.go, `UpdatePodStatus`).
  So the slowest container decides when the pod joins, and any container
  that is not ready takes it out.
- At the pod's start (`boot`), native sidecars start one at a time in the
  spec's order, each once the one before has started: its startup probe
  succeeded (the result syncs the pod at once), or, without one, its
  postStart hook returned and the kubelet has seen it running (up to the
  next relist, 1 s); the regular containers start once the last has
  (kuberuntime/kuberuntime_container.go, `computeInitContainerActions`),
  one after another in the spec's order, each once the postStart hook of
  the one before returned (kuberuntime_manager.go, `SyncPod`). A container
  that never starts keeps every container after it from starting.
  Init containers that run to completion are taken to finish at once.
- At the pod's deletion (`delete`), every container's preStop hook starts
  at once (kuberuntime_container.go, `killContainersWithSyncResult`, one
  goroutine per container). A regular container gets SIGTERM after its
  own hook. A native sidecar, after its own hook, waits until every
  regular container and every sidecar after it in the spec has exited, so
  the sidecars stop last, in reverse order
  (kuberuntime_termination_order.go, `newTerminationOrdering`,
  `waitForTurn`); it waits at most what is left of the grace period, the
  wait's whole seconds come out of it as the hook's do, and SIGKILL comes
  when the rest ends, never sooner than 2 s after SIGTERM. A regular
  container run as a proxy (istio-proxy, linkerd-proxy, cloud-sql-proxy)
  has no turn: it gets SIGTERM with the app, and `proxy-stops-before-drain`
  reports one that exits before the app's drain ends.
- A dependency stall hits every container that checks it, each at its own
  probes' offset: the pod is out while any of them is (the worst case of
  each, as their probes' grids are independent). A pause, a wedge, a crash
  or a failing postStart hook is one container's: the others are taken as
  ready, so the pod is out while that one is.
- Each container's timeline says when it is ready (`container ready`,
  `container unready`); the pod's row says when the pod is in the
  endpoints and which container held it out, and the verdict lines of a
  boot and a stall speak of the pod.

## Readiness gates
- The pod is in the Service's endpoints only when its containers are ready
  and every `readinessGates` condition is True (status/generate.go,
  `GeneratePodReadyCondition`). Another controller (a load balancer's,
  typically) sets them; when, the manifest does not say: state it with
  `--readiness-gates-seconds` or the pod template's
  `lifeguard.dev/readiness-gates-seconds` (seconds after the containers are
  first ready, or `never`). Unstated, they are taken as True as soon as the
  containers are ready, and the timeline says so.
- Once True they stay True: the kubelet keeps other controllers' conditions
  across container restarts, and syncs the pod when one is set
  (kubelet.go, `HandlePodReconcile`). A pod that has long been running
  (`stall`, `pause`, `wedge`, `delete`) has them True, unless they are
  stated `never`: then it never joins the endpoints, in any scenario.

## Restarts
- A kill stops the container the way the kubelet does (see Deletion for
  the preStop hook, SIGTERM and SIGKILL), with the probe's own
  `terminationGracePeriodSeconds`, else the pod's (30 when unset); the app
  exits after its drain and shutdown budgets. A paused or wedged process
  handles SIGTERM only when it answers again.
- `restartPolicy` Always or OnFailure starts the container again; Never
  leaves it stopped.
- CrashLoopBackOff, as the kubelet keeps it: a delay that starts at 10 s
  and doubles each time it is raised, up to 300 s (`--max-backoff-seconds`,
  the kubelet's `crashLoopBackOff.maxContainerRestartPeriod`), forgotten
  when not raised for twice that. A container a probe killed is started
  again in the same sync, judged by the container that exited before it:
  with none, at once; when that one exited longer ago than the delay, at
  once, raising it; else after the whole delay from this exit, raising it.
  So the first two restarts are immediate, and a container that runs longer
  than the delay between kills never waits. A container that exits by
  itself (`crash`) is judged by its own exit: the first time at once,
  then after the whole delay.
- A restarted container boots for the declared cold start (as for `boot`),
  and is not paused or wedged: the new process is fine. A stall goes on (the
  dependency is outside the pod).

## Deletion
- Endpoint removal reaches every proxy `--endpoint-propagation-seconds`
  (default 2) after deletion; requests keep arriving until then.
- The preStop hook runs from deletion, for at most the grace period;
  the stop signal follows when it ends. A native `sleep` or an `exec` of `sleep N`
  lasts that long; a hook whose length the spec does not show (an `exec`
  of a script, an `httpGet`) lasts what `--prestop-seconds` or the pod
  template's `lifeguard.dev/prestop-seconds` states, else 0 s, and the
  timeline says it was not stated. An `exec` loop with no way out (what
  `prestop-loop-unbounded` reports as an error) runs until the grace
  period ends, unless a length is stated. The app stops admitting requests at the stop signal, finishes those in flight (each up to
  `--request-seconds`, default 0), drains and shuts down for its declared
  budgets, read from the same sources as `grace-period-too-short`
  (`lifeguard.dev/drain-seconds`, `lifeguard.dev/shutdown-budget-seconds`,
  drain and shutdown env vars, the policy's `modelServerDrainSeconds`). An
  app that declares neither a drain nor a shutdown budget is taken to need
  the policy's `prestopMinRemainingSeconds` (5 s) after the stop signal,
  the least `prestop-sleep-only` leaves it (a kill by a probe takes only
  what is declared).
- Requests reach a container when a Service of the input sends it traffic
  (its target port, as `readiness-probe-missing` attributes it), or when
  the input has no Service at all and the container declares a port
  Prometheus does not scrape. A stop signal before endpoint removal
  reaches the proxies refuses what they still send in between.
- `terminationGracePeriodSeconds` (or the deletion's own grace period,
  `--delete-grace-seconds`, as `kubectl delete --grace-period` gives it) is
  counted from deletion, preStop included: the whole seconds the hook took come out of it, and SIGKILL
  comes when the rest ends, but never sooner than 2 s after SIGTERM. A hook
  that runs past the grace period (a sleep that never ends) gets SIGTERM
  at the grace period's end and SIGKILL 2 s later.
- The stop signal is SIGTERM (the runtime sends the image's STOPSIGNAL
  when it sets one, which the manifest does not show). `lifecycle.stopSignal`
  replaces it only with the `ContainerStopSignals` feature gate on (alpha,
  off by default in 1.37: the API server drops the field, and the kubelet
  passes it to the runtime only then); say yours is on with
  `--feature-gates ContainerStopSignals=true`, and a runtime that knows the
  CRI field sends it (containerd 1.6 does not, and sends the image's
  STOPSIGNAL). The app is taken to drain on it as on SIGTERM; a stop signal
  of SIGKILL ends the container at once, with nothing drained. A kill by a
  probe sends the same signal.

## Phase offsets
When a disruption starts between two checks matters, the simulation runs
every offset of the disruption's start against the probes' grids, every half
second over their common period (probe fields and durations are whole
seconds, so this meets every distinct case; a common period over 120 s is
swept over the longest period only), and reports the best and the worst
case. `boot` and `delete` have no free offset.

## Verdicts
- `restart-storm`: a stall restarts the container whatever the offset, so
  every replica restarts; the line says for how long the replicas are all
  out of the endpoints at once, from the figures under it: one replica, from
  the best offset's time out to the worst's; several, from the time every
  offset is out at once (`every offset at once`: their probes spread over
  the offsets) to the worst offset's (their probes in step). It names the
  Services of the input that select the pod as having zero endpoints; with
  none, it says so and speaks of the replicas' readiness alone. The input's
  Services are those `lint` reads: the file's and its directory's;
- `restarts`: some offset restarts the container (a boot that completes
  after restarts; `crash` and `poststart-fail`, the crash loop);
- `boot-loop`: the app never finishes booting: every container is killed
  before it answers, or at its start by a postStart hook that fails by
  itself (after a boot, or after whatever restarted it);
- `dependency-outage`: no restart, but readiness follows the stalled
  dependency, so every replica is out of the endpoints at once for a while
  (read as for `restart-storm`) and back when the dependency is: the outage
  a dependency-aware readiness chooses (a local readiness keeps the Service
  up and leaves the errors to the app);
- `out-of-service`: no restart, but the pod's own failure (a pause of its
  only replica) leaves the Service without an endpoint for a while, or the
  pod never joins it (readiness gates stated `never`, a postStart hook that
  never ends, a startup or readiness probe whose port does not resolve, a
  container left stopped by `restartPolicy: Never`);
- `sigkill-in-flight`: SIGKILL comes before the in-flight work, drain and
  shutdown end;
- `connections-refused`: requests go to a process that cannot take them:
  `delete`, the stop signal comes before endpoint removal reaches the
  proxies while requests reach the container (what a preStop bridge is
  for: `prestop-bridge-missing`); `boot`, the container is in the
  endpoints before the app answers (no readiness probe, or one that passes
  first: `readiness-probe-missing`, `readiness-port-only`). The line names
  the assumption that decides it and the rule;
- `wedge-detected`: a wedge is restarted whatever the offset, after the
  worst case's delay; `wedge-undetected`: it is not;
- `progress-deadline-exceeded` (`rollout`): a Deployment goes without
  progress for its `progressDeadlineSeconds` while a new pod boots, or
  would with a boot as long as its startup window allows;
- `capacity-short` (`rollout`): fewer pods available than the policy's
  `minRolloutCapacityPercent`, for longer than `slowBootInitialDelaySeconds`;
- `rollout-stuck` (`rollout`): a new pod is never Ready;
- `eviction-blocked` (`drain`): a PodDisruptionBudget refuses an eviction
  for ever; in both, `out-of-service` is a moment with no pod Ready;
- `ok`: none of these.

Each verdict has a severity, in the terms of a finding's (the `severity`
of the JSON output): none for `ok` and `wedge-detected` (what a
well-configured pod does), `info` for `dependency-outage`, `warning` for
`restarts`, `out-of-service`, `connections-refused`, `wedge-undetected`,
`progress-deadline-exceeded`, `capacity-short` and `eviction-blocked`,
`error` for `restart-storm`, `boot-loop`, `sigkill-in-flight` and
`rollout-stuck`, the verdicts `--fail-on` fails on by default.

## The workload
- A Deployment's rolling update: the new ReplicaSet grows while old and new
  stay within `replicas + maxSurge`, the old ones shrink while `replicas -
  maxUnavailable` pods stay available, the new ones' unavailable pods
  counted against it; a deleted pod still terminating holds no place; a
  pod is available `minReadySeconds` after Ready; no progress (a
  ReplicaSet resized, one more pod Ready or available) for
  `progressDeadlineSeconds` exceeds the deadline. `Recreate` creates the
  new pods once every old one is gone.
- A StatefulSet's rolling update: the highest ordinals at or above
  `partition` first, `maxUnavailable` at a time where the policy's
  `kubernetesVersion` reads it (1.37), else one; a replacement once the old
  pod is gone; with `OrderedReady`, each pod after the ones before are Ready.
- A DaemonSet's rolling update: one pod on each of `--nodes` nodes (3 when
  not given), `maxUnavailable` (1) and `maxSurge` (0) scaled to them
  rounding up, a node's new pod created as its old one is deleted (or
  beside it, with a surge); `drain` leaves its pods, as `kubectl drain` does.
- A drain: one pod per node, node after node; an eviction is allowed while
  the budget's Ready pods exceed those it wants, else tried again every
  5 s (`kubectl drain`); two budgets on one pod refuse it for good; the
  replacement boots on another node.
- The replicas: `spec.replicas`, else an input autoscaler's `minReplicas`,
  else 1. Not modelled: the controllers' and the kubelet's own latency,
  the scheduler (every pod finds room).

## Not modelled
- Other containers of the pod: each container is simulated alone, the
  others taken as ready.
- The kubelet's jitter: when it starts a probe worker, and when it wakes a
  pod after a back-off (up to half the delay later); the other syncs that
  run readiness off its grid while a container is not ready (a periodic
  resync, another container's change). Restarts come at the earliest time
  the fields allow.
- `ReduceDefaultCrashLoopBackOffDecay` (alpha, off by default): a first
  delay of 1 s.
- The image's STOPSIGNAL: the manifest does not show it, and the model
  names SIGTERM.
- What a readiness gate's controller does after it set the gate (whether it
  sets it False again when the pod is unready); the model keeps it True.
- An `httpGet` hook without `host` on a pod with the host's network: with
  containerd it fails at once (no pod IP: lifecycle/handlers.go, "failed to
  find networking container"), a postStart hook so killing the container;
  the model runs it as any other `httpGet`.
"#;
