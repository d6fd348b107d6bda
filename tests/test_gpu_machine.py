"""tools/gpu_machine.sh, the GPU machine's checks in one call: its time limits and its asv groups
(the stages themselves need a GPU; their commands are tested where they live)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tools import tracking

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "tools/gpu_machine.sh"


def _script(*args, cwd=ROOT, **env):
    return subprocess.run(["bash", str(ROOT / SCRIPT), *args], cwd=cwd,
                          env={**os.environ, "PYTHON": sys.executable, **env}, capture_output=True, text=True,
                          timeout=300)


def test_with_no_time_left_it_describes_the_machine_and_starts_no_stage(tmp_path):
    """A stage never starts with 5 s or less of the total left, and says so in its log; the
    machine's description (Python packages included) is written first, whatever the time. Called
    from another folder, OUT_DIR is taken from there (here "-out", which is no option of `tee`),
    and the checkout is found from the script's place."""
    r = _script("-out", "0", cwd=tmp_path)
    out = tmp_path / "-out"
    assert r.returncode == 0, r.stderr
    assert f"numpy {np.__version__}" in (out / "machine.txt").read_text()
    for log in ("report-numba.txt", "report-cupy.txt", "asv.txt"):
        text = (out / log).read_text()
        assert text.startswith("== not run, 5 s or less left of the 0 s: ") and text.count("\n") == 1, (log, text)
    assert "tools.tracking run --bench ^tasks" in (out / "asv.txt").read_text()     # the first group, then it stops


@pytest.mark.parametrize("args, says", [
    (["{tmp}/out", "abc"], "SECONDS_TOTAL is a whole number of seconds, not 'abc'"),
    (["{tmp}/out", "1e3"], "SECONDS_TOTAL is a whole number of seconds, not '1e3'"),
    (["{tmp}/out", "-5"], "SECONDS_TOTAL is a whole number of seconds, not '-5'"),
    (["{tmp}/file", "0"], "cannot make the folder OUT_DIR"),
])
def test_a_wrong_argument_is_one_sentence_and_status_2(tmp_path, args, says):
    (tmp_path / "file").write_text("")
    r = _script(*[a.format(tmp=tmp_path) for a in args])
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("usage: ") and says in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()


def test_an_out_dir_of_an_earlier_call_is_refused(tmp_path):
    """A second call into the same OUT_DIR appended its stages' logs to the first's (report-*.txt
    holding both runs, a hunt): refused, the earlier files left as they were."""
    assert _script(str(tmp_path / "out"), "0").returncode == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    r = _script(str(tmp_path / "out"), "0")
    assert r.returncode == 2 and r.stderr.startswith("usage: ") and "holds the files of an earlier call" in r.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == before


def test_numba_keeps_its_kernels_in_this_users_folder(tmp_path):
    """NUMBA_CACHE_DIR defaulted to /tmp/nbsymple-numba-cache, one folder for every user, whose
    pickled indexes numba loads (a hunt): the suite's folder in this user's cache, unless set."""
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\necho "$NUMBA_CACHE_DIR" > {tmp_path}/seen\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    r = subprocess.run(["bash", str(ROOT / SCRIPT), str(tmp_path / "out"), "0"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300, env={**env, "PYTHON": str(python), "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "seen").read_text().strip() == f"{tmp_path}/.cache/nbsymple-versions/numba"


def test_every_asv_group_names_gpu_benchmarks_of_the_suite(tmp_path):
    """Each group's pattern selects benchmarks of the suite (a renamed benchmark would leave its
    group selecting nothing), only of the GPU versions C, D, E or the GPU kernels, and together the
    groups cover every N of the large grid."""
    r = _script(str(tmp_path / "unused"), STAGES="groups")
    groups = r.stdout.splitlines()
    assert r.returncode == 0 and len(groups) >= 10 and not (tmp_path / "unused").exists(), r.stderr
    for pattern in groups:
        names = tracking.matching(pattern)
        assert names and all(n.startswith(("tasks.", "steps.", "gpu.GpuKernel")) for n in names), (pattern, names)
    from benchmarks.grid import GRIDS
    for n in GRIDS["large"]["ns"]:
        assert any(f"{n}" in g for g in groups if g.startswith("^tasks\\.Tasks")), n
