"""`make test-lab`: the lab suite in its two streams, side by side (tests/integration/streams.py).

The main stream's output is shown as it runs; the side stream's is kept in a file and shown
after. Each stream has its own database on the one PostgreSQL server, which this script
starts first (so that neither stream stops it under the other) and stops at the end if it
started it. The exit status is the worse of the two streams'.

    .venv/bin/python scripts/test_lab_streams.py [PYTEST ARGS ...]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from service.store import pgserver

REPO = Path(__file__).resolve().parents[1]
SELECTION = ["tests/integration", "-m", "not full"]


def pytest(stream: str, extra: list[str], env: dict[str, str], **popen) -> subprocess.Popen:
    durations = "60" if stream == "main" else "30"
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", *SELECTION, f"--stream={stream}",
         f"--durations={durations}", *extra], cwd=REPO, env=env, **popen)


def main(extra: list[str]) -> int:
    started_pg = pgserver.ensure_running()
    work = Path(tempfile.mkdtemp(prefix="faultline-streams-"))
    side_log, side_done = work / "side.log", work / "side.done"
    base = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    started = time.monotonic()
    with side_log.open("w") as log:
        side = pytest("side", [*extra, f"--basetemp={work / 'side-tmp'}"],
                      {**base, "FAULTLINE_TEST_DB": "faultline_test_side"},
                      stdout=log, stderr=subprocess.STDOUT)
    main_stream = pytest("main", extra, {**base, "FAULTLINE_TEST_DB": "faultline_test",
                                         "FAULTLINE_SIDE_STREAM_DONE": str(side_done)})
    try:
        side_code = side.wait()
        side_done.write_text(f"{side_code}\n")
        side_s = time.monotonic() - started
        main_code = main_stream.wait()
    except KeyboardInterrupt:
        for process in (side, main_stream):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)  # pytest's own teardown: labs down
        side.wait()
        main_stream.wait()
        raise
    finally:
        if started_pg:
            pgserver.stop()
    print(f"\n===== the side stream (Reef lab, Swift lab alone): exit {side_code} after "
          f"{side_s:.0f} s =====")
    print(side_log.read_text(), end="")
    print(f"===== both streams: {time.monotonic() - started:.0f} s; main exit {main_code}, "
          f"side exit {side_code} =====")
    return max(main_code, side_code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
