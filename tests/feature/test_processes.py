"""Every process a test starts dies with it: a child's child orphaned (as a timed-out
`subprocess.run` leaves a worker under `faketime`) is still found, killed at teardown and
named in the run's summary (tests/conftest.py processes_die_with_their_test)."""

import os
import subprocess
import sys
import uuid

import psutil

from helpers import ROOT

LEAK = """
import subprocess


def test_leaves_an_orphan():
    # sh starts sleep in the background and exits at once: sleep's parent is gone.
    subprocess.run(["sh", "-c", "sleep {marker} & exit 0"], check=True)
"""


def test_an_orphan_a_test_leaves_is_killed_and_named(tmp_path):
    marker = f"300.{uuid.uuid4().int % 10**9}"  # a sleep of its own, found by its argument
    (tmp_path / "test_leak.py").write_text(LEAK.replace("{marker}", marker))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])},
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-2000:]
    assert "left behind by a test and killed: 1" in out.stdout
    assert f"test_leak.py::test_leaves_an_orphan: sleep {marker}" in out.stdout
    assert not [p for p in psutil.process_iter(["cmdline"]) if marker in " ".join(p.info["cmdline"] or [])]
