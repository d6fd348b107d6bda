"""The GPU peers (`nbsymple_versions.instruments.peers_warp`) without a GPU: NVIDIA Warp's tile N-body kernel
and the plain Warp kernel run on Warp's CPU device at small N (a whole tile and a partial one) and
agree with the float64 reference within their precision's tolerance, a wrong input fails the same
check, both compile for the H200 (sm_90 PTX), and the GPU field of `peers.py` and the Warp section
of `gpu_report.py` build their rows with Warp's device set to "cpu". No timing assertions."""
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from nbsymple_versions import make_cluster
from nbsymple_versions.instruments import gpu_report, peers, peers_warp
from nbsymple_versions.core import reference
from nbsymple_versions.validation import TOLERANCE

REPO = Path(__file__).resolve().parents[1]
NO_CUDA = not peers_warp.availability("cuda")[0]


def salpeter_cluster(n):
    """A cluster at the origin with unequal masses (so that a mass read from the wrong body shows)."""
    return make_cluster(n, seed=n, radius_kpc=None, mass_classes=4)


@pytest.mark.parametrize("n", [200, 256])           # a partial last tile (200 = 3 x 64 + 8) and whole tiles
@pytest.mark.parametrize("precision", peers_warp.WARP_PRECISIONS)
@pytest.mark.parametrize("kind", peers_warp.KERNELS)
def test_warp_kernels_agree_with_the_reference_on_the_cpu_device(kind, precision, n):
    state = salpeter_cluster(n)
    forces = peers_warp.WarpForces(state.m, state.eps, precision, kind, "cpu")
    err, ok = peers_warp.check(forces, state)
    assert ok and err <= TOLERANCE[precision], f"{kind} {precision} N={n}: {err:.2e}"
    acc = forces.evaluate(state.x)
    assert acc.shape == (n, 3) and acc.dtype == np.float64
    assert forces.records.shape == (256, 4) and not forces.records[n:].any()     # zero-mass padding


@pytest.mark.parametrize("precision", peers_warp.WARP_PRECISIONS)
@pytest.mark.parametrize("kind", peers_warp.KERNELS)
def test_a_wrong_input_fails_the_check(kind, precision):
    """Masses handed over in reverse order: the same check must fail, by far."""
    state = salpeter_cluster(200)
    forces = peers_warp.WarpForces(state.m[::-1].copy(), state.eps, precision, kind, "cpu")
    err, ok = peers_warp.check(forces, state)
    assert not ok and err > 100 * TOLERANCE[precision]


def test_unknown_kernel_or_precision_is_refused():
    state = salpeter_cluster(8)
    with pytest.raises(ValueError, match="kind in"):
        peers_warp.WarpForces(state.m, state.eps, "sp", "tiled", "cpu")
    with pytest.raises(ValueError, match="precision in"):
        peers_warp.WarpForces(state.m, state.eps, "dsp", "tile", "cpu")


@pytest.mark.parametrize("kind", peers_warp.KERNELS)
def test_warp_kernels_compile_for_the_h200(kind, tmp_path):
    """The CUDA build of each sp kernel, as a GPU machine compiles it: the tile kernel's
    cooperative shared-memory load synchronises the block, the plain kernel never does."""
    module = peers_warp.kernels("sp")[kind].module
    (path,) = wp.compile_aot_module(module, arch=90, use_ptx=True, module_dir=tmp_path)
    ptx = path.read_text(errors="replace")
    assert ".target sm_90" in ptx and "sqrt.rn.f32" in ptx
    assert ("bar.sync" in ptx) == (kind == "tile")


def test_the_gpu_field_builds_its_rows_with_warp_on_the_cpu():
    field = peers.gpu_candidates(warp_device="cpu")
    keys = {c.key for c in field}
    assert {f"{v}-{p}" for v in "CDE" for p in ("sp", "dp", "dsp")} <= keys
    assert {f"Warp-GPU-{k}-{p}" for k in peers_warp.KERNELS for p in peers_warp.WARP_PRECISIONS} <= keys
    rows = peers.table(ns=(200,), repeats=1, field=field)
    assert len(rows) == len(field)
    for r in rows:
        if r.candidate.startswith("Warp-GPU"):
            assert r.status == peers.STATUS_OK and r.interactions_per_second > 0
            assert r.max_relative_error <= r.tolerance and r.repeats == 1
        else:                                  # C, D, E: timed on a GPU, skipped with a reason here
            assert r.status == peers.STATUS_OK or r.status.startswith("skipped: ")
        assert math.isnan(r.ratio_to_numpy)    # NumPy is not in this field


def test_main_adds_the_gpu_field_when_asked(capsys, monkeypatch):
    assert peers.main(["--n", "16", "--repeats", "1", "--only", "Warp-GPU-tile", "--gpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| Warp-GPU-tile | sp | 16 |" in out and "| Warp-GPU-tile | dp | 16 |" in out
    if NO_CUDA:
        assert out.count("skipped: Warp sees no CUDA device") == 2
    # a filter without GPU candidates never asks Warp for a GPU (importing it takes a second)
    monkeypatch.setattr(peers, "warp_sees_a_gpu", lambda: pytest.fail("asked Warp for a GPU"))
    assert peers.main(["--n", "16", "--repeats", "1", "--only", "NumPy", "--quiet"]) == 0
    assert "Warp-GPU" not in capsys.readouterr().out
    # one that names a GPU candidate gets its row whatever the machine: timed, or skipped with why
    assert peers.main(["--n", "16", "--repeats", "1", "--only", "C-sp", "--quiet", "--no-bound"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| C | sp | 16 |"))
    assert ("skipped: needs a CUDA GPU" in row) if NO_CUDA else (" ok |" in row), row


def test_gpu_field_of_e_takes_the_galaxy_off_its_checked_call():
    """C and E in numba-cuda's simulator (a child process): E's kernel adds the Galaxy, and its
    checked call must still agree with the pairwise reference."""
    code = ("from nbsymple_versions import make_cluster, peers\n"
            "field = {c.key: c for c in peers.gpu_candidates()}\n"
            "for key in ('C-sp', 'E-dp'):\n"
            "    run, status, err = peers.prepare(field[key], make_cluster(64, seed=3, radius_kpc=None))\n"
            "    print(key, status, err)\n")
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**env, "NUMBA_ENABLE_CUDASIM": "1"},
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.split("\n")
    assert lines[0].startswith("C-sp ok ") and lines[1].startswith("E-dp ok "), p.stdout


class ReferenceEngine:
    """A stand-in for the suite's GPU engines in the report: their upload / compute / download
    cycle over the float64 NumPy reference."""

    def __init__(self, state):
        self.m, self.eps = state.m, state.eps

    def upload(self, x):
        self.x = x.copy()

    def compute(self):
        self.acc = reference.pairwise_acceleration(self.x.T, self.m, self.eps)

    def download(self, out):
        out[...] = self.acc.T


def test_gpu_report_warp_rows_with_warp_on_the_cpu(capsys, monkeypatch):
    monkeypatch.setattr(gpu_report, "_suite_kernels",
                        lambda state, precision, args: {"C/D": ReferenceEngine(state), "E": ReferenceEngine(state)})
    args = gpu_report._parser().parse_args(["--sizes", "200", "--min-seconds", "0"])
    gpu_report._warp_peers(args, validate_n=64, device="cpu")
    out = capsys.readouterr().out
    checks = [line.split() for line in out.splitlines() if line.startswith("  Warp ")]
    assert len(checks) == 4 and all(c[-1] == "ok" for c in checks)
    rows = [line.split() for line in out.splitlines() if line.split()[:2] == ["Warp", "200"]]
    assert [r[2] for r in rows] == list(peers_warp.WARP_PRECISIONS) and all(len(r) == 10 for r in rows)
    for r in rows:
        assert all(float(v) > 0 for v in r[3:9])             # four rates, two ratios to Warp tile
        assert float(r[9]) <= TOLERANCE[r[2]]                # Warp against C's (here the reference)


@pytest.mark.skipif(not NO_CUDA, reason="Warp sees a CUDA device here")
def test_gpu_report_skips_the_warp_peers_without_a_cuda_device(capsys):
    args = gpu_report._parser().parse_args(["--sizes", "64"])
    gpu_report._warp_peers(args, validate_n=64)
    assert capsys.readouterr().out.strip() == "Warp peers: skipped: Warp sees no CUDA device"


@pytest.mark.parametrize("kind", ["a file", "a folder others may write"])
def test_a_default_warp_cache_that_is_no_private_folder_is_not_used(tmp_path, kind):
    """Without NBSYMPLE_WARP_CACHE, Warp's cache was `nbsymple-warp-cache` in the temp dir, one name for every
    user: a file there skipped every Warp row of `peers` with NotADirectoryError, and a folder that others may
    write (or another user's) had its compiled kernels loaded. This user's private folder is used, or one of this
    process's own; the rows are measured."""
    for name in ("nbsymple-warp-cache", f"nbsymple-warp-cache-{os.getuid()}"):
        if kind == "a file":
            (tmp_path / name).write_text("not a folder\n")
        else:
            (tmp_path / name).mkdir()
            (tmp_path / name).chmod(0o777)
    env = {k: v for k, v in os.environ.items() if k != peers_warp.WARP_CACHE_ENV}
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.instruments.peers", "--n", "64", "--repeats", "1",
                        "--only", "Warp", "--no-gpu"], cwd=REPO, env={**env, "TMPDIR": str(tmp_path)},
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "skipped" not in p.stdout + p.stderr, p.stdout + p.stderr
    assert [line.split("|")[-2].strip() for line in p.stdout.splitlines() if line.startswith("| Warp ")] == ["ok"] * 2
    held = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "nbsymple-warp-cache"
            and p.name != f"nbsymple-warp-cache-{os.getuid()}"]
    assert not held, f"Warp's kernels kept in a folder others may write: {held}"


WARP_ONLY = [sys.executable, "-m", "nbsymple_versions.instruments.peers", "--n", "64", "--repeats", "1", "--only",
             "Warp", "--no-gpu"]


def _warp_rows(cache: Path, what) -> None:
    """Run peers' Warp rows with its kernel cache in `cache`; both rows must be measured."""
    p = subprocess.run(WARP_ONLY, cwd=REPO, env={**os.environ, peers_warp.WARP_CACHE_ENV: str(cache)},
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "skipped" not in p.stdout + p.stderr, (what, p.stdout + p.stderr)
    assert [line.split("|")[-2].strip() for line in p.stdout.splitlines() if line.startswith("| Warp ")] == ["ok"] * 2
    assert peers_warp.NO_DRIVER not in p.stderr, p.stderr      # a hunt: Warp's words at every run without a GPU


@pytest.fixture(scope="module")
def warp_cache(tmp_path_factory) -> Path:
    """A kernel cache of Warp's as peers fills it, built once for the tests that damage a copy."""
    cache = tmp_path_factory.mktemp("warp") / "cache"
    _warp_rows(cache, "first")
    return cache


@pytest.mark.parametrize("damaged", [".meta", ".o"])
def test_a_damaged_entry_of_warps_kernel_cache_is_built_again(tmp_path, warp_cache, damaged):
    """An entry of Warp's kernel cache cut short (a full disk, a copy stopped: its .meta or its object file):
    every Warp row of `peers` was "skipped: Warp failed: JSONDecodeError: Unterminated string" (or "Failed to
    load CPU module"); the cache's kernels are removed and built again (`peers_warp._load`)."""
    cache = shutil.copytree(warp_cache, tmp_path / "warp")
    files = [p for p in cache.rglob(f"*{damaged}") if p.is_file()]
    assert files
    for path in files:
        path.write_bytes(path.read_bytes()[:10])
    _warp_rows(cache, damaged)


def test_the_warp_cache_named_is_the_folder_the_environment_checked(tmp_path, monkeypatch):
    """NBSYMPLE_WARP_CACHE is checked as it is written (`environment.FOLDERS`: blanks alone refused, a
    name that ends in a blank taken whole, as numba and matplotlib take theirs); Warp's cache goes to
    that folder, not to the name with its blanks stripped, which no check saw."""
    named = str(tmp_path / "cache ")
    monkeypatch.setenv(peers_warp.WARP_CACHE_ENV, named)
    assert peers_warp.warp_cache_dir() == named
