"""The benches docs/benchmarks.md quotes run, at a size that takes seconds: a documented
command is a tested command (bench/ingestparts.py once stubbed a function a refactor had
moved, and failed on its first round)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT

SMALL = {
    "ingestparts.py": (["--calls", "3", "--rounds", "1"], "held reference"),
    "slowlog.py": (["--pages", "20", "--dead", "20", "--leads", "1"], "dead-letter prune pass"),
    "userdata.py": (["--records", "100", "--rounds", "1"], "ratio ours/SDK"),
    "forget.py": (["--leads", "300"], "walk"),
    "google.py": (["--leads", "30"], "requests per 1,000 events"),
    "forgetload.py": (["--leads", "300", "--seconds", "1", "--connections", "2"], "forgets reading every key"),
}


@pytest.mark.parametrize("script", sorted(SMALL))
def test_a_bench_runs_and_prints_its_figures(script, tmp_path):
    args, said = SMALL[script]
    ran = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert said in ran.stdout
