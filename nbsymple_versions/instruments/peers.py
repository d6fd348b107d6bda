"""Side-by-side pairwise-force throughput: this suite's versions (A, B; on a GPU also C, D, E) against peer codes.

    python -m nbsymple_versions.instruments.peers              # N = 4096 and 16384, one Markdown table
    python -m nbsymple_versions.instruments.peers --n 1024 --repeats 3

Every candidate computes the softened mutual accelerations of the same bodies (same N,
masses, softening, G = 1): a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2).

- `A`, `B` (sp, dp, dsp): this suite's force pipelines, as the integrator calls them
  (including the float32 / double-single conversion of positions).
- `NumPy` (dp): the chunked, vectorised float64 reference (`core/reference.py`); the
  table's ratios are relative to it.
- `REBOUND` (dp): `gravity="basic"`, Plummer `softening`, one `leapfrog` step per gravity
  evaluation (so its time includes REBOUND's O(N) drift and kick). REBOUND uses Newton's
  third law and evaluates each pair once, so it gets two rows: its wall-time rate in N^2
  interactions per second (comparable with every other row) and its rate in pairs actually
  evaluated, N (N - 1) / 2 per second.
- `Warp` (sp, dp): NVIDIA Warp on the CPU, its plain kernel (`peers_warp.py`: one thread per
  target). Its kernel cache goes to a temporary folder, never into the repo.

On a GPU machine (where Warp sees a CUDA device; `--gpu` / `--no-gpu` decide otherwise) the GPU
field joins on the same bodies: this suite's `C`, `D`, `E` (sp, dp, dsp; pairwise evaluations as
the integrator calls them, transfers included; E's first, checked call has the Galaxy its kernel
adds taken off) and `Warp-GPU-tile`, `Warp-GPU-plain` (sp, dp): Warp's tile N-body kernel of its
own example and a plain Warp kernel (`peers_warp.py`), positions up and accelerations down
included, synchronised before the clock is read.

Peers are optional: a missing one gives a row "skipped: <reason>". Every candidate's first
(warm-up) result is compared with the float64 reference on the very input it is then timed
on, with the suite's tolerance for its precision (`validation.TOLERANCE`); one that
disagrees gives a row "disagrees: ..." and is not timed. Timing is round-robin over the
candidates (one call each per round) so that a noisy machine slows them alike; a rate is
interactions per call over the median call time.

After the table (`--no-bound` leaves it out; x86 only): version A's rows against the pipe bound
`nbsymple cpu-asm` predicts for this CPU from costs measured on it (`cpu_asm.replay`: the hot
loop's instructions replayed without their dependencies), in core cycles per interaction: the
measured ones are the core clock (`cpu_asm.frequency`, measured in the same run) over A's rate,
and the share of the bound is the predicted cycles over the measured. Beside them, the loop as
compiled replayed in L1, which tells latency (the loop's own chains) from what lies outside the
loop's instructions; no share is printed from a bound that A beats. A's rates are wall-time
rates, so the share is only a fair figure on a quiet machine (the section says when the load
exceeded the cores). Where B ran on OpenMP threads bound to no CPU, a line says so (`binding_note`).
"""
import argparse
import importlib.util
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from ..arguments import Parser, seed_argument, whole_number_argument
from ..core import reference
from ..core.ics import make_cluster
from ..core.vocabulary import PRECISIONS
from ..core.work import WorkRefused, check_time, memory_problem
from ..entry import stood_still
from ..gpu_pairwise.simulator import cuda_simulator
from ..validation import TOLERANCE, max_relative_error
from ..versions import CPU_LETTERS, GPU_LETTERS, VersionUnavailable, get_version
from .provenance import machine_line, threading as numba_threading

DEFAULT_NS = (4096, 16384)
DEFAULT_REPEATS = 5
STATUS_OK = "ok"


def full_count(n: int) -> float:
    """Interactions per evaluation counted as every ordered pair (the suite's convention)."""
    return float(n) * float(n)


def pair_count(n: int) -> float:
    """Pairs a third-law code evaluates: N (N - 1) / 2."""
    return float(n) * float(n - 1) / 2.0


@dataclass
class Candidate:
    """One implementation in one precision.

    `build(state)` prepares it for `state` (compiles, allocates) and returns `run()`, which
    evaluates the accelerations once and returns them as an (N, 3) float64 array.
    `availability()` returns (available, reason if not). `counts` lists the rows the
    candidate gives: (label suffix, interactions per evaluation as a function of N)."""

    name: str
    precision: str
    build: Callable
    availability: Callable = lambda: (True, "")
    counts: tuple = (("", full_count),)
    note: str = ""

    @property
    def key(self) -> str:
        return f"{self.name}-{self.precision}"


@dataclass
class Row:
    candidate: str
    precision: str
    n: int
    interactions_per_second: float
    ratio_to_numpy: float
    status: str
    max_relative_error: float
    tolerance: float
    repeats: int
    seconds_per_call: float

    def as_dict(self) -> dict:
        return asdict(self)


ROW_FIELDS = tuple(Row.__dataclass_fields__)


# --- availability ------------------------------------------------------------------------

def module_availability(module: str, pip_name: str | None = None) -> tuple[bool, str]:
    """(True, "") when `module` imports, else (False, one sentence saying why)."""
    pip_name = pip_name or module
    if importlib.util.find_spec(module) is None:
        return False, f"{module} is not installed (pip install {pip_name}, or the 'peers' extra)"
    try:
        importlib.import_module(module)
    except Exception as exc:  # a broken install is a reason, not a crash
        return False, f"{module} failed to import: {type(exc).__name__}: {exc}"
    return True, ""


# --- this suite ----------------------------------------------------------------------------

def _suite_builder(letter: str, precision: str):
    def build(state):
        forces = get_version(letter).pipeline(state, precision)
        x = state.x
        out = np.zeros_like(x)
        # E's kernel adds the Galaxy: its first (checked) call takes the float64 field off, as
        # validation does; the timed calls return what the kernel gives
        galaxy = [reference.galactic_acceleration(state.positions, state.units)] \
            if forces.backend.includes_galactic else []

        def run():
            forces.pairwise(x, out)
            return out.T - galaxy.pop() if galaxy else out.T
        return run
    return build


def _shape_builder(precision: str, **shape):
    """Version A's pipeline with another shape of its pairwise loops (`serial.kernels.CpuKernels`
    with `shape`: `fused=False`, `dp_seed`, `rows`), timed beside A's so that one run says which
    this core runs faster."""
    def build(state):
        from ..serial.pairwise import cpu_pipeline
        forces, x = cpu_pipeline(_shaped_kernels(**shape), state, precision, None), state.x
        out = np.zeros_like(x)

        def run():
            forces.pairwise(x, out)
            return out.T
        return run
    return build


_SHAPES: dict = {}


def _shaped_kernels(**shape):
    """One build of each shape for the process (its kernels compile once, on first use)."""
    from ..serial.kernels import CpuKernels
    key = tuple(sorted(shape.items()))
    if key not in _SHAPES:
        _SHAPES[key] = CpuKernels(parallel=False, **shape)
    return _SHAPES[key]


def _suite_availability(letter: str):
    def availability():
        return get_version(letter).available()
    return availability


# --- NumPy -----------------------------------------------------------------------------------

def _numpy_build(state):
    pos, m, eps = state.positions, state.m, state.eps
    return lambda: reference.pairwise_acceleration(pos, m, eps)


# --- REBOUND ---------------------------------------------------------------------------------

def _rebound_build(state):
    import rebound

    sim = rebound.Simulation()
    sim.G = 1.0
    sim.integrator = "leapfrog"
    sim.gravity = "basic"
    sim.softening = float(state.eps)
    sim.dt = 1e-12
    # At rest: leapfrog (drift-kick-drift) then evaluates gravity at exactly these positions
    # in its first step, which is what the check compares; later steps barely move them.
    for (x, y, z), m in zip(state.positions.tolist(), state.m.tolist()):
        sim.add(m=m, x=x, y=y, z=z)
    particles = sim.particles
    n = state.n

    def run():
        sim.steps(1)
        acc = np.empty((n, 3))
        for i in range(n):
            p = particles[i]
            acc[i] = p.ax, p.ay, p.az
        return acc

    first = [True]

    def timed():
        if first[0]:                 # the checked call reads the accelerations back
            first[0] = False
            return run()
        sim.steps(1)                 # timed calls: one leapfrog step, one gravity evaluation
        return None
    return timed


# --- NVIDIA Warp (`peers_warp.py`, imported only where a Warp candidate is asked for) ----------

def _warp_builder(precision: str, kind: str = "plain", device: str = "cpu"):
    def build(state):
        from .peers_warp import WarpForces
        forces, x = WarpForces(state.m, state.eps, precision, kind, device), state.x
        return lambda: forces.evaluate(x)
    return build


def _warp_availability(device: str = "cpu"):
    def availability():
        ok, reason = module_availability("warp", "warp-lang")
        if not ok or device == "cpu":
            return ok, reason
        from .peers_warp import availability as warp_device_availability
        return warp_device_availability(device)
    return availability


def warp_sees_a_gpu() -> bool:
    """Warp is installed and sees a CUDA device: `main` adds the GPU field (a broken Warp: no)."""
    try:
        return _warp_availability("cuda")()[0]
    except Exception:      # the CPU Warp rows report the failure
        return False


# --- the field ---------------------------------------------------------------------------------

def candidates() -> list[Candidate]:
    """Every candidate, this suite's first, then the peers."""
    out = []
    for letter in CPU_LETTERS:
        for precision in PRECISIONS:
            out.append(Candidate(letter, precision, _suite_builder(letter, precision),
                                 _suite_availability(letter)))
    out.append(Candidate("NumPy", "dp", _numpy_build, note="float64, chunked"))
    out.append(Candidate("REBOUND", "dp", _rebound_build, lambda: module_availability("rebound"),
                         counts=(("", full_count), (" per pair", pair_count)),
                         note='gravity="basic", one leapfrog step per evaluation'))
    for precision in ("sp", "dp"):
        out.append(Candidate("Warp", precision, _warp_builder(precision), _warp_availability(), note="CPU, plain"))
    return out


def shape_candidates() -> list[Candidate]:
    """Version A's kernel shapes, timed only where `--only` names them: `A-unfused`, numba's loop
    with its products apart from their additions (`serial.kernels.CpuKernels(fused=False)`);
    sp's and dsp's two kernels, `A-row` (the row, 16 lanes on AVX-512, `rows=("sp", "dsp")`) and `A-loop`
    (numba's loop, `rows=()`), one of which is A's (`ROW_CPUS`); dp's two routes to r^-3
    without AVX-512, numba's loop with `A-dp-seed` (a float32 estimate, `dp_seed=True`) or
    `A-dp-sqrt` (a float64 square root and a division, `dp_seed=False`), and `A-dp-row` (the AVX2
    row, half its lanes each way, `rows=("dp",)`), one of which is A's (`ROW_CPUS`, else
    `DIVIDER_CPUS`; an AVX-512 host's dp row is A's and all three's); `A-row-unfused` and
    `A-dp-row-unfused`, the rows with r2 and the sums in multiplies and adds (`fused=False`)."""
    return [Candidate("A-unfused", precision, _shape_builder(precision, fused=False, rows=()),
                      note="A, products apart from their additions (no FMA in r2 and the sums)")
            for precision in PRECISIONS] + [
        Candidate(name, precision, _shape_builder(precision, rows=rows), note=note)
        for name, rows, note in (("A-row", ("sp", "dsp"), "A, the row: raw estimate, one step on r^-3"),
                                 ("A-loop", (), "A, numba's loop: LLVM's Newton step on 1/r"))
        for precision in ("sp", "dsp")] + [
        Candidate("A-dp-seed", "dp", _shape_builder("dp", dp_seed=True, rows=()),
                  note="A, r^-3 from a float32 estimate and a float64 third-order step"),
        Candidate("A-dp-sqrt", "dp", _shape_builder("dp", dp_seed=False, rows=()),
                  note="A, r^-3 from a float64 square root and a division (no float32 seed)"),
        Candidate("A-dp-row", "dp", _shape_builder("dp", rows=("dp",)),
                  note="A, the AVX2 row: half the lanes through the divider, half a float32 estimate and a series")] + [
        Candidate(name, precision, _shape_builder(precision, fused=False, rows=(precision,)),
                  note="A, the row with multiplies and adds (no FMA in r2 and the sums)")
        for name, precisions in (("A-row-unfused", ("sp", "dsp")), ("A-dp-row-unfused", ("dp",)))
        for precision in precisions]


def gpu_candidates(warp_device: str = "cuda") -> list[Candidate]:
    """The GPU field: this suite's C, D, E, then NVIDIA Warp's tile and plain kernels on
    `warp_device` (on "cpu" the same Warp code runs without a GPU, as the tests run it)."""
    out = [Candidate(letter, precision, _suite_builder(letter, precision), _suite_availability(letter))
           for letter in GPU_LETTERS for precision in PRECISIONS]
    for kind in ("tile", "plain"):
        for precision in ("sp", "dp"):
            out.append(Candidate(f"Warp-GPU-{kind}", precision, _warp_builder(precision, kind, warp_device),
                                 _warp_availability(warp_device), note=warp_device))
    return out


def select(cands: list[Candidate], which=None) -> list[Candidate]:
    """The candidates whose key or name is in `which` (all of them when `which` is None)."""
    return [c for c in cands if which is None or c.key in which or c.name in which]


def availability() -> dict:
    """{candidate key: (available, reason)}: which peers this machine can run, and why not."""
    return {c.key: _safe_availability(c) for c in candidates()}


def _safe_availability(c: Candidate) -> tuple[bool, str]:
    try:
        return c.availability()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"


def prepare(candidate: Candidate, state, ref=None):
    """Build `candidate` for `state`, run it once and check it against the float64 reference.

    Returns (run, status, max relative error): `run` is None unless the status is "ok"."""
    ok, reason = _safe_availability(candidate)
    if not ok:
        return None, f"skipped: {reason}", math.nan
    try:
        run = candidate.build(state)
        acc = run()
    except VersionUnavailable as exc:
        return None, f"skipped: {exc}", math.nan
    except Exception as exc:
        return None, f"skipped: {candidate.name} failed: {type(exc).__name__}: {exc}", math.nan
    if ref is None:
        ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    err = max_relative_error(np.asarray(acc, dtype=np.float64), ref)
    tol = TOLERANCE[candidate.precision]
    if not (np.isfinite(err) and err <= tol):
        return None, f"disagrees: max relative error {err:.2e} > {tol:.0e}", err
    return run, STATUS_OK, err


def table(ns=DEFAULT_NS, repeats: int = DEFAULT_REPEATS, seed=1, which=None,
          progress=None, field=None) -> list[Row]:
    """Measure every candidate of `field` (default `candidates()`; or those whose key or name is
    in `which`) at each N.

    The bodies are a uniform-sphere cluster at the origin (where float32 is fair). Each
    candidate is checked, then timed in `repeats` round-robin rounds; rates use the median."""
    cands = select(candidates() if field is None else field, which)
    rows = []
    for n in ns:
        state = make_cluster(int(n), seed=seed, radius_kpc=None)
        ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
        runs, results = {}, {}
        for c in cands:
            run, status, err = prepare(c, state, ref)
            results[c.key] = (status, err)
            if run is not None:
                runs[c.key] = run
            if progress:
                progress(f"N={n} {c.key}: {status}" + ("" if math.isnan(err) else f" (error {err:.1e})"))
        times = {k: [] for k in runs}
        for r in range(max(1, repeats)):
            if progress and runs:
                progress(f"N={n}: timed round {r + 1} of {max(1, repeats)}")
            for k, run in runs.items():
                t = time.perf_counter()
                run()
                times[k].append(time.perf_counter() - t)
        numpy_rate = math.nan
        if "NumPy-dp" in times:
            numpy_rate = full_count(n) / float(np.median(times["NumPy-dp"]))
        for c in cands:
            status, err = results[c.key]
            ts = times.get(c.key, [])
            sec = float(np.median(ts)) if ts else math.nan
            for suffix, count in c.counts:
                rate = count(n) / sec if ts else math.nan
                rows.append(Row(c.name + suffix, c.precision, int(n), rate, rate / numpy_rate,
                                status, err, TOLERANCE[c.precision], len(ts), sec))
    return rows


def format_table(rows: list[Row]) -> str:
    """A Markdown table: candidate, precision, N, interactions/s, ratio to NumPy (and status)."""
    lines = ["| candidate | precision | N | interactions/s | ratio to NumPy | max rel. error | status |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        rate = "—" if math.isnan(r.interactions_per_second) else f"{r.interactions_per_second:.3g}"
        ratio = "—" if math.isnan(r.ratio_to_numpy) else f"{r.ratio_to_numpy:.3g}"
        err = "—" if math.isnan(r.max_relative_error) else f"{r.max_relative_error:.1e}"
        lines.append(f"| {r.candidate} | {r.precision} | {r.n} | {rate} | {ratio} | {err} | {r.status} |")
    return "\n".join(lines)


def bound_table(rows: list[Row], counts, frequency_hz: float, another: str | None = None) -> str:
    """Version A's rows (one core) against the pipe bound `nbsymple cpu-asm` predicts for this
    CPU (`counts`: its host rows): measured cycles per interaction = clock / rate, and the share
    of the bound reached = predicted cycles / measured cycles. No share where the hardware
    contradicts the bound (A faster than it by more than 10 %); where A is more than 10 % slower,
    the last column says what the bound leaves out, from the loop as compiled replayed in L1.
    `another`: the rows ran code compiled for another CPU (`compiled_for_another_cpu`), and
    `counts` are of that code, its classes' costs measured on this core."""
    predicted = {c.precision: c for c in counts if c.kernel == "pairwise"}
    cpu = next(iter(predicted.values())).cpu if predicted else "unknown"
    counted = (f"the code A ran, compiled for another CPU ({another}), its classes' costs measured on this core"
               if another else f"host CPU {cpu}")
    lines = [f"Version A against its pipe bound (`nbsymple cpu-asm`, {counted}; core clock "
             f"{frequency_hz / 1e9:.2f} GHz, measured by `cpu_asm.frequency`):", "",
             "| precision | N | cycles per interaction, measured | loop as compiled, in L1 | bound (cpu-asm) "
             "| bounded by | costs | share of the bound | not explained by the bound |",
             "|---|---:|---:|---:|---:|---|---|---:|---|"]
    for r in rows:
        c = predicted.get(r.precision)
        if r.candidate != "A" or c is None or not r.interactions_per_second > 0:
            continue
        measured = frequency_hz / r.interactions_per_second
        bound, compiled = c.predicted_cycles_per_interaction, c.compiled_cycles_per_interaction
        share, gap = _share(measured, bound, compiled)
        lines.append(f"| {r.precision} | {r.n} | {measured:.3f} | {'—' if compiled is None else f'{compiled:.3f}'} | "
                     f"{'no figures for this CPU' if bound is None else f'{bound:.3f}'} | {c.bound or '—'} | "
                     f"{c.costs or '—'} | {share} | {gap} |")
    return "\n".join(lines)


def _share(measured: float, bound: float | None, compiled: float | None) -> tuple[str, str]:
    """(the share of the bound reached, what the bound does not explain) for one row: each of the
    two steps from the bound to A's time that is more than 10 %, with its factor: the loop's
    dependency chains (the bound to the loop as compiled, in L1), then what lies outside the
    loop's instructions (that loop to A)."""
    if bound is None:
        return "—", "—"
    if measured < 0.9 * bound:
        return "—", "contradicted: A runs faster than this bound, which is wrong for this core"
    share = f"{bound / measured:.0%}"
    if measured <= 1.1 * bound:
        return share, "—"
    if compiled is None:
        return share, "not a pipe of the table: latency, memory or the front end"
    parts = []
    if compiled > 1.1 * bound and measured < 0.9 * compiled:     # A beats its own loop's replay: that
        parts.append(f"the loop's dependency chains (latency), at most {measured / bound:.2f}x the bound: as "
                     f"compiled, in L1, the loop took {compiled / bound:.2f}x, slower than A itself, so that "
                     f"replay is wrong for A")          # factor cannot be A's (a hunt: it exceeded A's whole gap)
    elif compiled > 1.1 * bound:
        parts.append(f"the loop's dependency chains (latency): as compiled, in L1, it takes {compiled / bound:.2f}x "
                     f"the bound")
    if measured > 1.1 * compiled:
        parts.append(f"outside the loop's instructions (memory, the loops around it): A takes "
                     f"{measured / compiled:.2f}x that loop")
    return share, "; ".join(parts) or "the loop's dependency chains and what lies outside it, each within 10 %"


def compiled_for_another_cpu() -> str | None:
    """What numba compiles this process's kernels for where it is not the host (NUMBA_CPU_NAME or
    NUMBA_CPU_FEATURES set, e.g. AVX2 code timed on an AVX-512 core), with the vector instructions
    that code has, else None. With NUMBA_CPU_NAME alone numba keeps the host's features: on an
    AVX-512 host, NUMBA_CPU_NAME=znver3 still compiles AVX-512 code, which the sentence says."""
    import llvmlite.binding as llvm
    import numba
    from ..serial import avx2, avx512
    name, features = numba.config.CPU_NAME, numba.config.CPU_FEATURES
    if (name in (None, "", "host") or name == llvm.get_host_cpu_name()) and not features:
        return None
    isa = "AVX-512" if avx512.available() else "AVX2" if avx2.available() else "no AVX2"
    given = f"NUMBA_CPU_NAME={name or 'host'}" + (f", NUMBA_CPU_FEATURES={features}" if features else "")
    if features is None and name not in (None, "", "host"):
        return (f"{given}: {isa} code, as numba keeps this host's features where NUMBA_CPU_FEATURES is "
                f"unset; NUMBA_CPU_FEATURES=\"\" gives {name}'s own")
    return f"{given}: {isa} code"


def _pipe_bound(rows: list[Row]) -> str | None:
    """`bound_table` for this machine, or None where no A row was timed or the CPU is not x86.
    Where the rows ran code compiled for another CPU (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES: AVX2
    code on an AVX-512 core), the loops counted are that code's, compiled as it was timed."""
    import platform

    import numba
    if platform.machine().lower() not in ("x86_64", "amd64") or not any(
            r.candidate == "A" and r.interactions_per_second > 0 for r in rows):
        return None
    from .cpu_asm import HOST, count_all
    from .cpu_asm.frequency import CHAIN_CYCLES, core_frequency_hz
    if numba.config.OPT != 3 or numba.config.OPT.is_opt_max:      # (a hunt: NUMBA_OPT=0, a clock of 0.21 GHz)
        return (f"No pipe bound: NUMBA_OPT={os.environ.get('NUMBA_OPT', '')} compiled A at another optimisation "
                f"level than the code `cpu-asm` counts (numba's default, 3), and the core clock's chain with it "
                f"(`cpu_asm.frequency`: {CHAIN_CYCLES} cycles a step as the default compiles it); unset NUMBA_OPT "
                f"for the bound.")
    other = compiled_for_another_cpu()
    timed = {k: v for k, v in (("NUMBA_CPU_NAME", numba.config.CPU_NAME),
                               ("NUMBA_CPU_FEATURES", numba.config.CPU_FEATURES)) if v is not None} if other else None
    try:
        counted = count_all((HOST,), host_cpu=timed)
    except ValueError as e:             # no vector loop in it (NUMBA_CPU_NAME=x86-64: no AVX): a traceback before
        timed_as = f" ({other})" if other else ""
        return f"No pipe bound: the pairwise loops of the code timed{timed_as} were not found ({e})."
    text = bound_table(rows, counted, core_frequency_hz(), other)
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores:
        text += (f"\n\nTaken under load (1-min load {load:.2f} on {cores} cores): A's rates are wall-time "
                 "rates, so where its core was shared they are low and its share of the bound is a lower "
                 "bound. Run it on a quiet machine.")
    return text


def binding_note(rows: list[Row], layer: str, threads: int, env=os.environ) -> str | None:
    """Where B was timed on OpenMP threads that nothing bound to CPUs, a sentence saying so: on a
    2-core Zen 3 VM, B's sp kernel called back to back took 41-45 ms on unbound threads and 36-38 ms
    bound (OMP_PROC_BIND=close; A 72 ms), and `peers` gave B 1.73x A unbound, 1.79x bound (medians
    of six runs each; docs/how_fast.md)."""
    from ..environment import BINDING
    timed = any(r.candidate == "B" and r.interactions_per_second > 0 for r in rows)
    bind = env.get("OMP_PROC_BIND", "").strip().lower()       # false: unbound, whatever places are given
    bound = bind not in ("", "false") or (not bind and any(env.get(name) for name in BINDING))
    if not timed or layer != "omp" or threads < 2 or bound:
        return None
    return (f"B ran on {threads} OpenMP threads bound to no CPU: where the OS moves them between cores during a "
            "call, B runs below its cores' rate. OMP_PROC_BIND=close binds them, one to a core (docs/how_fast.md, "
            "B's threads bound).")


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (AttributeError, OSError):
        return "n/a"


def main(argv=None) -> int:
    p = Parser(prog="python -m nbsymple_versions.instruments.peers", doc=__doc__)
    p.add_argument("--n", type=whole_number_argument(2), nargs="+", default=list(DEFAULT_NS),
                   help=f"numbers of bodies (default {' '.join(map(str, DEFAULT_NS))})")
    p.add_argument("--repeats", type=whole_number_argument(1), default=DEFAULT_REPEATS,
                   help=f"timed rounds, their median reported (default {DEFAULT_REPEATS})")
    p.add_argument("--seed", type=seed_argument, default=1, help="random seed of the bodies (default 1)")
    p.add_argument("--only", nargs="+", default=None,
                   help="candidate names or keys (e.g. B-sp REBOUND; A-unfused, A-row, A-row-unfused, A-loop, "
                        "A-dp-seed, A-dp-sqrt, A-dp-row and A-dp-row-unfused, A's kernel shapes, run only when "
                        "named)")
    p.add_argument("--gpu", action=argparse.BooleanOptionalAction, default=None,
                   help="add the GPU field: C, D, E and Warp's tile and plain kernels on the GPU "
                        "(default: where Warp sees a CUDA device)")
    p.add_argument("--bound", action=argparse.BooleanOptionalAction, default=True,
                   help="after the table, version A's cycles per interaction against the pipe bound "
                        "`nbsymple cpu-asm` predicts for this CPU, at the measured core clock (x86; "
                        "compiles the kernels as A ran them in a child process, about 20 s: for the CPU "
                        "NUMBA_CPU_NAME and NUMBA_CPU_FEATURES name, where they are set)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = p.parse_args(argv)
    args.n, args.only = list(dict.fromkeys(args.n)), args.only and list(dict.fromkeys(args.only))   # once each
    known = candidates() + shape_candidates() + gpu_candidates()
    if unknown := [name for name in args.only or () if not select(known, [name])]:
        names = ", ".join(dict.fromkeys(c.name for c in known))
        p.error(f"argument --only: no candidate {', '.join(map(repr, unknown))}; the candidates: {names} "
                "(or a name and its precision, e.g. B-sp)")
    gpu = args.gpu
    if gpu is None:      # the GPU field where Warp (1 s to import) sees a device, or where --only names
        # one of its candidates: its rows then say why they were skipped, never an empty table
        gpu = bool(select(gpu_candidates(), args.only)) if args.only else warp_sees_a_gpu()
    if args.only and not gpu and not select(candidates() + shape_candidates(), args.only):
        p.refuse(f"--only {' '.join(args.only)} names only GPU candidates, which --no-gpu leaves out: an empty table")
    simulated = gpu and cuda_simulator()   # C, D and E in numba's CUDA simulator, at its pace
    for n in args.n:
        if (problem := memory_problem(n, "--n")) is not None:
            p.refuse(problem)
        try:            # each round evaluates every candidate's pairwise forces once: a leapfrog step's work
            check_time(n, args.repeats, "--repeats (one pairwise evaluation per candidate and round)",
                       "a smaller --n or --repeats", simulated=simulated)
        except WorkRefused as e:
            p.refuse(str(e))
    progress = None if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    load_before = _load()
    rows = table(args.n, args.repeats, args.seed, args.only, progress=progress,
                 field=candidates() + (shape_candidates() if args.only else []) + (gpu_candidates() if gpu else []))
    print(machine_line())     # provenance: CPU model and ISA, cores, libraries, threading
    print(f"load average (1 min) before / after: {load_before} / {_load()}")
    print()
    print(format_table(rows))
    if note := binding_note(rows, *numba_threading()):
        print()
        print(note)
    bound = _pipe_bound(rows) if args.bound else None
    if bound:
        print()
        print(bound)
    if note := stood_still():            # the rates are wall-clock
        print(f"\nThis measurement was {note}; take the rates again.")
    return 0


if __name__ == "__main__":
    from ..entry import command
    sys.exit(command("python -m nbsymple_versions.instruments.peers", main))
