"""Whether a run's abort alerts are silenced in Alertmanager as the run starts.

A run that aborts on an alert (its `abort_on`) relies on Alertmanager posting that alert to
the service. Anyone who can reach Alertmanager can silence it, and the run would then go on
through what should have stopped it. So at the run's start the control asks Alertmanager
(`GET /api/v2/silences`) for its active silences, and each one that would silence one of the
run's abort alerts is recorded on the run (an `abort_alerts_silenced` event), which the
report and the run page show as a caveat.

Which labels the alert will carry: its alertname, the run's cluster, the static labels its
rule gives it (dashboards/prometheus/rules) and the condition's labels. A silence matcher on
a label none of these name may or may not match the alert: it counts as silencing it (the
report says "may"). Alertmanager is $FAULTLINE_ALERTMANAGER_URL, by default the embedded
one (service.monitoring.embedded); one that does not answer is said too, since the run then
cannot know.
"""

from __future__ import annotations

import json
import logging
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from service.experiments.abort_conditions import AbortCondition
from service.results.silenced import EVENT, notes
from service.store.recording import RunRecorder

logger = logging.getLogger("chaostoolkit")

# the embedded Alertmanager's (service.monitoring.embedded.ALERTMANAGER_PORT, a layer above)
DEFAULT_URL = "http://127.0.0.1:9393"
RULES = Path(__file__).resolve().parents[2] / "dashboards" / "prometheus" / "rules"
TIMEOUT_S = 5.0


def alertmanager_url() -> str:
    return os.environ.get("FAULTLINE_ALERTMANAGER_URL") or DEFAULT_URL


def active_silences(url: str, timeout_s: float = TIMEOUT_S) -> list[dict[str, Any]]:
    """Alertmanager's active silences; OSError (or ValueError) if it cannot be asked."""
    request = urllib.request.Request(f"{url.rstrip('/')}/api/v2/silences",
                                     headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
        silences = json.loads(response.read())
    if not isinstance(silences, list):
        raise ValueError(f"{url}/api/v2/silences did not answer a list")
    return [s for s in silences if isinstance(s, dict)
            and (s.get("status") or {}).get("state") == "active"]


def rule_labels(rules: Path = RULES) -> dict[str, dict[str, str]]:
    """Each alert's static labels, from the rule files."""
    labels: dict[str, dict[str, str]] = {}
    for path in sorted(rules.glob("*.yml")):
        for group in (yaml.safe_load(path.read_text()) or {}).get("groups") or []:
            for rule in group.get("rules") or []:
                if rule.get("alert"):
                    labels[rule["alert"]] = {str(k): str(v)
                                             for k, v in (rule.get("labels") or {}).items()}
    return labels


def silencing(silences: list[dict[str, Any]], conditions: list[AbortCondition], cluster: str,
              rules: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """One entry per (silence, abort condition) where the silence would (or may) silence
    the condition's alert on this cluster."""
    rules = rule_labels() if rules is None else rules
    found = []
    for condition in conditions:
        labels = {"alertname": condition.alertname, "cluster": cluster,
                  **rules.get(condition.alertname, {}), **condition.labels}
        for silence in silences:
            matchers = silence.get("matchers") or []
            verdicts = [_matches(m, labels) for m in matchers]
            if not matchers or False in verdicts:
                continue
            found.append({"silence_id": silence.get("id"), "condition": condition.describe(),
                          "matchers": [_matcher_text(m) for m in matchers],
                          "certain": None not in verdicts,
                          "created_by": silence.get("createdBy"),
                          "comment": silence.get("comment"), "ends_at": silence.get("endsAt")})
    return found


def check(conditions: list[AbortCondition], cluster: str,
          url: str | None = None) -> dict[str, Any] | None:
    """What to record on a run with these abort conditions: the silences that silence them,
    or that Alertmanager could not be asked; None when there is nothing to say."""
    if not conditions:
        return None
    url = url or alertmanager_url()
    try:
        found = silencing(active_silences(url), conditions, cluster)
    except (OSError, ValueError, urllib.error.URLError) as exc:
        return {"alertmanager": url, "silences": [],
                "unchecked": f"could not ask Alertmanager at {url} for silences: {exc}"}
    return {"alertmanager": url, "silences": found} if found else None


def record(recorder: RunRecorder, conditions: list[AbortCondition], cluster: str,
           url: str | None = None) -> dict[str, Any] | None:
    """Check, and put what there is to say on the run (its event) and in its log."""
    silenced = check(conditions, cluster, url)
    if silenced:
        recorder.event(EVENT, **silenced)
        for note in notes(silenced):
            logger.warning(note)
    return silenced


def _matches(matcher: dict[str, Any], labels: dict[str, str]) -> bool | None:
    """Whether a matcher matches the alert's labels; None for a label it is not known to
    carry (Alertmanager's regexes are anchored; isEqual false negates)."""
    name, value = str(matcher.get("name")), str(matcher.get("value", ""))
    if name not in labels:
        return None
    if matcher.get("isRegex"):
        try:
            hit = re.fullmatch(value, labels[name]) is not None
        except re.error:
            return None
    else:
        hit = labels[name] == value
    return hit if matcher.get("isEqual", True) else not hit


def _matcher_text(matcher: dict[str, Any]) -> str:
    op = ("=~" if matcher.get("isRegex") else "=") if matcher.get("isEqual", True) else (
        "!~" if matcher.get("isRegex") else "!=")
    return f'{matcher.get("name")}{op}"{matcher.get("value")}"'
