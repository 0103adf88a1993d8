"""Why a running run is taken for dead, in plain words, or None while it may be alive."""

from __future__ import annotations

import pytest

from clusters.processes import ALIVE, ELSEWHERE, GONE, REBOOTED, REUSED, ProcessOwner
from service.runs.reaper import STALE_AFTER_S, cause_of_death

OWNER = ProcessOwner(4242, "node7", "boot pid:[1] 99")


@pytest.mark.parametrize(("owner", "state", "silent_s", "cause"), [
    (OWNER, ALIVE, 3 * STALE_AFTER_S, None),  # never a live run, however silent
    (OWNER, GONE, None, "its process (pid 4242 on node7) died"),
    (OWNER, REUSED, None,
     "its process (pid 4242 on node7) died (the pid now belongs to a later process)"),
    (OWNER, REBOOTED, None, "its process (pid 4242 on node7) died: node7 was restarted since "
                            "it began"),
    (OWNER, ELSEWHERE, STALE_AFTER_S - 1, None),
    (OWNER, ELSEWHERE, STALE_AFTER_S + 60, "its process (pid 4242 on node7) gave no sign of "
                                           "life for 11 min"),
    (OWNER, ELSEWHERE, 3 * 3600, "its process (pid 4242 on node7) gave no sign of life for 3 h"),
    (None, None, STALE_AFTER_S - 1, None),
    (None, None, 5 * 86400, "it gave no sign of life for 5 d (it began before runs recorded "
                            "their process)"),
], ids=["alive", "gone", "reused", "rebooted", "elsewhere-recent", "elsewhere-silent",
        "elsewhere-hours", "no-owner-recent", "no-owner-silent"])
def test_cause_of_death(owner, state, silent_s, cause):
    assert cause_of_death(owner, state, silent_s) == cause
