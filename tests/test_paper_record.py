"""`nbsymple paper` as a reader meets it: a clean clone stays clean in its stamps, the results of a
complete commit are chosen over a newer partial run, and REPORT.md concludes only what its
numbers' noise allows. No timing assertions."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nbsymple_versions import paper
from nbsymple_versions.instruments.provenance import git_commit, pin_commit

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "data" / "asv_fixture"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


# ----------------------------------------------------------------------------- a clean tree stays clean

def test_a_pinned_commit_names_the_tree_before_the_command_wrote(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f.txt").write_text("one\n")
    _git("add", "f.txt", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one", cwd=repo)
    head = _git("rev-parse", "--short=8", "HEAD", cwd=repo)
    assert pin_commit(repo) == head
    (repo / "f.txt").write_text("two\n")              # the command's own write
    assert git_commit(repo) == head
    assert pin_commit(repo) == head + "+dirty"        # a later command sees the change that existed before it


TINY_SCIENCE = ["--tidal-n", "48", "--tidal-dt", "0.125", "--tidal-orbits", "0.5", "--bh-n", "32",
                "--bh-dt", "0.0078125", "--bh-t-end", "2.0", "--bh-ratios", "1", "--science-version", "A"]


@pytest.mark.parametrize("science", [["--no-science"], TINY_SCIENCE], ids=["no-science", "tiny-science"])
def test_paper_on_a_clean_clone_stamps_the_clean_commit(tmp_path, science):
    """`python -m nbsymple_versions.paper` in a fresh clone of this checkout's HEAD rewrites plots/
    (the benchmark figures first, then the science runs); every commit it stamps (REPORT.md, the
    runs' run.json) is the clone's, without '+dirty': its own writes came after the commit was read."""
    clone = tmp_path / "clone"
    _git("clone", "-q", str(REPO), str(clone), cwd=tmp_path)
    head = _git("rev-parse", "--short=8", "HEAD", cwd=clone)
    env = {**os.environ, "PYTHONPATH": str(clone)}          # the clone's package, not this checkout's
    proc = subprocess.run([sys.executable, "-m", "nbsymple_versions.paper", "--quiet", *science], cwd=clone,
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (clone / "plots" / "REPORT.md").read_text()
    stamps = set(re.findall(r"commit ([0-9a-f]{8,40}(?:\+dirty)?)", report))
    stamps |= {json.loads(p.read_text())["provenance"]["commit"] for p in (clone / "plots" / "runs").glob("*/run.json")}
    assert stamps and not any(s.endswith("+dirty") for s in stamps), stamps
    if "predicted (" in report or science != ["--no-science"]:     # the prediction and the runs stamp the clone's
        assert head in stamps, (head, stamps)
