"""The `nbsymple` command: run, check, profile, info, paper.

Mistakes in the input (a bad N or dt, an unknown name, a GPU version without a GPU, a
snapshot folder that cannot be written) end with one sentence on stderr and exit status 2,
never a traceback.
"""
import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from .core.pipeline import PRECISIONS
from .core.schemes import SCHEMES
from .versions import LETTERS, VersionUnavailable


class UsageError(Exception):
    """A user mistake: reported as one sentence, exit status 2."""


def _positive_int(minimum):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value
    return parse


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be positive and finite, got {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one sentence on stderr (exit 2), without the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser():
    p = _Parser(prog="nbsymple", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="integrate a cluster on its Galactic orbit and report conservation and timing")
    r.add_argument("--version", default="A", type=str.upper, choices=LETTERS, help="paper version A-E (default A)")
    r.add_argument("--n", type=_positive_int(2), default=1024, help="number of bodies (default 1024)")
    r.add_argument("--scheme", default="leapfrog", type=str.lower, choices=tuple(SCHEMES))
    r.add_argument("--precision", default="dp", type=str.lower, choices=PRECISIONS)
    r.add_argument("--dt", type=_positive_float, default=5e-4, help="time step in cluster time units (default 5e-4)")
    r.add_argument("--steps", type=_positive_int(0), default=1000, help="number of steps (default 1000)")
    r.add_argument("--seed", type=int, default=None, help="random seed of the initial conditions")
    r.add_argument("--devices", type=_positive_int(1), default=None, help="GPU slices for version E")
    r.add_argument("--tile", type=_positive_int(1), default=None, help="GPU threads per block (default 256)")
    r.add_argument("--snapshots", type=Path, default=None, metavar="DIR", help="write .npz snapshots into DIR")
    r.add_argument("--every", type=_positive_int(1), default=None, metavar="K", help="snapshot every K steps")
    r.add_argument("--json", action="store_true", help="print one JSON object and nothing else on stdout")

    c = sub.add_parser("check", help="validate every available version x precision against the float64 reference")
    c.add_argument("--n", type=_positive_int(2), default=1000, help="number of bodies (default 1000)")
    c.add_argument("--seed", type=int, default=None)
    c.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")
    c.add_argument("--gpu-report", action="store_true",
                   help="GPU self-check: validate C, D, E, then time them at N = 2^14, 2^16, 2^17")

    f = sub.add_parser("profile", help="per-task time of a few warm steps for each version and N (paper Tables 4-6)")
    f.add_argument("--versions", default="ABCDE", type=str.upper, help="letters to profile (default: all available)")
    f.add_argument("--n", type=_positive_int(2), nargs="+", default=[1024, 4096], help="numbers of bodies")
    f.add_argument("--scheme", default="leapfrog", type=str.lower, choices=tuple(SCHEMES))
    f.add_argument("--precision", default="dp", type=str.lower, choices=PRECISIONS)
    f.add_argument("--steps", type=_positive_int(1), default=5, help="warm steps timed per row (default 5)")
    f.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")

    sub.add_parser("info", help="Python, numba, threads, GPUs and available versions")
    sub.add_parser("paper", help="regenerate the paper's tables and figures (see `nbsymple paper --help`)",
                   add_help=False)
    return p


def _writable_folder(folder: Path) -> Path:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise UsageError(f"cannot write snapshots into {folder}: {e.strerror or e}") from None
    return folder


class _Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal."""

    def __init__(self, total):
        self.total, self.start = total, time.perf_counter()
        self.active = sys.stderr.isatty() and total > 0
        self.every = max(1, total // 200)

    def __call__(self, k):
        if self.active and (k % self.every == 0 or k == self.total):
            frac = k / self.total
            bar = "#" * int(30 * frac)
            eta = (time.perf_counter() - self.start) * (1 / frac - 1)
            sys.stderr.write(f"\r  [{bar:<30}] {k}/{self.total} steps, {eta:5.0f} s left ")
            if k == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def cmd_run(args) -> int:
    from .core.ics import make_cluster
    from .simulation import Simulation
    from .snapshots import write_snapshot

    if args.every is not None and args.snapshots is None:
        raise UsageError("--every needs --snapshots DIR")
    folder = _writable_folder(args.snapshots) if args.snapshots is not None else None
    every = args.every or args.steps or 1
    options = {k: getattr(args, k) for k in ("devices", "tile") if getattr(args, k) is not None}

    state = make_cluster(args.n, seed=args.seed)
    sim = Simulation(state, args.version, args.scheme, args.precision, args.dt, **options)
    progress = _Progress(args.steps)

    def on_step(k):
        if folder is not None and (k % every == 0 or k == args.steps):
            write_snapshot(folder, sim.state, k)
        progress(k)

    if folder is not None:
        write_snapshot(folder, sim.state, 0)
    sim.step(args.steps, on_step)

    result = {
        "version": sim.version.letter, "n": args.n, "scheme": args.scheme, "precision": args.precision,
        "dt": args.dt, "steps": args.steps, "seed": args.seed,
        "energy_error": sim.energy_error(), "angular_momentum_error": sim.angular_momentum_error(),
        "seconds_per_step": sim.seconds_per_step, "task_seconds": dict(sim.clock.seconds),
        "task_shares": sim.clock.shares(), "threads": sim.threads, "device": sim.device,
        "compile_seconds": sim.compile_seconds,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"version {result['version']} ({sim.version.description})")
    print(f"N = {args.n}, {args.scheme}, {args.precision}, dt = {args.dt:g}, {args.steps} steps, "
          f"t = {sim.state.t:g} T = {sim.state.units.to_myr(sim.state.t):.3g} Myr")
    print(f"device: {sim.device}; threads: {sim.threads}")
    print(f"energy error            {result['energy_error']:.3e}")
    print(f"angular momentum error  {result['angular_momentum_error']:.3e}")
    print(f"seconds per step        {result['seconds_per_step']:.4g}")
    shares = result["task_shares"]
    print("task shares             " + ", ".join(f"{k} {v:.2f} %" for k, v in shares.items()))
    if folder is not None:
        print(f"snapshots in {folder}")
    return 0


def cmd_check(args) -> int:
    if args.gpu_report:
        from .gpu_report import main as gpu_report
        return gpu_report([])
    from .validation import validate
    from .versions import all_versions

    checks, unavailable = [], []
    for version in all_versions():
        ok, reason = version.available()
        if not ok:
            unavailable.append(f"{version.letter}: not available: {reason}")
            continue
        for precision in PRECISIONS:
            checks.append(validate(version.letter, precision, n=args.n, seed=args.seed))
    failed = [c for c in checks if not c.passed]
    if args.json:
        print(json.dumps([c.as_dict() for c in checks]))
    else:
        print(f"N = {args.n}; error = max_i |a_i - a_ref_i| / max_i |a_ref_i| (pairwise accelerations)")
        print(f"{'version':8}{'precision':10}{'max rel. error':>16}{'tolerance':>12}  pass")
        for c in checks:
            print(f"{c.version:8}{c.precision:10}{c.max_relative_error:16.3e}{c.tolerance:12.0e}  "
                  f"{'yes' if c.passed else 'NO'}")
        for line in unavailable:
            print(line)
    if failed:
        print(f"nbsymple check: {len(failed)} of {len(checks)} checks failed", file=sys.stderr)
        return 1
    return 0


def cmd_profile(args) -> int:
    from .core.clock import TASKS
    from .core.ics import make_cluster
    from .simulation import Simulation
    from .versions import get_version

    unknown = sorted(set(args.versions) - set(LETTERS))
    if unknown:
        raise UsageError(f"unknown version {''.join(unknown)!r}; choose letters from {''.join(LETTERS)}")
    if not args.json:
        print(f"{args.scheme}, {args.precision}; % of the step per task")
        print(f"{'version':8}{'N':>8}{'s per step':>16}" + "".join(f"{t:>11}" for t in TASKS) + "   device")
    rows = []
    for letter in dict.fromkeys(args.versions):
        ok, reason = get_version(letter).available()
        if not ok:
            print(f"{letter}: not available: {reason}", file=sys.stderr)
            continue
        for n in args.n:
            sim = Simulation(make_cluster(n, seed=0), letter, args.scheme, args.precision, diagnostics=False)
            sim.step(args.steps)
            rows.append({"version": letter, "n": n, "scheme": args.scheme, "precision": args.precision,
                         "seconds_per_step": sim.seconds_per_step, "task_shares": sim.clock.shares(),
                         "threads": sim.threads, "device": sim.device})
            if not args.json:
                shares = "".join(f"{rows[-1]['task_shares'][t]:11.2f}" for t in TASKS)
                print(f"{letter:8}{n:>8}{sim.seconds_per_step:16.4e}{shares}   {sim.device}", flush=True)
    if args.json:
        print(json.dumps(rows))
    return 0


def cmd_info(args) -> int:
    import numba
    import numpy as np

    from .kernels.cpu import THREADED
    from .versions import all_versions

    THREADED.axpy(np.zeros(4), np.zeros(4), 0.0)   # start the threading layer so it can be named
    print(f"python          {platform.python_version()} ({platform.machine()})")
    print(f"numpy           {np.__version__}")
    print(f"numba           {numba.__version__}, threading layer {numba.threading_layer()}")
    print(f"CPU cores       {os.cpu_count()}; numba threads {numba.get_num_threads()} "
          f"(NUMBA_NUM_THREADS = {numba.config.NUMBA_NUM_THREADS})")
    print(f"GPUs            {_gpus()}")
    print("versions:")
    for v in all_versions():
        ok, reason = v.available()
        print(f"  {v.letter}  {v.description}" + ("" if ok else f"  [not available: {reason}]"))
    return 0


def _gpus() -> str:
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        from numba import cuda
        if not cuda.is_available():
            return "none seen by numba-cuda"
        return ", ".join(f"{g.id}: {g.name.decode() if isinstance(g.name, bytes) else g.name}" for g in cuda.gpus)
    except ImportError:
        return "numba-cuda not installed (pip install 'nbsymple-versions[gpu]')"
    except Exception as e:  # a broken driver is information here, not a crash
        return f"none usable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["paper"]:
        from .paper import main as paper_main
        return paper_main(argv[1:])
    args = _parser().parse_args(argv)
    try:
        commands = {"run": cmd_run, "check": cmd_check, "profile": cmd_profile, "info": cmd_info}
        return commands[args.command](args)
    except (UsageError, ValueError, VersionUnavailable) as e:
        print(f"nbsymple {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"nbsymple {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
