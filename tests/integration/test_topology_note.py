"""A run's topology warning, stored on a real PostgreSQL, in `faultline report` (text and
JSON) and in `faultline compare`'s caveats; no lab needed."""

from __future__ import annotations

import json

from factories import figures, make_run

from service.store.models import Event

ZONE3 = ("osd.3 is the only OSD in zone3: 2 zones are left for 3 copies, one per zone, so "
         "Ceph cannot re-replicate its PGs while it is down, and time to full redundancy "
         'while the fault persists can only time out, as can a "healed while dead" probe.')


def test_report_and_compare_show_the_note_a_run_stored(sessions, made, invoke):
    with sessions() as session:
        finished = make_run(session, figures=figures(topology_note=[ZONE3]))
        # a run whose process died before its figures: the event still tells
        interrupted = make_run(session, status="interrupted")
        session.add(Event(run_id=interrupted.id, ts=0, kind="topology_note",
                          detail={"notes": [ZONE3]}))
        session.commit()
        made += [finished.id, interrupted.id]

    text = invoke("report", str(finished.id))
    as_json = invoke("report", str(interrupted.id), "--json")
    compared = invoke("compare", str(finished.id), str(interrupted.id))

    assert f"  topology: {ZONE3}" in text.output
    assert json.loads(as_json.output)["topology_note"] == [ZONE3]
    assert f"run {finished.id}, run {interrupted.id}: osd.3 is the only OSD in zone3" \
        in " ".join(compared.output.split())
