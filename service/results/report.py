"""A run's report: the figures of DESIGN.md as JSON or as text for a terminal."""

from __future__ import annotations

from typing import Any

from actions import fault_spec
from service.store.models import Run

from .analysis import CLIENT_RECOVERY_TOLERANCE, NO_DISRUPTION, NOT_STARTED
from .capacity_change import capacity_lines
from .consistency import consistency_lines
from .corruption import corruption_figures, corruption_lines
from .deficit import ON_TIME_S
from .figure_definitions import COMPAT_KEYS, REPORT_KEYS
from .formatting import count_rows, label_of
from .heals import heal_lines, heals
from .recovery_notes import recovery_lines, setting_notes
from .silenced import silenced_note

# the figures a report, a comparison and the run page show; the JSON adds the mean drop for
# old runs and old clients (service.results.figure_definitions)
FIGURE_KEYS = REPORT_KEYS
API_KEYS = FIGURE_KEYS + COMPAT_KEYS
DEFICIT_KEYS = ("deficit_ops", "deficit_s")
OLD_RUN_DEFICIT = "the run was recorded before Faultline measured the deficit"



def figure_labels() -> dict[str, str]:
    """Each figure's label by its key: the JSON keeps the keys and carries these beside them."""
    return {key: label_of(key) for key in API_KEYS}


NOTES = {
    "ceph": ("Ceph marks a down OSD out after mon_osd_down_out_interval and re-replicates "
             "its data elsewhere, so it can be fully redundant while the fault persists."),
    "swift": ("Swift treats a down node as transient and does not rebuild its replicas "
              "elsewhere; handoffs take writes until it returns."),
}


def fault_note(run: Run) -> str | None:
    """What this system does about the run's class of fault, beyond the general note: the
    fault action's own note (actions.fault_spec). For a run whose baseline began after an
    action that prepared the cluster (`baseline_after`, a fill), that action's note, since
    its state is what the fault met. The experiment is the queued one, else the journal's."""
    experiment = run.experiment or (run.journal or {}).get("experiment") or {}
    method = experiment.get("method") if isinstance(experiment, dict) else None
    actions = {a.get("name"): fault_spec.action_of(a)
               for a in (method if isinstance(method, list) else []) if isinstance(a, dict)}
    fault, filled = _activities(run)
    chosen = [actions.get(_baseline_after(experiment))] if filled else []
    for action in [*chosen, actions.get(fault)]:
        if action is not None and run.cluster_kind in action.fault.notes:
            return action.fault.notes[run.cluster_kind]
    return None


def _baseline_after(experiment: dict[str, Any]) -> str | None:
    """The activity the control measured the baseline after (its `baseline_after`)."""
    for control in experiment.get("controls") or []:
        provider = control.get("provider") if isinstance(control, dict) else None
        if isinstance(provider, dict) and provider.get("module") == "service.control":
            return (provider.get("arguments") or {}).get("baseline_after")
    return None


def _activities(run: Run) -> tuple[str | None, bool]:
    """The injected fault's activity name, and whether the run filled the cluster first."""
    fault = next((e.detail.get("name") for e in run.events if e.kind == "fault_injected"), None)
    filled = any(e.kind == "baseline_started" for e in run.events)
    return fault, filled


def fault_detail(run: Run) -> list[str]:
    """What the fault's own record says it did, one line each: the mechanism it used (a
    lossy link: nftables or netem) and what its rules counted (the loss measured)."""
    lines = []
    for event in run.events:
        output = event.detail.get("output")
        if not isinstance(output, dict):
            continue
        if event.kind == "fault_injected" and output.get("mechanism_detail"):
            lines.append(f"mechanism: {output['mechanism_detail']}")
        if event.kind == "fault_injected" and output.get("throttled"):
            lines.append(f"throttle: {output['throttled']} (device {output.get('device')})")
            lines.append(slow_but_up(output.get("daemon"), run.figures or {}))
        if event.kind == "fault_injected" and output.get("hog"):
            lines.append(f"CPU hog: {output['hog']} (the node has {output.get('node_cpus')} "
                         "CPUs)")
            lines.append(slow_but_up(f"{output.get('node')}'s daemons", run.figures or {},
                                     "hog"))
        lines += swift_scale_lines(event.kind, output)
        lines += ceph_scale_lines(event.kind, output)
        lines += memory_lines(event.kind, output)
        lines += cpu_hog_lines(event.kind, output)
        if event.kind == "activity" and output.get("throttled_ios"):
            lines.append(f"I/O through the throttle: {output['throttled_ios']} operations, "
                         f"{output.get('throttled_bytes', 0)} bytes")
        if event.kind == "activity" and "deviations" in output:
            lines += daemon_outcome_lines(output.get("daemons") or [])
        if event.kind == "activity" and output.get("packets_seen"):
            lines.append(
                f"loss measured by the rules: {output['measured_loss']:.1%} of "
                f"{output['packets_seen']} packets ({output['packets_lost']} lost, "
                f"{output.get('packets_capped', 0)} over the cap)")
    return lines


def swift_scale_lines(kind: str, output: dict[str, Any]) -> list[str]:
    """What Swift's scale actions and their wait said (actions.swift.add_device,
    probes.swift.wait_for_data_moved, actions.swift.remove_device)."""
    if kind == "fault_injected" and output.get("pushed_to"):
        parts = ", ".join(f"{n} {r}" for r, n in (output.get("partitions") or {}).items())
        return [f"scale out: {output.get('device')} on {output.get('node')} (weight "
                f"{output.get('weight')}) given {parts} partition(s); rings pushed to "
                f"{', '.join(sorted({n for ns in output['pushed_to'].values() for n in ns}))}"]
    if kind == "activity" and output.get("moved_s") is not None:
        return [f"data moved where the new rings put it {output['moved_s']} s after the ring "
                "push (no handoff partition left, dispersion 100%)"]
    if kind == "activity" and output.get("removed_from"):
        # what delete_device found there: "mounted" (its mount) and "image" (its image file)
        gone = " and ".join({"mounted": "its mount", "image": "its image"}.get(w, w)
                            for w in output.get("deleted") or []) or "nothing"
        return [f"scale in: {output.get('device')} drained in {output.get('drained_s')} s "
                f"after its weight-0 push, removed from the {', '.join(output['removed_from'])} "
                f"ring(s); on the node: {gone} removed"]
    return []


def ceph_scale_lines(kind: str, output: dict[str, Any]) -> list[str]:
    """What Ceph's scale actions said (actions.ceph_scale.add_osd, remove_osd)."""
    if kind == "fault_injected" and output.get("up_and_in_after_s") is not None:
        return [f"scale out: {output.get('osd')} on a new {output.get('size_gib'):g} GiB disk "
                f"of {output.get('node')} ({output.get('zone')}), up and in "
                f"{output['up_and_in_after_s']} s after it was started"]
    if kind == "activity" and isinstance(output.get("removed"), list):
        return [f"scale in: {r.get('osd')} drained in {r.get('drained_after_s')} s (out until "
                "it held no PG and nothing was misplaced or degraded), "
                + ("purged" if r.get("purged") else "not in the osdmap any more")
                + f"; on {r.get('node')}: {', '.join(r.get('on_node') or []) or 'nothing left'}"
                for r in output["removed"]]
    return []


def cpu_hog_lines(kind: str, output: dict[str, Any]) -> list[str]:
    """What a CPU hog's stop read from its cgroup. A second stop (the experiment's rollback
    after its method's) finds the cgroup gone and reads no period: nothing to say."""
    if kind != "activity" or "held_back" not in output or not output.get("periods"):
        return []
    return [f"the ceiling held the hog back in {output['held_back']} of "
            f"{output['periods']} periods ({output.get('held_back_s')} s)"]


def memory_lines(kind: str, output: dict[str, Any]) -> list[str]:
    """What a memory hog did: the node's memory, when the OOM killer acted and whom it took
    (at the injection), and what the restore found dead and started again."""
    if kind == "fault_injected" and output.get("memory_hog"):
        at = ", ".join(f"+{s:g} s" for s in output.get("oom_kill_at_s") or [])
        return [f"memory hog: {output['memory_hog']} (the node has "
                f"{output.get('node_memory_mib')} MiB, {output.get('used_before_mib')} MiB "
                f"in use before)",
                f"OOM killer: {output.get('oom_kills', 0)} kill(s) in {output.get('node')}"
                + (f" at {at} after the hog started" if at else " (it did not act)")
                + f"; it took: {', '.join(output.get('oom_killed') or []) or 'no daemon'}"]
    # a restore that found nothing down (the rollback after the method's) says nothing
    if kind == "activity" and "started_by_restore" in output and (
            output["started_by_restore"] or output.get("oom_killed")):
        return [f"restore: the hog ended; down at the restore: "
                f"{', '.join(output.get('oom_killed') or []) or 'none'}; started again: "
                f"{', '.join(output['started_by_restore']) or 'none'}"]
    return []


def daemon_outcome_lines(outcomes: list[dict[str, Any]]) -> list[str]:
    """What a process fault's restore found (clusters.faults.supervision): when a crashed
    daemon came back and how often it was restarted, a supervised daemon kept down, a broken
    `down`."""
    lines = []
    for o in outcomes:
        name, intent, supervisor = o.get("daemon"), o.get("intent"), o.get("supervisor")
        if o.get("deviation"):
            lines.append(f"intent not kept: {o['deviation']}")
        elif intent == "crash" and o.get("came_back_after_s") is not None:
            lines.append(f"{name} crashed and {supervisor} brought it back "
                         f"{o['came_back_after_s']} s after the kill (restarted "
                         f"{o.get('restarts')} time(s), PID {o.get('pid')})")
        elif intent == "crash" and o.get("started_by_restore"):
            lines.append(f"{name} crashed and nothing restarted it: the restore started it")
        elif intent == "down" and supervisor != "pid_file":
            lines.append(f"{name} kept down ({supervisor} unit masked) until the restore")
    return lines


def slow_but_up(daemon: str | None, figures: dict[str, Any], what: str = "throttle") -> str:
    """How long a slowed daemon stayed up (unreported by its cluster) while clients
    suffered, from the run's figures."""
    held, seen = figures.get("restore_at_s"), figures.get("time_to_detect_s")
    if held is None:
        return f"slow but up: {daemon}: n/a (the run has no restore time)"
    up = min(seen, held) if seen is not None else held
    reported = f"the cluster reported it at {seen:.1f} s" if seen is not None else \
        "the cluster never reported it"
    drop, worst = figures.get("throughput_drop"), figures.get("worst_second_drop")
    deficit_s = figures.get("deficit_s")
    lost = (f"{deficit_s:.1f} s of full load not served on time" if deficit_s is not None
            else f"{drop:.0%} of throughput lost" if drop is not None else None)
    clients = ("n/a" if lost is None else
               f"{lost}, {worst or 0:.0%} in the worst second, "
               f"{figures.get('errors') or 0} errors")
    return (f"slow but up: {daemon} stayed up for {up:.1f} s of its {held:.1f} s {what} "
            f"({reported}); clients meanwhile: {clients}")


def topology_note(run: Run) -> list[str]:
    """What the topology let the system do about the run's faults, one line each, as the
    control worked it out before injecting (service.experiments.topology): the figures'
    `topology_note`, else the run's `topology_note` event (a run that never finished)."""
    if run.figures is not None:  # a finished run: its figures say it (old runs: nothing)
        notes = run.figures.get("topology_note")
    else:
        notes = next((e.detail.get("notes") for e in run.events if e.kind == "topology_note"),
                     None)
    return list(notes or [])


def report_dict(run: Run) -> dict[str, Any]:
    figures = dict(run.figures or {})
    reasons = figures.pop("reasons", {})
    out: dict[str, Any] = {
        "run_id": run.id, "title": run.title, "cluster": run.cluster,
        "cluster_kind": run.cluster_kind, "status": run.status,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "ended_at": run.ended_at.isoformat() if run.ended_at else None,
        "workload": run.workload, "error": run.error,
        # a rate asked as a share of the capacity, and the calibration it came from
        "rate_requested": run.rate_requested, "calibration_id": run.calibration_id,
        # one of N trials of `faultline run --trials N`
        "trial_group": run.trial_group, "trial_index": run.trial_index, "trials": run.trials,
        # the release the inventory gave the cluster when it ran (None: it gave none)
        "release": figures.pop("cluster_release", None),
        # the admin who let the run override the blast-radius guard (allow_unavailable)
        "guard_override_by": run.guard_override_by,
    }
    for key in API_KEYS:
        out[key] = figures.get(key)
    reasons = {**reasons, **_old_run_reasons(figures, reasons, out)}
    out["reasons"] = {k: v for k, v in reasons.items() if out.get(k) is None}
    out["labels"] = figure_labels()
    # False: the clients never dipped during the fault (time to client recovery is n/a)
    out["client_disruption"] = figures.get("client_disruption",
                                           False if no_disruption(out) else None)
    out["offered_ops"] = figures.get("offered_ops")
    out["verify"] = run.verify
    out["objects_removed"] = run.objects_removed  # by `faultline clean`, after the run
    out["note"] = NOTES.get(run.cluster_kind)
    out["fault_note"] = fault_note(run)
    out["topology_note"] = topology_note(run)
    out["recovery_settings"] = run.recovery_settings  # read before the fault
    out["recovery_note"] = setting_notes(run.recovery_settings)
    out["silenced_note"] = silenced_note(run)  # abort alerts silenced in Alertmanager
    out["corruption"] = corruption_figures(run)
    out["fault_detail"] = fault_detail(run) + corruption_lines(out["corruption"])
    out["validity"] = _validity(figures.get("validity"))
    # a scale run's (service.runs.capacity_runs): capacity before -> after, data movement
    out["fault_p99_ms"] = figures.get("fault_p99_ms")
    out["observed_s"] = figures.get("observed_s")  # where a never-reached time is censored
    out["capacity"] = figures.get("capacity")
    out["data_movement_s"] = figures.get("data_movement_s")
    out["data_movement_reason"] = figures.get("data_movement_reason")
    # what a worker's auto-heal restored (or failed to) after the run's process died
    out["heals"] = heals(run)
    return out


def _old_run_reasons(figures: dict[str, Any], reasons: dict[str, str],
                     out: dict[str, Any]) -> dict[str, str]:
    """Why a run recorded before the deficit and the no-disruption outcome existed has no
    deficit, and its 0 s client recovery read as what it was: the old rule gave 0 s exactly
    when the clients never dipped, which is now n/a with a "no disruption" reason."""
    if "throughput_drop" not in figures or "client_disruption" in figures:
        return {}  # a new run (or one without figures): its own reasons say it all
    # no drop (no fault, no baseline) is no deficit for the same reason
    why = reasons.get("throughput_drop") or OLD_RUN_DEFICIT
    added = {key: why for key in DEFICIT_KEYS if figures.get(key) is None}
    if figures.get("time_to_client_recovery_s") == 0:
        out["time_to_client_recovery_s"] = None
        added["time_to_client_recovery_s"] = (
            f"{NO_DISRUPTION}: the clients never dipped below "
            f"{1 - CLIENT_RECOVERY_TOLERANCE:.0%} of the baseline throughput and had no error "
            "from the fault to the end of the fault window (recorded as 0 s before Faultline "
            "told the two apart; missed starts were not counted then)")
    return added


def no_disruption(data: dict[str, Any]) -> bool:
    """The clients never dipped: time to client recovery is n/a for that reason."""
    return ((data.get("reasons") or {}).get("time_to_client_recovery_s") or ""
            ).startswith(NO_DISRUPTION)


def scale_lines(data: dict[str, Any]) -> list[str]:
    """A scale run's lines: its data movement and its capacity before and after."""
    if not data.get("capacity"):
        return []
    moved = (_fmt(data.get("data_movement_s"), " s") if data.get("data_movement_s") is not None
             else f"n/a ({data.get('data_movement_reason')})")
    return [f"data movement done after {moved} (no misplaced or degraded object, fully "
            "redundant, for 10 s)", *capacity_lines(data["capacity"])]


def _validity(verdict: dict[str, Any] | None) -> dict[str, Any] | None:
    """The baseline's verdict, as reports and comparisons show it (None: not judged, a run
    recorded before the check existed)."""
    if verdict is None:
        return None
    return {"valid": verdict.get("valid"), "reasons": verdict.get("reasons") or [],
            "hint": verdict.get("hint"), "injected_anyway": bool(verdict.get("injected_anyway")),
            # how long the baseline really was, and why it was extended (None: not recorded)
            "baseline_s": verdict.get("baseline_s"), "measured_s": verdict.get("measured_s"),
            "extensions": verdict.get("extensions") or []}


def kept_out(entry: dict[str, Any]) -> bool:
    """A run whose baseline did not hold and that injected nothing: its figures stay out of
    comparisons and trial groups (one that injected anyway stays in, with a warning)."""
    validity = entry.get("validity") or {}
    return validity.get("valid") is False and not validity.get("injected_anyway")


def validity_line(validity: dict[str, Any] | None) -> str:
    """The baseline check in a few words, for reports and comparisons."""
    if validity is None:
        return "not judged (recorded before the check existed)"
    if validity["valid"]:
        return "held"
    why = "; ".join(validity["reasons"]) + (f" ({validity['hint']})" if validity["hint"] else "")
    if validity["injected_anyway"]:
        return f"DID NOT HOLD, fault injected anyway as the experiment asked: {why}"
    return f"DID NOT HOLD, nothing injected: {why}"


def _relative(data: dict[str, Any]) -> str:
    if data.get("rate_requested") is None:
        return ""
    source = (f"calibration {data['calibration_id']}" if data.get("calibration_id") is not None
              else "a calibration since deleted")
    return f" ({data['rate_requested']} of the capacity in {source})"


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}{unit}" if abs(value) < 10 else f"{value:.1f}{unit}"
    return f"{value}{unit}"


def _mix(mix: Any) -> str:
    """The operation mix as shares ("read 80%, write 15%, delete 5%")."""
    if not isinstance(mix, dict):
        return str(mix)
    return ", ".join(f"{op} {share}%" for op, share in mix.items())


def _error_counts(data: dict[str, Any]) -> str:
    """The errors by class and by operation in words, the most frequent first."""
    parts = [f"{label_of(key)}: " + ", ".join(f"{name} {n}" for name, n in count_rows(data[key]))
             for key in ("errors_by_class", "errors_by_op") if data.get(key)]
    return f" ({'; '.join(parts)})" if parts else ""


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 100:.1f}%"


def _deficit(data: dict[str, Any]) -> str:
    """The deficit in operations and in seconds of full load; for a run recorded before it,
    n/a and the mean drop it had."""
    if data.get("deficit_ops") is None:
        drop = data.get("throughput_drop")
        return "n/a" + (f" (mean throughput drop {_pct(drop)})" if drop is not None else "")
    offered = (f" of {data['offered_ops']} offered in the fault window"
               if data.get("offered_ops") is not None else "")
    return (f"{data['deficit_ops']} operations not served within {ON_TIME_S:g} s of their "
            f"intended start{offered}: {_fmt(data['deficit_s'], ' s')} of full load")


def _not_started(data: dict[str, Any]) -> str:
    """How many of the errors are starts the open loop could not issue."""
    n = (data.get("errors_by_class") or {}).get(NOT_STARTED)
    return (f" ({n} of them not started: the load's in-flight limit was reached, the cluster "
            "stalled or was too slow)") if n else ""


def format_report(data: dict[str, Any]) -> str:
    lines = [
        f"Run {data['run_id']}: {data['title']}",
        f"  cluster {data['cluster']} ({data['cluster_kind']}"
        + (f", {data['release']}" if data.get("release") else "") + f"), status {data['status']}",
        f"  workload: {data['workload'].get('rate')} ops/s open loop{_relative(data)}, "
        f"{data['workload'].get('object_size')} B objects, mix {_mix(data['workload'].get('mix'))}",
        "",
        f"  baseline                     {_fmt(data['baseline_ops'])} ops/s, "
        f"{_fmt(data['baseline_mbps'])} MB/s, p50 {_fmt(data['baseline_p50_ms'], ' ms')}, "
        f"p99 {_fmt(data['baseline_p99_ms'], ' ms')}",
        f"  errors                       {_fmt(data['errors'])}{_error_counts(data)}"
        + _not_started(data),
        f"  deficit                      {_deficit(data)}",
        f"  worst second                 {_pct(data['worst_second_drop'])} below the baseline"
        + (f"; p99 {_fmt(data['fault_p99_ms'], ' ms')} during the fault"
           if data.get("fault_p99_ms") is not None else ""),
        f"  time to detect               {_fmt(data['time_to_detect_s'], ' s')}",
        "  time to client recovery      " + ("none needed: no disruption" if no_disruption(data)
                                             else _fmt(data['time_to_client_recovery_s'], ' s')),
        f"  time to full redundancy      {_fmt(data['time_to_full_redundancy_s'], ' s')} "
        "(while the fault persists)",
        f"  restored at                  {_fmt(data['restore_at_s'], ' s')}; fully redundant "
        f"{_fmt(data['time_to_full_redundancy_after_restore_s'], ' s')} after the restore",
        f"  time to alert                {_fmt(data['time_to_alert_s'], ' s')}",
        f"  data at risk                 {_fmt(data['data_at_risk_s'], ' s')}",
        f"  lost objects                 {_fmt(data['lost_objects'])} "
        f"(corrupt {_fmt(data['corrupt_objects'])}, "
        f"of {_fmt((data.get('verify') or {}).get('checked'))} verified)",
        *consistency_lines(data.get("verify")),
    ]
    lines.insert(5, f"  baseline check               {validity_line(data.get('validity'))}")
    if removed := data.get("objects_removed"):
        lines.append(f"  objects removed              {removed['deleted']} deleted by "
                     f"`faultline clean` at {removed['at']} ({removed['already_gone']} already "
                     f"gone, {removed['failed']} failed)")
    if scale_lines(data):
        lines += [""] + [f"  scale: {line}" for line in scale_lines(data)]
    if data["reasons"]:
        lines.append("")
        lines += [f"  {label_of(k)}: n/a because {v}" for k, v in data["reasons"].items()]
    if data.get("error"):
        lines += ["", f"  error: {data['error']}"]
    if data.get("guard_override_by"):
        lines += ["", f"  guard: the blast-radius guard was overridden by "
                      f"{data['guard_override_by']}"]
    if data.get("fault_detail"):
        lines += [""] + [f"  fault: {line}" for line in data["fault_detail"]]
    if data.get("heals"):
        lines += [""] + [f"  {line}" for line in heal_lines(data["heals"])]
    if data.get("topology_note"):
        lines += [""] + [f"  topology: {note}" for note in data["topology_note"]]
    lines += recovery_lines(data.get("recovery_settings"), data.get("recovery_note") or [])
    if data.get("silenced_note"):
        lines += [""] + [f"  silenced: {note}" for note in data["silenced_note"]]
    if data.get("note"):
        lines += ["", f"  note: {data['note']}"]
    if data.get("fault_note"):
        lines += [f"  note: {data['fault_note']}"]
    return "\n".join(lines)
