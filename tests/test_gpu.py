"""GPU versions C, D, E without a GPU.

- The kernels' internals: `tests/gpu_sim_checks.py` under NUMBA_ENABLE_CUDASIM=1, run here in a
  child process (the simulator is chosen when numba.cuda is imported, so this process stays
  free of it and compiles the real kernels). What every version must pass, C, D, E included,
  is the battery of `tests/test_versions.py` (its own simulator child).
- The real kernels compile to PTX for sm_90 (H200), and the float32 kernels carry no float64
  instruction: a check shown to catch a silently promoted kernel.
- Without a GPU and without the simulator, C, D, E are unavailable with one clear sentence.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.versions import GPU_LETTERS

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
UNAVAILABLE = "needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator)"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "CUDA_VISIBLE_DEVICES")}
    env.update(extra)
    return env


SIM_CHECKS = (TESTS / "gpu_sim_checks.py").relative_to(REPO).as_posix()      # a node id, from REPO
REPORT_SMOKE = f"{SIM_CHECKS}::test_gpu_report_smoke"


@pytest.mark.long
@pytest.mark.parametrize("selection", [[SIM_CHECKS, "--deselect", REPORT_SMOKE], [REPORT_SMOKE]],
                         ids=["kernels", "gpu_report"])
def test_simulator_checks(selection):
    """The kernels' internals x precision: tile boundaries (N = 7 .. 255), padding, the default
    tile, E's slices, buffers; and the GPU report's smoke run, in a second child so that the two
    run side by side under xdist. (What every version must pass is the battery of
    tests/test_versions.py, which starts its own simulator children.)"""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *selection],
                       cwd=REPO, env=_env(NUMBA_ENABLE_CUDASIM="1"), capture_output=True, text=True,
                       timeout=900)
    print(p.stdout[-3000:], p.stderr[-2000:])
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout
    assert ("1 passed" if selection == [REPORT_SMOKE] else "1 deselected") in p.stdout, p.stdout[-500:]


# ------------------------------------------------------------------ PTX for the H200

@pytest.fixture
def kc(monkeypatch):
    """gpu_pairwise.numba_cuda, with compile_ptx able to compile kernels that call device functions."""
    from numba.cuda.core import config
    if config.ENABLE_CUDASIM:
        pytest.skip("NUMBA_ENABLE_CUDASIM is set in this process: no real compiler")
    import numba.cuda.dispatcher

    from nbsymple_versions.gpu_pairwise import numba_cuda as kc

    # Without a GPU, compiling a kernel that calls a cuda.jit(device=True) function fails: the
    # device dispatcher asks get_current_device().compute_capability, which needs a driver.
    # compile_ptx is told cc=(9, 0) anyway, so answer the same for the duration of the test.
    class H200:
        compute_capability = (9, 0)

    monkeypatch.setattr(numba.cuda.dispatcher, "get_current_device", lambda: H200())
    return kc


def ptx_of(kc, precision, galactic=False, tile=256):
    from numba import cuda

    from nbsymple_versions.gpu_full.fused import GALAXY
    source = kc.kernel_source(precision, tile, galaxy=GALAXY if galactic else None)
    ptx, _ = cuda.compile_ptx(source.function, source.signature, cc=(9, 0), fastmath=source.fastmath)
    return ptx


_INSTRUCTION = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s", re.M)


def float64_instructions(ptx: str) -> list[str]:
    """Opcodes of the PTX instructions that touch float64: `.f64` in the opcode (add, mul, fma,
    sqrt, rcp, rsqrt, ld/st, cvt to or from f64, ...) or a float64 register (%fd) as operand."""
    found = []
    for line in ptx.splitlines():
        m = _INSTRUCTION.match(line)
        if m and (".f64" in m.group(1) or "%fd" in line):
            found.append(m.group(1))
    return found


@pytest.mark.parametrize("galactic", [False, True], ids=["pairwise", "fused"])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_kernels_compile_for_sm90(kc, precision, galactic):
    ptx = ptx_of(kc, precision, galactic)
    assert ".target sm_90" in ptx
    assert ptx.count("bar.sync") >= 2         # two barriers per tile
    assert "rsqrt.approx" in ptx              # the fast 1/sqrt (libdevice), not sqrt + div
    if precision == "sp":
        assert ".ftz.f32" in ptx              # sp alone is fastmath
    else:
        assert ".ftz.f32" not in ptx          # (float64 division seeds with rcp.approx.ftz.f64)


@pytest.mark.parametrize("tile", [32, 1024])
def test_other_tiles_compile(kc, tile):
    ptx = ptx_of(kc, "dsp", tile=tile)
    # a TILE x 8 float32 tile of body records (hi, m, lo, 0), 16-byte aligned: 128-bit shared loads
    assert re.search(rf"\.shared \.align 16 \.b8 \w+\[{8 * 4 * tile}\]", ptx)
    assert "ld.shared.v4.f32" in ptx


def test_float32_kernels_have_no_float64(kc):
    counts = {p: len(float64_instructions(ptx_of(kc, p))) for p in PRECISIONS}
    print("float64 instructions in the pairwise kernels' PTX:", counts)
    assert counts["sp"] == 0 and counts["dsp"] == 0
    assert counts["dp"] > 20                  # the check does see float64 code


def test_float64_check_catches_promotion(kc, monkeypatch):
    """The same sp kernel with one bare Python literal (1.0 / sqrt) is promoted to float64."""
    import math

    from numba import cuda

    def promoted_rsqrt(r2):
        return 1.0 / math.sqrt(r2)

    monkeypatch.setattr(kc, "_rsqrt", lambda: cuda.jit(device=True)(promoted_rsqrt))
    monkeypatch.setattr(kc, "_device_functions", kc._device_functions.__wrapped__)   # built anew, not the cached
    found = float64_instructions(ptx_of(kc, "sp"))
    print(len(found), sorted(set(found)))
    assert len(found) > 5 and any(op.startswith("cvt") for op in found)


def test_dsp_keeps_its_order(kc):
    """dsp is compiled without fastmath (no reassociation): per pair, six float32 subtractions
    (hi and lo differences), never folded away."""
    ptx = ptx_of(kc, "dsp")
    pairs = len(re.findall(r"^\s*rsqrt\.approx\.f32", ptx, re.M))    # one per pair (the loop is unrolled)
    subs = len(re.findall(r"^\s*sub\.f32", ptx, re.M))
    assert pairs >= 1 and subs == 6 * pairs   # reassociated, (hi_j + lo_j) - (hi_i + lo_i) has 3


# ------------------------------------------------------------------ no GPU, no simulator

_NO_GPU_SCRIPT = r"""
import json, sys
from nbsymple_versions.versions import GPU_LETTERS, VersionUnavailable, all_versions, get_version
from nbsymple_versions.core.ics import make_cluster
versions = all_versions()
result = {"numba_cuda_imported": "numba.cuda" in sys.modules, "errors": {}, "available": {}}
for letter in GPU_LETTERS:
    result["available"][letter] = get_version(letter).available()
    try:
        get_version(letter).pipeline(make_cluster(16, seed=1), "dp")
        result["errors"][letter] = None
    except VersionUnavailable as e:
        result["errors"][letter] = str(e)
print(json.dumps(result))
"""


def test_unavailable_without_gpu():
    p = subprocess.run([sys.executable, "-c", _NO_GPU_SCRIPT], cwd=REPO, env=_env(CUDA_VISIBLE_DEVICES=""),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["numba_cuda_imported"] is False          # importing the versions never loads numba-cuda
    assert sorted(out["available"]) == sorted(GPU_LETTERS)
    for letter in GPU_LETTERS:
        assert out["available"][letter] == [False, UNAVAILABLE]
        assert out["errors"][letter] == f"version {letter} is not available: {UNAVAILABLE}"


_DRIVER_SCRIPT = r"""
import json, sys
from nbsymple_versions.gpu_pairwise import backends
from nbsymple_versions.core.ranks import ONE_RANK
from nbsymple_versions.mpi.pipeline import default_node_version
if len(sys.argv) > 1:
    backends.DRIVER_LIBRARIES = tuple(sys.argv[1:])
from nbsymple_versions.instruments import provenance
no_driver = backends.no_driver()
node = default_node_version(ONE_RANK)  # what each rank of F asks at its start
gpus, driver = provenance.gpus(), provenance.cuda_driver()      # what `info` and machine names ask
print(json.dumps({"no_driver": no_driver, "node": node, "gpus": gpus, "driver": driver,
                  "numba_cuda_imported": "numba.cuda" in sys.modules}))
"""


@pytest.mark.parametrize("libraries", [[], ["no-such-libcuda.so"], ["libc.so.6"]], ids=["numba-cuda's", "none", "one"])
def test_no_cuda_driver_means_no_gpu_without_importing_numba_cuda(libraries):
    """Where no CUDA driver library loads (the names numba-cuda tries, whose answer must agree
    with numba-cuda's own driver search; here also none, or a library that loads in its place),
    "no GPU" is answered without importing numba-cuda (0.3 s at every start of F, on every rank,
    and of `info`); where one loads, numba-cuda decides.
    F's node engine is B either way on a machine without a GPU, E in the simulator."""
    for env, node in (({}, None), ({"NUMBA_ENABLE_CUDASIM": "1"}, "E")):
        p = subprocess.run([sys.executable, "-c", _DRIVER_SCRIPT, *libraries], cwd=REPO,
                           env={**_env(CUDA_VISIBLE_DEVICES=""), **env}, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)
        loads = libraries == ["libc.so.6"] or (libraries == [] and _loads_a_driver())
        assert out["no_driver"] is (not loads and not env), out
        assert out["numba_cuda_imported"] is not out["no_driver"], out
        assert out["node"] == (node or "B") and out["driver"] is None, out
        if out["no_driver"]:
            assert out["gpus"] == [[], "none (no CUDA driver library loads)"], out


def _loads_a_driver() -> bool:
    """numba-cuda's own answer: does its driver search find a CUDA driver library here?"""
    from numba.cuda.cudadrv.driver import find_driver
    try:
        find_driver()
    except Exception:       # noqa: BLE001 - not found, or found and not loadable
        return False
    return True


def test_cli_says_one_line_without_gpu():
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "run", "--version", "C", "--n", "64",
                        "--steps", "1"], cwd=REPO, env=_env(CUDA_VISIBLE_DEVICES=""), capture_output=True,
                       text=True, timeout=300)
    assert p.returncode != 0
    assert p.stderr.strip().splitlines() == [f"nbsymple run: version C is not available: {UNAVAILABLE}"]


def test_gpu_report_without_gpu():
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.instruments.gpu_report", "--sizes", "64"], cwd=REPO,
                       env=_env(CUDA_VISIBLE_DEVICES=""), capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and UNAVAILABLE in p.stderr and "Traceback" not in p.stderr     # as `check` says it


def test_a_numba_cuda_that_cannot_compile_beside_this_numpy_is_a_reason(monkeypatch, tmp_path):
    """On the H200's image (numba-cuda 0.30 beside NumPy 2.5), importing numba-cuda and seeing the
    GPU worked, and the first kernel's compilation ended `check --gpu-report` in a traceback:
    numba-cuda types `np.row_stack` when it loads its compiler, and NumPy 2.5 has none. The numba
    backend now loads that module when it asks for the GPU, and a failure is the reason it is
    unavailable, naming NumPy's version and the CuPy backend. Here the module loads."""
    from nbsymple_versions.gpu_pairwise import numba_cuda
    monkeypatch.setattr(numba_cuda, "simulator", lambda: False)
    monkeypatch.setattr(numba_cuda.cuda, "is_available", lambda: True)
    assert numba_cuda.availability() == (True, "")           # COMPILER_MODULE is numba-cuda's, and loads
    (tmp_path / "broken_compiler.py").write_text("raise AttributeError(\"module 'numpy' has no attribute "
                                                 "'row_stack'\")\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(numba_cuda, "COMPILER_MODULE", "broken_compiler")
    ok, reason = numba_cuda.availability()
    assert not ok and "row_stack" in reason and numba_cuda.np.__version__ in reason and "--gpu-backend cupy" in reason


@pytest.mark.parametrize("prefix", ["", "\x1b[1m"], ids=["plain", "bold"])
def test_the_occupancy_warning_of_a_small_grid_is_quiet(prefix):
    """A validation at N = 2048 launches 8 blocks of 256, and numba-cuda warned about occupancy at
    every launch of the H200's report, its message in a terminal's bold code, which the filter,
    anchored at the message's start, did not match. Other performance warnings still show."""
    import warnings
    from numba.cuda.core.errors import NumbaPerformanceWarning
    from nbsymple_versions.gpu_pairwise import numba_cuda
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        numba_cuda.quiet_occupancy_warnings()
        warnings.warn(NumbaPerformanceWarning(f"{prefix}Grid size 8 will likely result in GPU under-utilization "
                                              "due to low occupancy.\x1b[0m"))
        warnings.warn(NumbaPerformanceWarning("another performance warning"))
    assert [str(w.message) for w in seen] == ["another performance warning"]
