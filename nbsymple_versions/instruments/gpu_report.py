"""GPU self-check (`nbsymple check --gpu-report`): validate C, D, E, then time them.

On a real GPU it takes well under 3 minutes: C, D and E in sp, dp and dsp against the float64
reference, then for N = 2^14, 2^16, 2^17 and each precision the pairwise rate of the GPU kernel
(interactions per second, GFLOP/s at 20 flops per interaction: core/vocabulary.py), the transfer time per force
evaluation (positions up, accelerations down) and the time per leapfrog step of C, D and E;
then the rates of the tiled and the plain kernel side by side, with the largest difference
between their accelerations (the net effect of tiling, cross-checked); last, the GPU peers on the
same bodies: NVIDIA Warp's tile N-body kernel and a plain Warp kernel (`peers_warp.py`), checked
against the float64 reference first, then timed beside the C/D and E kernels with the ratios.
`--gpu-backend cupy` runs all of it on the CuPy backend (`nbsymple check --gpu-report --gpu-backend cupy`);
its flags of the versions' options (`--tile`, `--devices`, `--gpu-backend`, `--gpu-kernel`) are
generated from E's typed `Options`, as `nbsymple run`'s are.
Under NUMBA_ENABLE_CUDASIM=1 it runs as a smoke test with small sizes (`SIMULATOR_SIZES`: the
simulator does ~1e5 interactions per second, so that N = 2^14 would take 45 minutes a kernel call,
2^17 two days), without the Warp peers; the simulator's numbers mean nothing.
"""
import sys
import time

import numpy as np

from ..arguments import Parser, number_above, seed_argument, whole_number_argument
from ..core.ics import make_cluster, timing_state
from ..core.options import add_option_arguments
from ..core.vocabulary import FLOPS_PER_INTERACTION as FLOPS, PRECISIONS
from ..core.work import MAX_DAYS_VARIABLE, WorkRefused, check_time, duration, max_days, memory_problem
from ..gpu_pairwise.backends import package_defect
from ..gpu_pairwise.options import KERNEL_KINDS
from ..gpu_pairwise.simulator import cuda_simulator
from ..versions import GPU_LETTERS as LETTERS, get_version, option_flags

DEFAULT_SIZES = (2**14, 2**16, 2**17)
SIMULATOR_SIZES = (256,)                               # the default under the CUDA simulator: 73 s on a Zen 1
OPTIONS = ("tile", "devices", "backend", "kernel")     # the versions' options it takes: E's


PROG = "python -m nbsymple_versions.instruments.gpu_report"


def _parser(prog=PROG):
    p = Parser(prog=prog, doc=__doc__)
    p.add_argument("--sizes", "--n", type=whole_number_argument(2), nargs="+", default=None, metavar="N",
                   help=f"body counts to time (default {' '.join(map(str, DEFAULT_SIZES))} on a GPU, "
                        f"{' '.join(map(str, SIMULATOR_SIZES))} in the CUDA simulator)")
    p.add_argument("--validate-n", type=whole_number_argument(2), default=None,
                   help="bodies in the validation runs (default 2048 on a GPU, 96 in the simulator)")
    p.add_argument("--seed", type=seed_argument, default=None,
                   help="random seed of the validation runs' clusters (default: a fresh one)")
    p.add_argument("--steps", type=whole_number_argument(1), default=3,
                   help="leapfrog steps timed per version; their median is shown (default 3)")
    p.add_argument("--min-seconds", type=number_above(0, or_equal=True), default=0.2,
                   help="time each kernel-rate and transfer figure over at least this long (default 0.2)")
    add_option_arguments(p.add_argument, option_flags(), OPTIONS)     # --gpu-kernel: the validation and step rows'
    return p


FIGURES_PER_SIZE = 2          # per size and precision: the kernel's and the transfer's rates, at least


def _repeat(fn, min_seconds, least=2):
    """Seconds per call of fn, averaged over at least `least` calls and `min_seconds`."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if calls >= least and elapsed >= min_seconds:
            return elapsed / calls


def _devices(letter: str, devices: int) -> dict:
    """The `devices` option for the versions that take it (E), none for the others."""
    return dict(devices=devices) if "devices" in get_version(letter).option_names else {}


def main(argv=None, *, prog=PROG, validate_flag="--validate-n", **options) -> int:
    """The report; `options` (the versions' options, as `nbsymple check` parsed them) stand in for
    the flags of the same names, and `nbsymple check --gpu-report` names itself `prog` and its
    validation bodies `validate_flag` (its --n) in what it refuses. Exit status 0, 1 (a check
    failed), 2 (bad input, or no GPU: the GPU versions not available here)."""
    p = _parser(prog)
    args = p.parse_args(argv)
    sim = cuda_simulator()
    args.sizes = list(dict.fromkeys(args.sizes or (SIMULATOR_SIZES if sim else DEFAULT_SIZES)))   # each N once
    validate_n = args.validate_n or (96 if sim else 2048)
    for option, n in [("--sizes", n) for n in args.sizes] + [(validate_flag, validate_n)]:
        if (problem := memory_problem(n, option)) is not None:
            p.refuse(problem)
    try:                          # per size and precision: a warm-up, 2 timed calls, E's and each version's steps
        for n in args.sizes:
            check_time(n, len(PRECISIONS) * (3 + len(LETTERS) * (1 + args.steps)), f"--sizes {n}",
                       "smaller --sizes or fewer --steps", simulated=sim)
        check_time(validate_n, len(PRECISIONS) * len(LETTERS), f"{validate_flag} {validate_n}",
                   f"a smaller {validate_flag}", simulated=sim)            # (it ran for ever at 2000000)
    except WorkRefused as e:
        p.refuse(str(e))
    timed = FIGURES_PER_SIZE * len(args.sizes) * len(PRECISIONS)
    if args.min_seconds * timed > (limit := max_days() * 86400.0):   # each figure takes at least that long
        p.refuse(f"--min-seconds {args.min_seconds:g} times at least {timed} timed figures is "
                 f"{duration(args.min_seconds * timed)}, beyond the limit of {duration(limit)} (set "
                 f"{MAX_DAYS_VARIABLE}, in days, to raise it); choose a smaller --min-seconds")
    from ..simulation import Simulation
    from ..validation import validate

    try:
        given = {name: getattr(args, name) for name in OPTIONS if getattr(args, name) is not None}
        chosen = get_version("E").Options.from_dict({**given, **options}, "E")
    except ValueError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    for name in OPTIONS:
        setattr(args, name, getattr(chosen, name))
    version = get_version("C")
    ok, reason = version.available(args.backend)
    if not ok:
        print(f"{prog}: the GPU versions are not available here: {reason}", file=sys.stderr)
        return 2                         # work beyond the machine, as `nbsymple check --gpu-report` says it
    from ..gpu_pairwise.backends import engine_class

    options = dict(tile=args.tile, backend=args.backend, kernel=args.kernel)
    engine = engine_class(args.backend)
    names = engine.device_names(range(engine.device_count()))
    print(f"GPU report: {', '.join(names)}" + (" (simulator: numbers below are meaningless)" if sim else ""))
    print(f"{args.backend} backend, {args.kernel} kernel, tile {args.tile}; version E on {args.devices} slice(s) "
          f"(one per body at most); {FLOPS} flops per interaction")

    cluster = "fresh random cluster" if args.seed is None else f"random cluster of seed {args.seed}"
    print(f"\nvalidation against the float64 reference, n = {validate_n} ({cluster})")
    failed = 0
    for letter in LETTERS:
        for precision in PRECISIONS:
            extra = _devices(letter, args.devices)
            c = validate(letter, precision, n=validate_n, seed=args.seed, **options, **extra)
            failed += not c.passed
            print(f"  {letter} {precision:3s}  max relative error {c.max_relative_error:.2e}"
                  f"  tolerance {c.tolerance:.0e}  host tasks {c.host_tasks_error:.2e}"
                  f"  {'ok' if c.passed else 'FAILED'}")

    print("\nperformance (warm, synchronised; rate and transfer of the C/D kernel; step = leapfrog, all tasks, "
          f"the median of {args.steps})")
    header = (f"{'N':>7} {'prec':4} {'interactions/s':>14} {'GFLOP/s':>9} {'transfer ms':>11}"
              + "".join(f" {'step ' + L + ' ms':>10}" for L in LETTERS))
    print(header)
    for n in args.sizes:
        state = timing_state(n)
        for precision in PRECISIONS:
            forces = version.pipeline(state, precision, **options)
            forces.warm_up(state.x)
            pairwise, out = forces.backend, np.empty_like(state.x)      # the pipeline's O(N^2) part
            pairwise.upload(state.x)
            kernel_s = _repeat(pairwise.compute, args.min_seconds)
            transfer_s = _repeat(lambda: (pairwise.upload(state.x), pairwise.download(out)), args.min_seconds)
            rate = float(n) * n / kernel_s
            steps = []
            for letter in LETTERS:
                extra = _devices(letter, args.devices)
                s = Simulation(state.copy(), letter, "leapfrog", precision, dt=5e-4, diagnostics=False,
                               **options, **extra)
                steps.append(step_seconds(s, args.steps))
            print(f"{n:>7} {precision:4} {rate:>14.3e} {rate * FLOPS / 1e9:>9.1f} {transfer_s * 1e3:>11.3f}"
                  + "".join(f" {t * 1e3:>10.3f}" for t in steps), flush=True)
    failed += _tiling(version, args)
    if sim:
        print("\nWarp peers: skipped under the CUDA simulator (Warp runs on a GPU or on its own CPU device)")
    else:
        _warp_peers(args, validate_n)
    if failed:
        print(f"\nnbsymple check --gpu-report: {failed} validation(s) failed", file=sys.stderr)
        return 1
    return 0


def step_seconds(simulation, steps: int) -> float:
    """The median seconds of `steps` steps of `simulation` (its TaskClock, synchronised; its
    constructor ran every kernel once), so that one stalled step moves nothing: on an H200's
    16-core host D's step at N = 16384 in sp, the mean of three, read 7.2 ms in one run and
    0.86 ms in the next."""
    times = []
    for _ in range(steps):
        before = simulation.clock.total
        simulation.step(1)
        times.append(simulation.clock.total - before)
    return float(np.median(times))


def _tiling(version, args) -> int:
    """The net effect of tiling (GPU Gems 3 warns: shared memory "adds barriers and uses
    resources. Measure the net effect"): the C/D kernel's rate, tiled and plain, and the largest
    difference between their accelerations (same sources, same order: they should agree within
    the precision's tolerance). Returns the number of disagreements."""
    from ..validation import FRAME_KPC, TOLERANCE, max_relative_error

    print("\ntiled vs plain kernel (warm, synchronised; difference = max relative, plain against tiled)")
    print(f"{'':7}{'N':>7} {'prec':4} {'tiled int/s':>12} {'plain int/s':>12} {'tiled/plain':>11} {'difference':>11}")
    disagree = 0
    for n in args.sizes:
        for precision in PRECISIONS:
            state = timing_state(n, radius_kpc=FRAME_KPC[precision])
            rates, acc = {}, {}
            for kernel in KERNEL_KINDS:
                forces = version.pipeline(state, precision, tile=args.tile, backend=args.backend, kernel=kernel)
                forces.warm_up(state.x)
                pairwise, out = forces.backend, np.empty_like(state.x)
                pairwise.upload(state.x)
                rates[kernel] = float(n) * n / _repeat(pairwise.compute, args.min_seconds)
                pairwise.download(out)
                acc[kernel] = out.T.copy()
            diff = max_relative_error(acc["plain"], acc["tiled"])
            agree = diff <= TOLERANCE[precision]
            disagree += not agree
            print(f"{'tiling':7}{n:>7} {precision:4} {rates['tiled']:>12.3e} {rates['plain']:>12.3e} "
                  f"{rates['tiled'] / rates['plain']:>11.2f} {diff:>11.1e}  {'agree' if agree else 'DIFFER'}",
                  flush=True)
    return disagree


def _suite_kernels(state, precision, args) -> dict:
    """{"C/D": C's (and D's) GPU engine, "E": E's, the Galaxy in its kernel} for `state`."""
    options = dict(tile=args.tile, backend=args.backend, kernel=args.kernel)
    engines = {}
    for name, letter in (("C/D", "C"), ("E", "E")):
        forces = get_version(letter).pipeline(state, precision, **options, **_devices(letter, args.devices))
        forces.warm_up(state.x)
        engines[name] = forces.backend
    return engines


def _kernel_rate(engine, x, min_seconds) -> tuple[float, np.ndarray]:
    """(interactions per second of `engine.compute`, synchronised, on positions x (3, N) uploaded
    once; its accelerations (N, 3)) for a suite engine or a `peers_warp.WarpForces` alike."""
    engine.upload(x)
    engine.compute()                     # warm
    n, out = x.shape[1], np.empty_like(x)
    rate = float(n) * n / _repeat(engine.compute, min_seconds)
    engine.download(out)
    return rate, out.T.copy()


def _warp_peers(args, validate_n: int, device: str = "cuda") -> None:
    """The GPU peers on the same bodies: NVIDIA Warp's tile N-body kernel (its example
    `example_tile_nbody.py`, the tiling this suite follows) and a plain Warp kernel, sp and dp.
    Each is first checked against the float64 reference on a fresh cluster of `validate_n` bodies
    (where the suite's validation puts that precision); one that fails is reported, not timed.
    Then, per N and precision, the kernel rates of C/D, E and Warp (warm, synchronised), the
    suite's over Warp tile's, and the largest difference of Warp's accelerations from C's. A peer
    that is missing or wrong is reported; it does not change the exit status."""
    from ..core import reference
    from ..validation import FRAME_KPC, TOLERANCE, max_relative_error
    try:
        from . import peers_warp
    except ImportError as exc:
        if package_defect(exc):
            raise
        print(f"\nWarp peers: skipped: {exc} (pip install warp-lang, or the 'peers' extra)")
        return
    ok, reason = peers_warp.availability(device)
    if not ok:
        print(f"\nWarp peers: skipped: {reason}")
        return
    print(f"\nWarp peers: NVIDIA Warp {peers_warp.wp.__version__} on {device}, tile kernel (Warp's example, "
          f"tile {peers_warp.EXAMPLE_TILE}) and plain kernel, against the float64 reference, n = {validate_n}")
    checked = []
    for precision in peers_warp.WARP_PRECISIONS:
        state = make_cluster(validate_n, radius_kpc=FRAME_KPC[precision])
        ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
        for kind in peers_warp.KERNELS:
            err, ok = peers_warp.check(peers_warp.WarpForces(state.m, state.eps, precision, kind, device), state, ref)
            if ok:
                checked.append((kind, precision))
            print(f"  Warp {kind:5s} {precision:3s}  max relative error {err:.2e}  tolerance "
                  f"{TOLERANCE[precision]:.0e}  {'ok' if ok else 'DISAGREES (not timed)'}")
    print(f"{'':7}{'N':>7} {'prec':4} {'C/D int/s':>12} {'E int/s':>12} {'tile int/s':>12} {'plain int/s':>12} "
          f"{'C/D / tile':>10} {'E / tile':>9} {'difference':>11}")
    dash = "—"
    for n in args.sizes:
        for precision in peers_warp.WARP_PRECISIONS:
            state = timing_state(n, radius_kpc=FRAME_KPC[precision])
            engines = _suite_kernels(state, precision, args)
            engines.update({kind: peers_warp.WarpForces(state.m, state.eps, precision, kind, device)
                            for kind in peers_warp.KERNELS if (kind, precision) in checked})
            rates, acc = {}, {}
            for name, engine in engines.items():
                rates[name], acc[name] = _kernel_rate(engine, state.x, args.min_seconds)
            warp = [k for k in peers_warp.KERNELS if k in rates]
            diff = max((max_relative_error(acc[k], acc["C/D"]) for k in warp), default=float("nan"))
            cells = [f"{rates[k]:>12.3e}" if k in rates else f"{dash:>12}" for k in ("C/D", "E", "tile", "plain")]
            ratios = [f"{rates[k] / rates['tile']:>{w}.2f}" if "tile" in rates else f"{dash:>{w}}"
                      for k, w in (("C/D", 10), ("E", 9))]
            print(f"{'Warp':7}{n:>7} {precision:4} {' '.join(cells)} {' '.join(ratios)} {diff:>11.1e}", flush=True)


if __name__ == "__main__":
    from ..entry import command
    sys.exit(command("python -m nbsymple_versions.instruments.gpu_report", main))
