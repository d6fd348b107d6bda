"""GPU versions C, D, E under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1).

The checks every version passes (agreement with the reference at an awkward N, a single
body, dsp vs sp far out, steps vs version A, the clock, refused options) are the battery of
`tests/test_versions.py`, which runs C, D, E in the simulator itself. Here: the kernels'
internals (tile boundaries, padding, the default tile, E's slices, buffers, shared memory).

Not collected by the normal test run (the name does not start with test_): `tests/test_gpu.py`
runs it with pytest in a child process where the variable is set before numba.cuda is imported,
and keeps its own process free of the simulator so that its PTX tests compile real kernels.
Run it alone with `NUMBA_ENABLE_CUDASIM=1 python -m pytest tests/gpu_sim_checks.py`.
The simulator costs ~10 us per pair interaction (padded targets x padded sources), so N <= 255
and mostly TILE = 32 (where the point is padding); TILE = 256 runs at N = 255.
"""
import time

import numpy as np
import pytest

from numba import cuda       # a global: the simulator gives kernels its own `cuda`
from numba.cuda.core import config

from nbsymple_versions.core import reference
from nbsymple_versions.core.clock import TaskClock
from nbsymple_versions.core.ics import State, default_softening
from nbsymple_versions.core.units import Units
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.gpu_full.fused import GALAXY
from nbsymple_versions.gpu_pairwise import numba_cuda as kc, records as layout
from nbsymple_versions.validation import FRAME_KPC, TOLERANCE, max_relative_error
from nbsymple_versions.versions import GPU_LETTERS, get_version

if not config.ENABLE_CUDASIM:    # not a test module of its own: tests/test_gpu.py runs it
    raise ImportError("tests/gpu_sim_checks.py runs under NUMBA_ENABLE_CUDASIM=1 only "
                      "(tests/test_gpu.py starts it so)")

KINDS = ("pairwise", "fused")      # C/D kernel, E kernel (pairwise + galactic)
UNITS = Units()


def random_state(rng, n, precision):
    """n bodies with random masses uniform in the unit ball, at the precision's frame
    (850 cluster radii out for dp and dsp, the origin for sp; as in validation.py)."""
    d = rng.normal(size=(3, n))
    x = d / np.linalg.norm(d, axis=0) * rng.random(n) ** (1.0 / 3.0)
    frame = FRAME_KPC[precision]
    if frame is not None:
        x[0] += frame * UNITS.kpc
    m = rng.uniform(0.5, 1.5, n)
    return State(x, np.zeros((3, n)), m / m.sum(), default_softening(max(n, 2)), 0.0, UNITS)


def gpu_forces(state, precision, kind, **options):
    backend = kc.CudaPairwise(state.m, state.eps, precision, galaxy=GALAXY if kind == "fused" else None,
                              units=state.units, **options)
    out = np.full_like(state.x, np.nan)
    backend.forces(state.x, out, TaskClock())
    acc = out.T
    if kind == "fused":
        acc = acc - reference.galactic_acceleration(state.positions, state.units)
    return acc


def given(state, precision):
    """The positions (N, 3) the kernels are given, in float64: sp rounds them to float32, which
    alone moves a close pair's force by up to ~1e-7 / r of itself, sp's 1e-4 tolerance at
    r = 4e-4 (about one draw in 10^6 at N = 255 failed against the positions themselves; with a
    pair put within the softening, 150 draws came to 0.96 of it, and to 0.014 against these).
    dsp's two words and dp keep them."""
    return state.positions.astype(np.float32).astype(np.float64) if precision == "sp" else state.positions


def check_against_reference(state, precision, kind, **options):
    acc = gpu_forces(state, precision, kind, **options)
    ref = reference.pairwise_acceleration(given(state, precision), state.m, state.eps)
    assert np.isfinite(acc).all()
    err = max_relative_error(acc, ref)
    assert err <= TOLERANCE[precision], f"{precision} {kind}: max relative error {err:.3e}"
    return err


@pytest.mark.parametrize("n", [7, 63, 64, 65])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_kernel_matches_reference(rng, precision, kind, n):
    """Both kernels at tile 32 below one tile and around a tile boundary (2 tiles - 1, + 0, + 1:
    two or three blocks, each summing two or three source tiles, the last part padding). N = 255
    to 257 (8 tiles) took 9x as long in the simulator and checks nothing more; the default tile's
    padding is `test_default_tile_256_pads_255`'s."""
    check_against_reference(random_state(rng, n, precision), precision, kind, tile=32)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_shared_tile_survives_thread_switches(rng, monkeypatch, precision):
    """The simulator creates a block's shared array on first request; a thread switch in the
    middle (forced here by a slow np.empty) must not give two threads two arrays. Unlocked,
    this reads uninitialised memory and is off by many orders of magnitude."""
    empty = np.empty
    monkeypatch.setattr(np, "empty", lambda *args, **kwargs: (time.sleep(1e-3), empty(*args, **kwargs))[1])
    check_against_reference(random_state(rng, 64, precision), precision, "pairwise", tile=32)


def test_simulated_blocks_meet_at_barriers_without_a_poll():
    """`simulator.wait_at_barriers`: the threads of two blocks of 64 pass values round through
    shared memory across six barriers; a thread that ends early holds no one at a later
    barrier; a thread that raises (thread 5 of block 1) ends the launch with its exception, both
    named, while the others wait; and the launching thread sleeps while its block works: threads
    that sleep 0.3 s cost it under 0.1 s of its own CPU time (`thread_time`, not wall time: 4-9 ms
    measured, beside three CPU-bound processes too; numba-cuda's poll spends 0.34 s)."""
    from nbsymple_versions.gpu_pairwise import simulator
    simulator.prepare()

    @cuda.jit
    def rotate(out, rounds):
        tile = cuda.shared.array(64, np.float64)
        i = cuda.threadIdx.x
        value = float(i)
        for _ in range(rounds):
            tile[i] = value
            cuda.syncthreads()
            value = tile[(i + 1) % 64]
            cuda.syncthreads()
        out[cuda.blockIdx.x * 64 + i] = value

    out = np.zeros(128)
    rotate[2, 64](out, 3)
    np.testing.assert_array_equal(out, np.tile((np.arange(64) + 3) % 64, 2))

    @cuda.jit
    def early(out):
        i = cuda.threadIdx.x
        if i == 0:
            out[0] = -1.0
            return
        cuda.syncthreads()
        out[i] = i

    out = np.zeros(32)
    early[1, 32](out)
    np.testing.assert_array_equal(out, [-1.0, *range(1, 32)])

    @cuda.jit
    def fails(out):
        i = cuda.threadIdx.x
        cuda.syncthreads()
        out[i + (100 if i == 5 and cuda.blockIdx.x == 1 else 0)] = 1.0     # past the end
        cuda.syncthreads()

    with pytest.raises(IndexError, match=r"tid=\[5, 0, 0\] ctaid=\[1, 0, 0\]"):
        fails[2, 32](np.zeros(32))

    @cuda.jit
    def nap(out):
        time.sleep(0.3)                             # the simulator runs this as Python
        cuda.syncthreads()
        out[cuda.threadIdx.x] = 1.0

    out = np.zeros(32)
    started = time.thread_time()
    nap[1, 32](out)
    assert out.all() and time.thread_time() - started < 0.1, time.thread_time() - started


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_default_tile_256_pads_255(rng, precision, kind):
    """The default tile (256) with one padding body: one block, one tile. Crossing blocks and
    tiles is the same code at every tile, checked at tile 32 above; N = 257 (two blocks of 256
    threads, two tiles each: 4x the simulated interactions) took 20 s of the simulator's 40."""
    check_against_reference(random_state(rng, 255, precision), precision, kind)   # tile=256 default


@pytest.mark.parametrize("precision", PRECISIONS)
def test_padding_contributes_nothing(rng, precision):
    """N = 40: 24, 24 and 88 zero-mass padding bodies for tiles 32, 64, 128 give bit-identical
    accelerations (the sum over real sources runs in the same order, padding adds exact zeros),
    even with the padding moved onto a real body; nothing is written for padded targets."""
    state = random_state(rng, 40, precision)
    results = [gpu_forces(state, precision, "pairwise", tile=t) for t in (32, 64, 128)]
    backend = kc.CudaPairwise(state.m, state.eps, precision, tile=32)
    assert backend.npad == 64 and all(s.out.shape == (3, s.stop - s.start) for s in backend.slices)
    records = backend.host_bodies
    assert records.shape == (64, layout.WIDTH[precision]) and not records[40:].any()   # zero mass, origin
    layout.pack(state.x, records, precision)
    position = [0, 1, 2] + ([4, 5, 6] if precision == "dsp" else [])     # the mass is column 3
    records[40:, position] = records[0, position]          # padding sits on body 0 (finite, r = 0)
    assert records[40:, position].any() and not records[40:, 3].any()
    out = np.full_like(state.x, np.nan)
    backend.forces(state.x, out, TaskClock())
    for acc in results[1:] + [out.T]:
        np.testing.assert_array_equal(acc, results[0])
    check_against_reference(state, precision, "pairwise", tile=32)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_e_slices_agree(rng, precision):
    """E with 1, 2, 3 slices (round-robin over the simulator's one device) gives identical results.
    N = 97 (4 tiles of 32, the last padded; at 3 devices slices of 1, 1 and 2 tiles, the last
    ending in padding) is all the check needs; N = 257 took 7x as long in the simulator."""
    state = random_state(rng, 97, precision)
    out = {}
    for k in (1, 2, 3):
        backend = kc.CudaPairwise(state.m, state.eps, precision, tile=32, devices=k, galaxy=GALAXY,
                                  units=state.units)
        assert len(backend.slices) == k and backend.slices[-1].stop == 97
        assert k == 1 or f"{k} slices" in backend.device
        out[k] = np.full_like(state.x, np.nan)
        backend.forces(state.x, out[k], TaskClock())
    np.testing.assert_array_equal(out[1], out[2])
    np.testing.assert_array_equal(out[1], out[3])


@pytest.mark.parametrize("galactic", [False, True], ids=["pairwise", "fused"])
def test_target_range_agrees_with_all_targets(rng, galactic):
    """An engine built for targets [start, stop) on one GPU (an MPI rank's share) computes exactly
    the full engine's accelerations there, against all N sources, and writes nothing else; an
    empty range has no slice."""
    state = random_state(rng, 97, "dp")
    galaxy = GALAXY if galactic else None
    full = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, galaxy=galaxy, units=state.units)
    part = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, galaxy=galaxy, units=state.units,
                           targets=(40, 90), gpus=[0])
    a, b = np.full_like(state.x, np.nan), np.full_like(state.x, np.nan)
    full.forces(state.x, a, TaskClock())
    part.forces(state.x, b, TaskClock())
    assert [(s.start, s.stop, s.gpu) for s in part.slices] == [(40, 90, 0)] and part.device == "CUDA simulator"
    np.testing.assert_array_equal(b[:, 40:90], a[:, 40:90])
    assert np.isnan(b[:, :40]).all() and np.isnan(b[:, 90:]).all()
    empty = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, targets=(97, 97), gpus=[0])
    assert empty.slices == [] and empty.device == "CUDA simulator"


def test_e_more_slices_than_bodies(rng):
    state = random_state(rng, 2, "dp")
    two = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, devices=3, galaxy=GALAXY, units=state.units)
    one = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, devices=1, galaxy=GALAXY, units=state.units)
    a, b = np.empty_like(state.x), np.empty_like(state.x)
    two.forces(state.x, a, TaskClock())
    one.forces(state.x, b, TaskClock())
    assert len(two.slices) == 2          # one slice would be empty: never launched
    assert two.device == "CUDA simulator (2 slices on 1 device)"     # those that run (it said 3: a hunt)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_a_slice_whose_block_runs_past_the_records_agrees(rng, kind):
    """N = 64 at tile 32 in 3 slices (21, 21, 22 targets): the last slice's block runs threads for
    targets 42 .. 73, past the 64 records; they compute on the slice's last target and write
    nothing, and the forces are one slice's bit for bit (a mutation hunt: C's kernel reading
    target i itself, past the records, passed every test; E's had one)."""
    state = random_state(rng, 64, "dp")
    galaxy = GALAXY if kind == "fused" else None
    out = {}
    for k in (1, 3):
        backend = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, devices=k, galaxy=galaxy, units=state.units)
        assert [s.stop - s.start for s in backend.slices] == ([64] if k == 1 else [21, 21, 22])
        out[k] = np.full_like(state.x, np.nan)
        backend.forces(state.x, out[k], TaskClock())
    np.testing.assert_array_equal(out[3], out[1])


@pytest.mark.parametrize("precision", ["sp", "dsp"])
def test_light_bodies_at_the_least_softening_give_finite_forces(rng, precision):
    """Bodies of mass 1/16 at a softening 2 % above the edge that `least_softening(precision, 1/16)`
    keeps 0.1 % away from (its value over 1.001): the kernels take r^-3 at r = eps in float32
    before the mass multiplies it, so the least softening of light bodies is that of a mass of 1
    (1.43e-13), and C's forces are finite there (a mutation hunt: a bound scaled down by m^(1/3)
    passed every test, the CPU kernels' fastmath multiplying by m first)."""
    from nbsymple_versions.simulation import least_softening
    eps = 1.02 * least_softening(precision, 1 / 16) / 1.001
    s = random_state(rng, 16, precision)
    state = State(s.x, s.v, np.full(16, 1 / 16), eps, 0.0, UNITS)
    assert np.isfinite(gpu_forces(state, precision, "pairwise", tile=32)).all()


def test_more_bodies_than_the_kernels_32_bit_index_are_refused(rng, monkeypatch):
    """A hunt: numba's plain kernel indexes the bodies' values in 32 bits (`shl.b32` in its PTX),
    so from 2**29 bodies in dsp its sources wrapped back to body 0, in silence; CuPy's launch
    took the padded N as an int32. Refused now, for every kernel, at the limit (here made small)."""
    from nbsymple_versions.gpu_pairwise import engine
    monkeypatch.setattr(engine, "INDEX_LIMIT", 1000)
    state = random_state(rng, 100, "dsp")                 # 128 padded records of 8 values: 1024
    with pytest.raises(ValueError, match=r"N = 100 bodies are more than the GPU kernels can index \(at most 96 "
                                         r"in dsp at tile 32"):
        kc.CudaPairwise(state.m, state.eps, "dsp", tile=32, kernel="plain")
    kc.CudaPairwise(state.m[:96], state.eps, "dsp", tile=32, kernel="plain")


def test_the_index_limit_is_that_of_32_bit_unsigned_offsets():
    """The kernels index the bodies' values with 32-bit unsigned offsets: dsp's 8 values per body
    reach 536870880 bodies at tile 32 (2^32 - 1 values, whole tiles), and one more is refused
    naming that, before anything is allocated (a mutation hunt: a signed 31-bit limit, half the
    bodies, passed every test)."""
    masses = np.broadcast_to(np.float64(1e-9), (536870881,))       # N without its memory
    with pytest.raises(ValueError, match=r"N = 536870881 bodies are more than the GPU kernels can index \(at most "
                                         r"536870880 in dsp at tile 32"):
        kc.CudaPairwise(masses, 1e-3, "dsp", tile=32)


def test_each_kernel_kind_gets_its_own_kernel(rng):
    """The plain kernel (global memory) and the tiled one (shared tiles) of one precision and tile
    are two kernels, and an engine of each kind launches its own, whichever the process built
    first (a mutation hunt: kernels cached without their kind ran the first one built for both,
    in silence: the same sums in the same order, other timings and machine code on a GPU)."""
    state = random_state(rng, 40, "dp")
    kernels = {}
    for kind in ("tiled", "plain", "tiled"):
        engine = kc.CudaPairwise(state.m, state.eps, "dp", tile=32, kernel=kind)
        kernels.setdefault(kind, engine.slices[0].kernel)
        assert engine.slices[0].kernel is kernels[kind] is kc.compiled_kernel("dp", 32, kind)
    assert kernels["plain"] is not kernels["tiled"]


def test_upload_compute_download_reuse_buffers(rng):
    state = random_state(rng, 50, "dp")
    forces = get_version("D").pipeline(state, "dp", tile=32)
    backend = forces.backend
    def buffers():
        return [id(backend.host_flat)] + [id(b) for s in backend.slices for b in (s.bodies, s.out, s.host_out)]
    before = buffers()
    a, b = np.empty_like(state.x), np.empty_like(state.x)
    forces.pairwise(state.x, a)
    backend.upload(state.x)
    backend.compute()
    backend.download(b)
    np.testing.assert_array_equal(a, b)
    assert buffers() == before
    assert backend.includes_galactic is False and get_version("E").pipeline(state, "dp").backend.includes_galactic


def test_the_dp_inverse_cube_is_float64_exact():
    """C, D and E's dp r^-3 (a float32 rsqrt seed, one third-order step with FMAs) is float64-exact
    over r^2 in 1e-30 .. 1e30: a slip in a coefficient of the step leaves ~1e-14, inside dp's
    1e-12 kernel tolerance (a mutation hunt: 1.875 as 1.75 passed every test)."""
    inverse_cube = cuda.jit(device=True)(kc._inverse_cube_source(np.float64, kc._rsqrt()))

    @cuda.jit
    def kernel(r2, out):
        i = cuda.grid(1)
        if i < r2.size:
            out[i] = inverse_cube(r2[i])
    r2 = 10.0 ** np.random.default_rng(1).uniform(-30, 30, 256)
    out = np.zeros_like(r2)
    kernel[2, 128](r2, out)
    assert np.abs(out / r2 ** -1.5 - 1.0).max() < 1e-15


def test_gpu_report_smoke(capsys):
    """Every section of the report, at N = 40 (two blocks of 32, the second part padding): at
    N = 100 it took 13 s of the simulator's time."""
    from nbsymple_versions.instruments.gpu_report import main
    assert main(["--sizes", "40", "--tile", "32", "--validate-n", "40", "--steps", "1",
                 "--min-seconds", "0"]) == 0
    out = capsys.readouterr().out
    assert "CUDA simulator" in out and out.count(" ok") == len(GPU_LETTERS) * len(PRECISIONS)
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["40"]]
    assert [r[1] for r in rows] == list(PRECISIONS) and all(len(r) == 8 for r in rows)
