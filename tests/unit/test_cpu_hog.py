"""A CPU hog (clusters/faults/cpu_hog.py): bounded by a ceiling and a timeout, checked, and the
commands it runs on the node, as text."""

from __future__ import annotations

import pytest

from clusters.exceptions import InvalidCpuHog
from clusters.faults.cpu_hog import CpuHog, cpu_hog, parse_cpu_stat, start_command, stop_command


@pytest.mark.parametrize(("arguments", "message"), [
    ({"workers": 0}, "workers must be a whole number from 1 to 64, not 0"),
    ({"workers": 500}, "workers must be a whole number from 1 to 64, not 500"),
    ({"load_percent": 150}, "load_percent must be a whole number from 1 to 100, not 150"),
    ({"timeout_s": 0}, "timeout_s must be a whole number from 1 to 3600, not 0"),
    ({"timeout_s": 86400}, "timeout_s must be a whole number from 1 to 3600, not 86400"),
    ({"ceiling_cores": 0}, "ceiling_cores must be a number from 0.1 to 256, not 0"),
    ({"ceiling_cores": "all"}, "ceiling_cores must be a number from 0.1 to 256, not 'all'"),
])
def test_an_unbounded_or_absurd_hog_is_refused_with_one_message(arguments, message):
    with pytest.raises(InvalidCpuHog) as refused:
        cpu_hog("node2", **arguments)

    assert str(refused.value) == message


def test_the_hog_runs_in_a_cgroup_whose_quota_is_its_ceiling_and_ends_by_itself():
    hog = cpu_hog("node2", workers=2, load_percent=80, ceiling_cores=1.5, timeout_s=45)
    command = start_command(hog)

    assert hog.says() == ("2 stress-ng CPU worker(s) at 80% on node2, at most 1.5 core(s), "
                          "for at most 45 s")
    assert "echo 150000 > /sys/fs/cgroup/cpu/faultline-cpuhog-node2/cpu.cfs_quota_us" \
        in command
    assert ("echo $$ > /sys/fs/cgroup/cpu/faultline-cpuhog-node2/cgroup.procs && exec "
            "stress-ng --cpu 2 --cpu-load 80 --timeout 45s --quiet") in command
    assert "setsid sh -c" in command and "exit !(n >= 1.5)" in command


def test_the_stop_kills_what_is_left_and_removes_the_cgroup():
    command = stop_command("node2")

    assert command.startswith("if [ -d /sys/fs/cgroup/cpu/faultline-cpuhog-node2 ]; then "
                              "cat /sys/fs/cgroup/cpu/faultline-cpuhog-node2/cpu.stat")
    assert command.endswith("rmdir /sys/fs/cgroup/cpu/faultline-cpuhog-node2; fi")


def test_how_often_the_ceiling_held_it_back_is_read_from_cpu_stat():
    text = "nr_periods 52\nnr_throttled 49\nthrottled_time 2450000000\nnr_bursts 0\n"

    assert parse_cpu_stat(text) == {"periods": 52, "held_back": 49, "held_back_s": 2.5}
    assert parse_cpu_stat("") == {"periods": 0, "held_back": 0, "held_back_s": 0.0}
    assert CpuHog("n", 1, 100, 1.0, 60).cgroup == "/sys/fs/cgroup/cpu/faultline-cpuhog-n"


def test_the_report_gives_the_stop_that_read_the_cgroup_and_not_the_rollbacks_second():
    from service.results.report import cpu_hog_lines

    first = {"node": "node2", "stopped": True, "periods": 460, "held_back": 23,
             "held_back_s": 0.7}
    again = {"node": "node2", "stopped": True, "periods": 0, "held_back": 0,
             "held_back_s": 0.0}
    assert cpu_hog_lines("activity", first) == [
        "the ceiling held the hog back in 23 of 460 periods (0.7 s)"]
    assert cpu_hog_lines("activity", again) == []
    assert cpu_hog_lines("fault_injected", first) == []
