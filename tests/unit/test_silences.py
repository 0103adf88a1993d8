"""Which Alertmanager silences silence a run's abort alerts (service.runs.silences), from
the alert's labels as its rule and condition give them; each row (silence matchers, what is
said)."""

from __future__ import annotations

import pytest

from service.experiments.abort_conditions import AbortCondition
from service.monitoring import embedded
from service.results.silenced import notes
from service.runs.silences import DEFAULT_URL, check, rule_labels, silencing

DEGRADED = AbortCondition("CephClusterDegraded", grace_s=60)
LOST = AbortCondition("FaultlineLostObjects", labels={"experiment": "ceph-kill-osd"})


def _silence(*matchers, id="s1"):
    return {"id": id, "createdBy": "mallory", "comment": "quiet", "endsAt": "2030-01-01",
            "status": {"state": "active"},
            "matchers": [{"isEqual": True, "isRegex": False, **m} for m in matchers]}


@pytest.mark.parametrize("matchers, said", [
    ([{"name": "alertname", "value": "CephClusterDegraded"}],
     ["abort alert CephClusterDegraded{} after a grace of 60 s is silenced in Alertmanager "
      "(silence s1, alertname=\"CephClusterDegraded\", by mallory, until 2030-01-01): the run "
      "would not abort on it"]),
    ([{"name": "cluster", "value": "lab-.*", "isRegex": True}],
     ["abort alert CephClusterDegraded{} after a grace of 60 s is silenced in Alertmanager "
      "(silence s1, cluster=~\"lab-.*\", by mallory, until 2030-01-01): the run would not "
      "abort on it",
      "abort alert FaultlineLostObjects{experiment=\"ceph-kill-osd\"} is silenced in "
      "Alertmanager (silence s1, cluster=~\"lab-.*\", by mallory, until 2030-01-01): the run "
      "would not abort on it"]),
    ([{"name": "severity", "value": "page"}],  # the rule gives FaultlineLostObjects "page"
     ["abort alert FaultlineLostObjects{experiment=\"ceph-kill-osd\"} is silenced in "
      "Alertmanager (silence s1, severity=\"page\", by mallory, until 2030-01-01): the run "
      "would not abort on it"]),
    ([{"name": "alertname", "value": "CephClusterDegraded"},
      {"name": "instance", "value": "x"}],  # a label the alert may carry: "may be"
     ["abort alert CephClusterDegraded{} after a grace of 60 s may be silenced in "
      "Alertmanager (silence s1, alertname=\"CephClusterDegraded\", instance=\"x\", by "
      "mallory, until 2030-01-01): the run would not abort on it"]),
    ([{"name": "cluster", "value": "lab-swift"}], []),  # another cluster's
    ([{"name": "alertname", "value": "CephClusterDegraded", "isEqual": False},
      {"name": "severity", "value": "ticket"}], []),  # every ticket but this alert
    ([{"name": "alertname", "value": "Ceph.*", "isRegex": True, "isEqual": False},
      {"name": "experiment", "value": "other"}], []),
])
def test_a_silence_silences_an_abort_alert_when_its_matchers_match_the_alert(matchers, said):
    found = silencing([_silence(*matchers)], [DEGRADED, LOST], "lab-ceph")
    assert notes({"silences": found}) == said


def test_the_rule_labels_come_from_the_rules_of_dashboards():
    labels = rule_labels()
    assert labels["CephClusterDegraded"] == {"severity": "ticket"}
    assert labels["FaultlineLostObjects"] == {"severity": "page"}


def test_a_run_without_abort_conditions_asks_nothing():
    assert check([], "lab-ceph", url="http://127.0.0.1:9") is None


def test_an_alertmanager_that_does_not_answer_is_said():
    detail = check([DEGRADED], "lab-ceph", url="http://127.0.0.1:9")
    assert detail["silences"] == []
    assert notes(detail)[0].startswith("abort alerts not checked for silences: could not ask "
                                       "Alertmanager at http://127.0.0.1:9 for silences: ")


def test_the_default_alertmanager_is_the_embedded_one():
    assert DEFAULT_URL == embedded.alertmanager_url()
