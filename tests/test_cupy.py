"""The CuPy backend without a GPU.

CuPy cannot run here (without a driver, creating any array raises), so the backend is checked
in three parts:
- its CUDA C (`gpu_pairwise/nbody.cu` and E's `gpu_full/fused.cu`) compiled as host C++ by the
  system compiler, each block of
  TILE threads run as TILE std::threads with a std::barrier for `__syncthreads` and the
  `__shared__` tile as one array per block: every kernel x precision against the float64
  reference, at N not a multiple of the tile, plain against tiled;
- `CupyPairwise` (buffers, slices, launch arguments, transfers) end to end on a stand-in for
  `cupy` whose kernels are those host-compiled ones and which checks every launch's argument
  types against the kernel's C signature;
- without CuPy or without a GPU: one sentence, and CPU users never import CuPy.
`nbsymple gpu-asm` (tests/test_gpu_asm.py) compiles the same CUDA C with NVRTC for the H200.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from nbsymple_versions.core import reference
from nbsymple_versions.core.clock import TaskClock
from nbsymple_versions.core.ics import make_cluster
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.gpu_full.fused import GALAXY
from nbsymple_versions.gpu_pairwise import cupy_cuda as cupy_backend, records as layout
from nbsymple_versions.gpu_pairwise.options import KERNEL_KINDS, entry_name
from nbsymple_versions.validation import FRAME_KPC, TOLERANCE, max_relative_error
from nbsymple_versions.versions import VersionUnavailable, get_version

REPO = Path(__file__).resolve().parents[1]
TILE = 32
KERNELS = tuple(entry_name(k) for k in KERNEL_KINDS) + tuple(entry_name(k, GALAXY.name) for k in KERNEL_KINDS)

# CUDA's names for host C++: one block runs at a time, its threads as std::threads.
PRELUDE = r"""
#include <barrier>
#include <cmath>
#include <thread>
#include <vector>
using std::fma; using std::fmin; using std::pow; using std::sqrt;
struct float4 { float x, y, z, w; };
struct dim3 { unsigned x, y, z; };
thread_local dim3 threadIdx, blockIdx;
static std::barrier<>* block_barrier;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) alignas(n)
#define __restrict__
#define __launch_bounds__(n)
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float fmaf(float a, float b, float c) { return std::fma(a, b, c); }
#include "nbody.cu"
#include "fused.cu"

// which: 0 pairwise_tiled, 1 pairwise_plain, 2 fused_tiled, 3 fused_plain
extern "C" void launch(int which, int grid, const void* pos, int npad, double eps2, double ls, double as,
                       long long start, long long stop, void* out)
{
    for (int b = 0; b < grid; ++b) {
        std::barrier<> barrier(TILE);
        block_barrier = &barrier;
        std::vector<std::thread> threads;
        for (int t = 0; t < TILE; ++t)
            threads.emplace_back([=] {
                blockIdx.x = b;
                threadIdx.x = t;
                const body* p = (const body*)pos;
                if (which == 0) pairwise_tiled(p, npad, (real)eps2, start, stop, (real*)out);
                if (which == 1) pairwise_plain(p, npad, (real)eps2, start, stop, (real*)out);
                if (which == 2) fused_tiled(p, npad, (real)eps2, ls, as, start, stop, (double*)out);
                if (which == 3) fused_plain(p, npad, (real)eps2, ls, as, start, stop, (double*)out);
            });
        for (auto& th : threads) th.join();
    }
}
"""


def compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    assert cxx, "these tests compile the CUDA C as host C++: they need a C++20 compiler (c++, g++ or clang++)"
    return cxx


@pytest.fixture(scope="module")
def host_kernels(tmp_path_factory):
    """{precision: the CUDA C module compiled for the host (ctypes), TILE = 32}."""
    out = tmp_path_factory.mktemp("cuda_c_host")
    (out / "host.cpp").write_text(PRELUDE)
    include = [f"-I{cupy_backend.resources.files(package)}"
               for package in ("nbsymple_versions.gpu_pairwise", "nbsymple_versions.gpu_full")]
    libs = {}
    for precision in PRECISIONS:
        defines = [o for o in cupy_backend.options(precision, TILE, GALAXY) if o.startswith("-D")]
        lib = out / f"nbody_{precision}.so"
        p = subprocess.run([compiler(), "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", *defines,
                            *include, str(out / "host.cpp"), "-o", str(lib)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-4000:]
        libs[precision] = ctypes.CDLL(str(lib))
        libs[precision].launch.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_double,
                                           ctypes.c_double, ctypes.c_double, ctypes.c_longlong, ctypes.c_longlong,
                                           ctypes.c_void_p]
    return libs


def run_host(lib, name, bodies, eps2, scales, start, stop, out):
    grid = -(-(stop - start) // TILE)
    ls, acc = scales or (0.0, 0.0)
    lib.launch(KERNELS.index(name), grid, bodies.ctypes.data, bodies.shape[0], float(eps2), ls, acc, start, stop,
               out.ctypes.data)


def records(state, precision):
    npad = layout.padded(state.n, TILE)
    bodies = np.empty((npad, layout.WIDTH[precision]), dtype=layout.real_type(precision))
    layout.fill_masses(bodies, state.m)
    layout.pack(state.x, bodies, precision)
    return bodies


@pytest.mark.parametrize("precision", PRECISIONS)
def test_cuda_c_kernels_match_the_reference(host_kernels, precision):
    """Every kernel at N = 97 (4 blocks of 32, the last part padding), all targets and a slice."""
    state = make_cluster(97, seed=3, radius_kpc=FRAME_KPC[precision])
    bodies, eps2 = records(state, precision), layout.real_type(precision)(state.eps ** 2)
    ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    galaxy = reference.galactic_acceleration(state.positions, state.units)
    scales = (state.units.galaxy_length_scale, state.units.galaxy_acceleration_scale)
    results = {}
    for name in KERNELS:
        fused = name.startswith("fused")
        out = np.full((3, state.n), np.nan, dtype=np.float64 if fused else bodies.dtype)
        run_host(host_kernels[precision], name, bodies, eps2, scales if fused else (), 0, state.n, out)
        acc = out.T - (galaxy if fused else 0)
        err = max_relative_error(acc, ref)
        print(precision, name, f"{err:.2e}")
        assert err <= TOLERANCE[precision], (name, err)
        results[name] = out
        part = np.full((3, 40), np.nan, dtype=out.dtype)            # targets [50, 90): a slice of E
        run_host(host_kernels[precision], name, bodies, eps2, scales if fused else (), 50, 90, part)
        np.testing.assert_array_equal(part, out[:, 50:90])
    np.testing.assert_array_equal(results["pairwise_plain"], results["pairwise_tiled"])
    np.testing.assert_array_equal(results["fused_plain"], results["fused_tiled"])


def test_cuda_c_dsp_keeps_the_low_words(host_kernels):
    """850 cluster radii out, float32 positions lose the cluster; the double-single kernel keeps it."""
    state = make_cluster(97, seed=4, radius_kpc=FRAME_KPC["dsp"])
    ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    err = {}
    for precision in ("sp", "dsp"):
        bodies = records(state, precision)
        out = np.empty((3, state.n), dtype=np.float32)
        run_host(host_kernels[precision], "pairwise_tiled", bodies, np.float32(state.eps ** 2), (), 0, state.n, out)
        err[precision] = max_relative_error(out.T, ref)
    assert err["dsp"] <= TOLERANCE["dsp"] and err["sp"] >= 100 * err["dsp"], err


@pytest.mark.parametrize("name", [k for k in KERNELS if k.startswith("fused")])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_cuda_c_single_body_feels_just_the_galaxy(host_kernels, precision, name):
    """One body at (850.1, 1.1, 2.1), whose float32 low words are not zero: E's CUDA C kernels give
    the Galaxy's pull alone, float64's to 1e-12 (sp: its float32 position, 1e-6), as
    test_versions.py's TestE checks of the numba twin (a mutation hunt: fused.cu's dsp Galaxy of the
    high words alone passed every test, the cluster's galactic error hidden in its pairwise tolerance)."""
    from nbsymple_versions.core.ics import State
    s = State.from_arrays([[850.1, 1.1, 2.1]], [[0, 0, 0]], [1.0], eps=1e-3)
    bodies = records(s, precision)
    assert precision != "dsp" or np.all(bodies[0, 4:7] != 0)
    out = np.full((3, 1), np.nan)
    scales = (s.units.galaxy_length_scale, s.units.galaxy_acceleration_scale)
    run_host(host_kernels[precision], name, bodies, layout.real_type(precision)(s.eps ** 2), scales, 0, 1, out)
    galaxy = reference.galactic_acceleration(s.positions, s.units)
    err = max_relative_error(out.T, galaxy)
    assert err <= (1e-6 if precision == "sp" else 1e-12), (err, out.T - galaxy)


@pytest.fixture(scope="module")
def host_inverse_cube(tmp_path_factory):
    """nbody.cu's dp `inverse_cube` alone, compiled for the host as `host_kernels` compiles the kernels."""
    out = tmp_path_factory.mktemp("cuda_c_inverse_cube")
    head = PRELUDE.split('#include "nbody.cu"')[0]
    (out / "inverse_cube.cpp").write_text(head + '#include "nbody.cu"\n'
                                          'extern "C" double dp_inverse_cube(double r2) { return inverse_cube(r2); }\n')
    defines = [o for o in cupy_backend.options("dp", TILE) if o.startswith("-D")]
    lib = out / "inverse_cube.so"
    p = subprocess.run([compiler(), "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", *defines,
                        f"-I{cupy_backend.resources.files('nbsymple_versions.gpu_pairwise')}",
                        str(out / "inverse_cube.cpp"), "-o", str(lib)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    f = ctypes.CDLL(str(lib)).dp_inverse_cube
    f.argtypes, f.restype = [ctypes.c_double], ctypes.c_double
    return f


def test_cuda_c_dp_inverse_cube_is_float64_exact(host_inverse_cube):
    """nbody.cu's dp r^-3 (a float32 rsqrt seed, one third-order step with FMAs) is float64-exact over
    r^2 in 1e-30 .. 1e30, as gpu_sim_checks.py checks of the numba twin: a slip in a coefficient of the
    step leaves ~6e-15 here, inside dp's 1e-12 kernel tolerance (a mutation hunt: 1.875 as 1.75 passed)."""
    r2 = 10.0 ** np.random.default_rng(1).uniform(-30, 30, 4096)
    out = np.array([host_inverse_cube(v) for v in r2])
    err = np.abs(out / r2 ** -1.5 - 1.0).max()
    print(f"{err:.2e}")
    assert err < 1e-15, err


_PAST_THE_RECORDS = r"""
import ctypes, mmap, sys
import numpy as np
lib_path, records_path, out_path = sys.argv[1:4]
which, grid, start, stop = map(int, sys.argv[4:8])
eps2, ls, acc = map(float, sys.argv[8:11])
bodies = np.load(records_path)
page = mmap.PAGESIZE
size = -(-bodies.nbytes // page) * page
region = mmap.mmap(-1, size + page)
base = ctypes.addressof(ctypes.c_char.from_buffer(region))
mprotect = ctypes.CDLL(None, use_errno=True).mprotect
mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
assert mprotect(base + size, page, 0) == 0, ctypes.get_errno()      # PROT_NONE: the page after the records
guarded = np.frombuffer(region, bodies.dtype, bodies.size, size - bodies.nbytes).reshape(bodies.shape)
guarded[...] = bodies
out = np.full((3, stop - start), np.nan, dtype=np.float64 if which >= 2 else bodies.dtype)
lib = ctypes.CDLL(lib_path)
lib.launch.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                       ctypes.c_double, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_void_p]
lib.launch(which, grid, guarded.ctypes.data, bodies.shape[0], eps2, ls, acc, start, stop,
           out.ctypes.data)
np.save(out_path, out)
"""


@pytest.mark.parametrize("precision", PRECISIONS)
def test_cuda_c_slice_whose_block_runs_past_the_records_reads_none_past_them(host_kernels, precision, tmp_path):
    """N = 64 at tile 32, targets [40, 64): the slice's block runs threads for targets 40 .. 71, past
    the 64 records; they compute on the slice's last target and write nothing. Every kernel, its
    records ending at an unreadable page (a child process, which a read past them kills), gives
    the full run's forces bit for bit (a mutation hunt: nbody.cu's KERNEL_HEAD loading target i
    itself, past the records, passed every test; the numba twin's is
    gpu_sim_checks.py's test_a_slice_whose_block_runs_past_the_records_agrees)."""
    state = make_cluster(64, seed=5, radius_kpc=FRAME_KPC[precision])
    bodies, eps2 = records(state, precision), layout.real_type(precision)(state.eps ** 2)
    assert bodies.shape[0] == 64
    np.save(tmp_path / "records.npy", bodies)
    scales = (state.units.galaxy_length_scale, state.units.galaxy_acceleration_scale)
    for which, name in enumerate(KERNELS):
        fused = name.startswith("fused")
        full = np.full((3, 64), np.nan, dtype=np.float64 if fused else bodies.dtype)
        run_host(host_kernels[precision], name, bodies, eps2, scales if fused else (), 0, 64, full)
        p = subprocess.run([sys.executable, "-c", _PAST_THE_RECORDS, host_kernels[precision]._name,
                            str(tmp_path / "records.npy"), str(tmp_path / "out.npy"),
                            *map(str, (which, -(-24 // TILE), 40, 64)),
                            *map(repr, (float(eps2), *(scales if fused else (0.0, 0.0))))],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, (name, p.returncode, p.stderr[-2000:])    # -11: SIGSEGV, a read past them
        np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), full[:, 40:64], err_msg=name)


# ------------------------------------------------------------------ CupyPairwise on a stand-in for cupy

C_SIGNATURE = {   # kernel argument types after the body records, as nbody.cu declares them
    False: ("int32", "real", "int64", "int64", "out"),
    True: ("int32", "real", "float64", "float64", "int64", "int64", "out"),
}


class FakeArray(np.ndarray):
    """A 'device' array: host memory with cupy.ndarray's transfer methods."""

    def set(self, arr, stream=None):
        assert stream is not None and arr.shape == self.shape and arr.dtype == self.dtype
        self[...] = arr

    def get(self, stream=None, out=None, blocking=True):
        assert stream is not None and out is not None and out.shape == self.shape and out.dtype == self.dtype
        out[...] = self
        return out


def fake_cupy(host_kernels, devices=1, launches=None):
    """Modules `cupy` and `cupyx` with what CupyPairwise uses; kernels run on the host."""
    cupy = types.ModuleType("cupy")
    cupyx = types.ModuleType("cupyx")
    state = {"device": 0}
    launches = [] if launches is None else launches

    class Device:
        def __init__(self, i):
            assert 0 <= i < devices
            self.id = i

        def __enter__(self):
            self.previous, state["device"] = state["device"], self.id

        def __exit__(self, *exc):
            state["device"] = self.previous

    class Stream:
        def __init__(self, non_blocking=False):
            self.device, self.non_blocking = state["device"], non_blocking

        def synchronize(self):
            pass

    class RawModule:
        def __init__(self, *, code, options):
            assert code in (cupy_backend.source(), cupy_backend.source(GALAXY)) and isinstance(options, tuple)
            assert (code == cupy_backend.source(GALAXY)) == any(o.startswith("-DAS91_") for o in options)
            self.precision = {f"-DPRECISION={v}": k for k, v in cupy_backend._PRECISION_CODE.items()}[options[1]]
            assert f"-DTILE={TILE}" in options

        def get_function(self, name):
            lib, precision, loaded_on = host_kernels[self.precision], self.precision, state["device"]
            real = layout.real_type(precision)

            def kernel(grid, block, args, stream=None):
                assert stream is not None and stream.device == loaded_on == state["device"]
                assert block == (TILE,) and len(grid) == 1
                fused = name.startswith("fused")
                bodies, rest = args[0], args[1:]
                assert isinstance(bodies, FakeArray) and bodies.dtype == real and bodies.flags.c_contiguous
                assert len(rest) == len(C_SIGNATURE[fused])
                for value, kind in zip(rest, C_SIGNATURE[fused]):
                    want = {"real": real, "out": None}.get(kind, kind)
                    if kind == "out":
                        assert isinstance(value, FakeArray) and value.dtype == (np.float64 if fused else real)
                    else:
                        assert type(value) is np.dtype(want).type, (kind, type(value))
                start, stop, out = rest[-3], rest[-2], rest[-1]
                assert out.shape == (3, stop - start) and grid[0] == -(-(stop - start) // TILE)
                launches.append((name, state["device"], int(start), int(stop)))
                run_host(lib, name, bodies.reshape(int(rest[0]), -1), rest[1],   # the flat records, npad rows
                         tuple(map(float, rest[2:4])) if fused else (), int(start), int(stop), out)
            return kernel

    def array(shape, dtype):
        assert state["device"] is not None
        return np.zeros(shape, dtype=dtype).view(FakeArray)

    cupy.is_available = lambda: True
    cupy.RawModule = RawModule
    cupy.zeros = cupy.empty = array
    cupy.cuda = types.SimpleNamespace(Device=Device, Stream=Stream, runtime=types.SimpleNamespace(
        getDeviceCount=lambda: devices, getDeviceProperties=lambda i: {"name": b"Fake GPU %d" % i}))
    cupyx.empty_pinned = lambda shape, dtype: np.empty(shape, dtype=dtype)
    return cupy, cupyx


@pytest.fixture
def with_fake_cupy(host_kernels, monkeypatch):
    def install(devices=1, launches=None):
        cupy, cupyx = fake_cupy(host_kernels, devices, launches)
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        monkeypatch.setitem(sys.modules, "cupyx", cupyx)
        monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
        cupy_backend.module.cache_clear()
    yield install
    cupy_backend.module.cache_clear()


@pytest.mark.parametrize("kernel", ["tiled", "plain"])
@pytest.mark.parametrize("letter", ["C", "D", "E"])
def test_versions_on_the_cupy_backend(with_fake_cupy, letter, kernel):
    launches = []
    with_fake_cupy(devices=2, launches=launches)
    options = dict(tile=TILE, backend="cupy", kernel=kernel, **({"devices": 3} if letter == "E" else {}))
    for precision in PRECISIONS:
        state = make_cluster(97, seed=8, radius_kpc=FRAME_KPC[precision])
        forces = get_version(letter).pipeline(state, precision, **options)
        backend = forces.backend
        assert backend.backend == "cupy" and backend.kernel_kind == kernel
        buffers = [id(backend.host_bodies)] + [id(b) for s in backend.slices for b in (s.bodies, s.out, s.host_out)]
        out = np.full_like(state.x, np.nan)
        for _ in range(2):                               # buffers are reused, results repeat
            forces.pairwise(state.x, out)
        acc = out.T - (reference.galactic_acceleration(state.positions, state.units) if letter == "E" else 0)
        err = max_relative_error(acc, reference.pairwise_acceleration(state.positions, state.m, state.eps))
        assert err <= TOLERANCE[precision], (precision, err)
        assert buffers == [id(backend.host_bodies)] + [id(b) for s in backend.slices
                                                        for b in (s.bodies, s.out, s.host_out)]
    name = ("fused_" if letter == "E" else "pairwise_") + kernel
    assert {n for n, *_ in launches} == {name}
    if letter == "E":        # 3 slices round-robin over 2 devices, all targets once
        assert [(d, a, b) for _, d, a, b in launches[:3]] == [(0, 0, 32), (1, 32, 64), (0, 64, 97)]
        assert backend.device == "Fake GPU 0 + Fake GPU 1 (3 slices on 2 devices)"
    else:
        assert {(d, a, b) for _, d, a, b in launches} == {(0, 0, 97)} and backend.device == "Fake GPU 0"


def test_cupy_backend_clock_tasks(with_fake_cupy):
    with_fake_cupy()
    state = make_cluster(40, seed=2)
    clock = TaskClock()
    backend = get_version("C").pipeline(state, "sp", clock, tile=TILE, backend="cupy").backend
    out = np.empty_like(state.x)
    backend.forces(state.x, out, clock)
    assert clock.calls["transfer"] == 2 and clock.calls["pairwise"] == 1
    assert backend.npad == 64 and backend.host_bodies.shape == (64, 4)
    assert np.all(backend.host_bodies[40:] == 0)                     # padding: zero mass at the origin


# ------------------------------------------------------------------ without CuPy, without a GPU

def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "CUDA_VISIBLE_DEVICES")}
    env.update(extra)
    return env


_NO_CUPY = r"""
import json, sys
sys.modules["cupy"] = None                   # as if CuPy were not installed
from nbsymple_versions.core.ics import make_cluster
from nbsymple_versions.versions import VersionUnavailable, get_version
from nbsymple_versions.gpu_pairwise import cupy_cuda as cupy_backend
out = {"available": get_version("D").available("cupy")}
try:
    get_version("D").pipeline(make_cluster(8, seed=1), "dp", backend="cupy")
except VersionUnavailable as e:
    out["error"] = str(e)
print(json.dumps(out))
"""


def test_without_cupy_one_sentence():
    p = subprocess.run([sys.executable, "-c", _NO_CUPY], cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["available"] == [False, cupy_backend.NOT_INSTALLED]
    assert out["error"] == f"version D is not available: {cupy_backend.NOT_INSTALLED}"


def test_without_a_gpu_one_sentence(monkeypatch):
    cupy = types.ModuleType("cupy")
    cupy.is_available = lambda: False
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    assert cupy_backend.availability() == (False, cupy_backend.UNAVAILABLE)
    with pytest.raises(VersionUnavailable, match=f"^version E is not available: {cupy_backend.UNAVAILABLE}$"):
        get_version("E").pipeline(make_cluster(8, seed=1), "dp", backend="cupy")
    with pytest.raises(RuntimeError, match=cupy_backend.UNAVAILABLE):
        cupy_backend.CupyPairwise(np.ones(4), 0.1, "sp")


def test_cli_asks_for_cupy_without_a_gpu():
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "run", "--version", "C", "--n", "64",
                        "--steps", "1", "--gpu-backend", "cupy"], cwd=REPO, env=_env(CUDA_VISIBLE_DEVICES=""),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nbsymple run: version C is not available: the CuPy backend "), lines


_CPU_IMPORTS = r"""
import json, sys
from nbsymple_versions import cli, versions
from nbsymple_versions.gpu_pairwise import cupy_cuda as cupy_backend, records as gpu_layout
from nbsymple_versions.simulation import Simulation
from nbsymple_versions.core.ics import make_cluster
Simulation(make_cluster(32, seed=1), "A", diagnostics=False).step(1)
cupy_backend.options("sp"), cupy_backend.source()
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("cupy", "cupyx", "cupy_backends"))))
"""


def test_cpu_users_never_import_cupy():
    p = subprocess.run([sys.executable, "-c", _CPU_IMPORTS], cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == []


def test_options_and_source():
    """C's source and E's ship as package data (E's follows C's in E's module); E's options carry
    the Galaxy's constants from core/galaxy.py, and numba-cuda's fastmath is for sp only."""
    from nbsymple_versions.core import galaxy
    c, e = cupy_backend.source(), cupy_backend.source(GALAXY)
    assert e.startswith(c) and 'extern "C" __global__' in c and "as91(" in e and "as91(" not in c
    assert all(f"PAIRWISE_KERNEL({k})" in c and f"FUSED_KERNEL({k})" in e for k in KERNEL_KINDS)
    for precision, code in (("sp", 0), ("dp", 1), ("dsp", 2)):
        opts = cupy_backend.options(precision, 128, GALAXY)
        assert f"-DPRECISION={code}" in opts and "-DTILE=128" in opts
        assert f"-DAS91_M1=({galaxy.M1!r})" in opts and f"-DAS91_HALO_GAMMA=({galaxy.HALO_GAMMA!r})" in opts
        assert not any(o.startswith("-DAS91_") for o in cupy_backend.options(precision, 128))
        assert ("-ftz=true" in opts) == (precision == "sp")
    with pytest.raises(ValueError, match="power of two"):
        cupy_backend.options("sp", 48)
