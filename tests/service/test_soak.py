"""The chaos soak (``bench/soak.py``) for five minutes, as ``make test`` runs it: every check holds.

The soak starts its own stack (its own redis-server, never the shared one) and injects a seeded
random plan of faults (worker SIGKILL and SIGSTOP, Redis SIGKILL and restart, S3 stops, API
restarts) while three teams submit albums; it checks only at the end and exits 0 only when every
job ended (done, or failed naming its cause), none was left running, each done job has one set of
artifacts that parse and each job one signed callback, nothing is left in the bucket after the
jobs are deleted, and the queues and leases are at rest. The report is kept beside the test's
temporary files; a failing check is named in the assertion.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service.helpers import MUSIC, REPO_ROOT, log_warnings

pytestmark = [pytest.mark.service, pytest.mark.faults]

MINUTES = float(os.environ.get("CHOREO_TEST_SOAK_MINUTES", "5"))
SEED = 20261202


@pytest.mark.timeout(int(MINUTES * 60) + 1200)
def test_a_five_minute_chaos_soak_passes_every_check(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None or not (MUSIC / "gpl").is_dir():
        pytest.skip("needs redis-server and the shared music")
    out = tmp_path / "soak.json"
    command = [sys.executable, "-P", "bench/soak.py", "--minutes", str(MINUTES), "--seed", str(SEED)]
    run = subprocess.run(
        [*command, "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=int(MINUTES * 60) + 1100,
    )
    assert out.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(out.read_text())
    failed = [name for name, ok in report["checks"].items() if not ok]
    assert not failed, (
        failed,
        report["problems"],
        report["jobs"],
        report["log"]["faults"],
        report["processes_alive_after_settle"],
        report["redis"]["after_cleanup"]["keys_without_ttl_by_kind"],
        log_warnings(Path(report["logs_kept"])) if report.get("logs_kept") else {},
    )
    assert report["faults"]["injected"] >= max(1, int(MINUTES)), report[
        "faults"
    ]  # a fault every 30 s on average
    assert report["jobs"]["by_state"].get("done", 0) > 0, report["jobs"]
    assert run.returncode == 0, run.stderr[-3000:]
