"""Read what decides a Ceph cluster's recovery, as its daemons run it.

`config show <daemon>` gives the options a running daemon has from anywhere but its
defaults (ceph.conf, the monitors' database, an override), with that source; `config help
<option>` gives the running release's default, so no release's defaults are written down
here. An option the release does not have is left out. The size and min_size of the pools
the load writes to come from `osd pool ls detail`: the client's pool for librados, RGW's
bucket data pools for a load through RGW.

The OSD options are read from every OSD that is up, up to MAX_OSDS of them (one command
each): an OSD whose value differs from the first's is listed in the setting's `differs`.
"""

from __future__ import annotations

from typing import Any

from clusters.ceph.admin import CephAdmin
from clusters.exceptions import AdminCommandFailed
from clusters.recovery_settings import Setting, merge

MON_OPTIONS = ("mon_osd_down_out_interval",)
OSD_OPTIONS = ("osd_heartbeat_grace", "osd_heartbeat_interval", "osd_max_backfills",
               "osd_recovery_max_active", "osd_op_queue", "osd_mclock_profile")
TIMERS = frozenset({"mon_osd_down_out_interval", "osd_heartbeat_grace",
                    "osd_heartbeat_interval"})
MAX_OSDS = 32
RGW_DATA_POOL = "rgw.buckets.data"  # "default.rgw.buckets.data", a zone's "<zone>.rgw..."


def option_text(value: Any) -> str:
    """An option's value as Ceph prints it (a JSON boolean as true/false)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def release(admin: CephAdmin) -> str:
    """The releases the daemons run ("ceph version 18.2.7 (...) reef (stable)"), joined."""
    versions = admin.command("versions") or {}
    return "; ".join(sorted((versions.get("overall") or {}).keys()))


def read(admin: CephAdmin, pool: str | None = None, rgw: bool = False
         ) -> tuple[list[Setting], str]:
    """The settings, and the release they were read from; `pool` and `rgw` say which pools'
    size and min_size (see above)."""
    defaults: dict[str, str] = {}
    for option in MON_OPTIONS + OSD_OPTIONS:
        try:
            defaults[option] = option_text(admin.command("config help", key=option)["default"])
        except AdminCommandFailed:  # not an option of this release (osd_mclock_profile)
            continue
    status = admin.status()
    quorum = status.get("quorum_names") or []
    daemons = [(f"mon.{quorum[0]}", MON_OPTIONS)] if quorum else []
    up = [o["osd"] for o in (admin.command("osd dump") or {}).get("osds", []) if o.get("up")]
    daemons += [(f"osd.{osd}", OSD_OPTIONS) for osd in sorted(up)[:MAX_OSDS]]
    settings: list[Setting] = []
    for who, options in daemons:
        shown = {entry["name"]: entry for entry in admin.command("config show", who=who) or []}
        for option in options:
            if option not in defaults:
                continue
            entry = shown.get(option)
            settings.append(Setting(
                option, option_text(entry["value"]) if entry else defaults[option],
                defaults[option], who, entry.get("source", "") if entry else "default",
                option in TIMERS))
    for detail in admin.command("osd pool ls", detail="detail") or []:
        name = detail["pool_name"]
        if name != pool and not (rgw and name.endswith(RGW_DATA_POOL)):
            continue
        for key in ("size", "min_size"):
            settings.append(Setting(f"pool {name} {key}", str(detail[key]), None,
                                    f"pool {name}", "pool"))
    merged = merge(settings)
    osds = [who for who, _ in daemons if who.startswith("osd.")]
    for setting in merged:
        if setting.name in OSD_OPTIONS and len(osds) > 1:
            setting.where += f" and {len(osds) - 1} other OSDs up"
    return merged, release(admin)
