"""`nbsymple run` for runs that take hours: checkpoints, resume, signals, seeds, memory.

- `--checkpoint FILE --checkpoint-every K` writes a checkpoint (`checkpoint.py`) at step 0,
  every K steps and at the end; `kill -9` loses at most K steps. SIGINT and SIGTERM finish the
  step under way, write a last checkpoint and exit with status 128 + the signal's number.
- `--resume FILE` continues that run bit for bit, to its original total (or `--steps M`), its
  snapshots in its original folder (or `--snapshots DIR`); every other setting comes from FILE.
- A step that leaves a non-finite value stops the run there (status 3); checkpoints and
  snapshots of good steps are kept, no bad state is written.
- A run without `--seed` draws one and records it. A snapshot folder that holds another run's
  snapshots is refused; temporaries left by a killed writer are removed.
- N is checked against the memory this machine has before anything is allocated.
- `--ics FILE` starts from a file in the authors' ASCII layout, `--snapshot-format nbsymple`
  writes snapshots in it (`authors_format`), `--mass-classes K` draws a Salpeter spectrum.
Every refusal is one sentence and exit status 2, with nothing written or overwritten.
"""
from contextlib import contextmanager
import json
from pathlib import Path
import resource
import secrets
import signal
import sys
import tempfile
import threading
import time
import uuid

from .progress import Progress

BYTES_PER_BODY = 1000        # state, scratch, kernel copies, initial conditions, diagnostics (~700 measured)
BYTES_FIXED = 400 << 20      # interpreter, numba, a chunk of the O(N^2) sums
RESUME_OPTIONS = {"resume", "steps", "snapshots", "every", "json", "checkpoint", "checkpoint_every"}
ICS_EXCLUDES = ("n", "seed", "mass_classes")     # what an initial-condition file already fixes
DEFAULT_CHECKPOINT_EVERY = 100


class RunStop(Exception):
    """The run ends early: one sentence for stderr and an exit status."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


@contextmanager
def user_values(error=RunStop):
    """Set-up from the user's values (N, seed, a file, options): a ValueError there is their
    mistake and becomes `error` (one sentence, status 2); a ValueError anywhere else is a bug
    and keeps its traceback."""
    try:
        yield
    except ValueError as e:
        raise error(str(e)) from None


def memory_needed(n: int) -> int:
    """Bytes a run of n bodies needs at its peak (initial conditions, diagnostics, stepping)."""
    return BYTES_PER_BODY * n + BYTES_FIXED + (72 * n if n > 1 << 21 else 0)


def memory_available() -> int | None:
    """Bytes this process may still allocate: the least of the free memory, the cgroup's
    limit and the address-space limit, or None where none of them can be read."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            found += [int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")]
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            found.append(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()))
    except (OSError, ValueError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/status") as f:
                used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        except (OSError, StopIteration):
            used = 0
        found.append(soft - used)
    return min(found) if found else None


def memory_problem(n: int) -> str | None:
    """A sentence refusing n bodies if they cannot fit in memory, else None."""
    need, have = memory_needed(n), memory_available()
    if have is not None and need > have:
        return (f"N = {n} needs about {_bytes(need)} of memory and this machine has {_bytes(max(have, 0))} "
                f"available; choose a smaller --n")
    return None


def _bytes(b: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if b < 1000 or unit == "PB":
            return f"{b:.3g} {unit}"
        b /= 1000


def _duration(s: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if s >= 2 * size:
            return f"{s / size:.0f} {unit}"
    return f"{s:.0f} s"


def _warn_if_slow(n: int):
    """Before the initial conditions' O(N^2) potential energy (which cannot report progress),
    say how long it will take when that is more than a few seconds."""
    if n < 20000:
        return
    from .core.reference import pairwise_potential_energy
    import numpy as np
    probe = 2048
    x = np.random.default_rng(0).random((probe, 3))
    start = time.perf_counter()
    pairwise_potential_energy(x, np.full(probe, 1.0 / probe), 0.01)
    seconds = (time.perf_counter() - start) * (n / probe) ** 2
    print(f"nbsymple run: N = {n}: the initial conditions' O(N^2) potential energy takes about "
          f"{_duration(seconds)} here, the initial energy diagnostics as long again", file=sys.stderr, flush=True)


def _explicit(parser, argv) -> set:
    """Names of the `run` options given on the command line (abbreviations included)."""
    import argparse
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    for action in sub._actions:
        action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv))) - {"command"}


def writable(folder: Path, what: str, error=RunStop) -> Path:
    """`folder`, created if needed, once a file could be made in it; else `error` in one sentence."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise error(f"cannot write {what} into {folder}: {e.strerror or e}") from None
    return folder


class StopSignals:
    """SIGINT and SIGTERM set `signum` (the run stops after the step under way); a second one
    stops at once. Installed only in the main thread."""

    def __init__(self):
        self.signum, self.previous = None, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


class _Stopped(Exception):
    pass


def _initial_state(args, explicit):
    """The state read from `--ics FILE` (None without it); one sentence if it cannot be used."""
    from .authors_format import FormatError, read_nbsymple
    if getattr(args, "ics", None) is None:
        return None
    given = [f"--{k.replace('_', '-')}" for k in ICS_EXCLUDES if k in explicit]
    if given:
        raise RunStop(f"--ics takes the bodies from its file, so {', '.join(given)} cannot be given with it")
    try:
        state = read_nbsymple(args.ics)
    except FormatError as e:
        raise RunStop(str(e)) from None
    if abs(state.m.sum() - 1.0) > 1e-6:
        print(f"nbsymple run: the masses in {args.ics} sum to {state.m.sum():.8g}, not 1: NBSymple files give "
              f"masses in units of the cluster's total mass", file=sys.stderr, flush=True)
    return state


def _fresh(args, explicit=frozenset()):
    """(run parameters, a function building the simulation) of a new run."""
    from .core.ics import make_cluster
    from .simulation import Simulation

    if args.every is not None and args.snapshots is None:
        raise RunStop("--every needs --snapshots DIR")
    initial = _initial_state(args, explicit)
    if initial is not None:
        args.n = initial.n
    if problem := memory_problem(args.n):
        raise RunStop(problem)
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    run = {"run_id": uuid.uuid4().hex, "n": args.n, "seed": seed, "seed_chosen": args.seed is None,
           "steps": args.steps, "snapshots": None if args.snapshots is None else str(args.snapshots.resolve()),
           "every": args.every or args.steps or 1,
           "checkpoint_every": args.checkpoint_every or DEFAULT_CHECKPOINT_EVERY,
           "ics": None if initial is None else str(args.ics), "mass_classes": getattr(args, "mass_classes", None),
           "snapshot_format": getattr(args, "snapshot_format", None) or "npz"}
    options = {k: getattr(args, k, None) for k in ("devices", "tile")}
    options.update(backend=getattr(args, "gpu_backend", None), kernel=getattr(args, "gpu_kernel", None))
    options = {k: v for k, v in options.items() if v is not None}     # a version refuses what it does not take

    def build():
        _warn_if_slow(args.n)
        progress = Progress("initial energy, O(N^2)", args.n, enabled=sys.stderr.isatty() or args.n > 20000,
                            unit="body")
        with user_values():
            state = initial if initial is not None else make_cluster(args.n, seed=seed,
                                                                     mass_classes=run["mass_classes"])
            return Simulation(state, args.version, args.scheme, args.precision, args.dt,
                              progress=lambda done, total: progress(done), **options)
    return run, build


def _resumed(args, explicit):
    """(run parameters, a function building the simulation) continuing checkpoint `args.resume`."""
    from .checkpoint import CheckpointError, load
    from .simulation import Simulation

    extra = sorted(explicit - RESUME_OPTIONS)
    if extra:
        names = ", ".join("--" + e.replace("_", "-") for e in extra)
        raise RunStop(f"--resume takes the run's settings from its checkpoint, so {names} cannot be given with it")
    try:
        run, record, state = load(args.resume)
    except CheckpointError as e:
        raise RunStop(str(e)) from None
    done = int(record["steps_done"])
    if "steps" in explicit:
        if args.steps < done:
            raise RunStop(f"--steps {args.steps} is fewer than the {done} steps {args.resume} has already done")
        run["steps"] = args.steps
    if "snapshots" in explicit:
        run["snapshots"] = str(args.snapshots.resolve())
    if "every" in explicit:
        run["every"] = args.every
    if "checkpoint_every" in explicit:
        run["checkpoint_every"] = args.checkpoint_every
    if problem := memory_problem(state.n):
        raise RunStop(problem)

    def build():
        with user_values():
            return Simulation.restore(state, record)
    return run, build


def run(args, parser) -> int:
    """`nbsymple run`; returns the exit status or raises RunStop. Everything the user typed is
    checked (and refused with nothing written) before the initial conditions are built."""
    from .checkpoint import temporary_files
    from .snapshots import SnapshotError, prepare_folder

    argv = getattr(args, "argv", None)
    explicit = _explicit(parser, argv) if argv is not None else set()
    if args.checkpoint_every is not None and args.checkpoint is None and args.resume is None:
        raise RunStop("--checkpoint-every needs --checkpoint FILE")
    checkpoint = Path(args.checkpoint or args.resume) if (args.checkpoint or args.resume) else None
    if checkpoint is not None and checkpoint.exists() and not (
            args.resume and checkpoint.resolve() == Path(args.resume).resolve()):
        raise RunStop(f"{checkpoint} already exists; resume it with --resume {checkpoint}, or choose another file")
    run_, build = _resumed(args, explicit) if args.resume else _fresh(args, explicit)
    if checkpoint is not None:
        writable(checkpoint.parent, "the checkpoint")
    folder = None if run_["snapshots"] is None else writable(Path(run_["snapshots"]), "snapshots")
    if folder is not None:
        try:
            prepare_folder(folder, run_["run_id"])
        except SnapshotError as e:
            raise RunStop(str(e)) from None
    if checkpoint is not None:
        for tmp in temporary_files(checkpoint):
            tmp.unlink(missing_ok=True)
    with StopSignals() if checkpoint is not None else _NoSignals() as signals:
        sim = build()
        return _steps(args, run_, sim, folder, checkpoint, signals)


def _steps(args, run_, sim, folder, checkpoint, signals) -> int:
    """Step to the run's total with snapshots and checkpoints; a signal (caught by `signals`)
    or a non-finite value stops it after a whole step."""
    from .checkpoint import save
    from .simulation import NonFiniteState
    from .snapshots import write_snapshot

    total, every, k_every = run_["steps"], run_["every"], run_["checkpoint_every"]
    start = sim.steps_done
    if args.resume is None:
        if folder is not None:
            write_snapshot(folder, sim.state, 0, run_["run_id"], run_.get("snapshot_format", "npz"))
        if checkpoint is not None:
            save(checkpoint, run_, sim)
    saved = {"step": start}
    progress = Progress(f"version {sim.version.letter}", total - start, enabled=sys.stderr.isatty())

    def on_step(k):
        step = sim.steps_done
        if folder is not None and (step % every == 0 or step == total):
            write_snapshot(folder, sim.state, step, run_["run_id"], run_.get("snapshot_format", "npz"))
        if checkpoint is not None and (step % k_every == 0 or step == total or signals.signum):
            save(checkpoint, run_, sim)
            saved["step"] = step
        progress(step - start)
        if signals.signum:
            raise _Stopped

    try:
        if signals.signum:               # during the set-up: the checkpoint holds step `start`
            raise _Stopped
        sim.step(total - start, on_step)
    except NonFiniteState as e:
        kept = f"; the last good checkpoint, {checkpoint} (step {saved['step']}), is kept" if checkpoint else ""
        raise RunStop(f"{e}, so the run stopped there{kept}", status=3) from None
    except _Stopped:
        name = signal.Signals(signals.signum).name
        raise RunStop(f"stopped by {name} after step {sim.steps_done} of {total}; checkpoint written to "
                      f"{checkpoint}; continue with: nbsymple run --resume {checkpoint}",
                      status=128 + signals.signum) from None
    return report(args, run_, sim, folder, checkpoint, start)


class _NoSignals:
    signum = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def report(args, run_, sim, folder, checkpoint, start) -> int:
    """Print the finished run: one JSON object (`--json`) or the text summary; status 0."""
    errors = sim.errors()
    result = {
        "version": sim.version.letter, "n": sim.state.n, "scheme": sim.scheme.name, "precision": sim.precision,
        "dt": sim.dt, "steps": run_["steps"], "seed": run_["seed"], "seed_chosen": run_["seed_chosen"],
        "ics": run_.get("ics"), "mass_classes": run_.get("mass_classes"),
        **errors, "seconds_per_step": sim.seconds_per_step if sim.steps_done else None,
        "task_seconds": dict(sim.clock.seconds), "task_shares": sim.clock.shares(), "threads": sim.threads,
        "device": sim.device, "compile_seconds": sim.compile_seconds,
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "resumed_from_step": start if args.resume else None, "run_id": run_["run_id"],
    }
    if args.json:
        print(json.dumps(result, allow_nan=False))
        return 0
    s = sim.state
    print(f"version {result['version']} ({sim.version.description})")
    print(f"N = {s.n}, {sim.scheme.name}, {sim.precision}, dt = {sim.dt:g}, {run_['steps']} steps"
          + (f" (resumed at step {start})" if args.resume else "")
          + f", t = {s.t:g} T = {s.units.to_myr(s.t):.3g} Myr")
    chosen = " (drawn at random; --seed {0} repeats this run)".format(run_["seed"]) if run_["seed_chosen"] else ""
    print(f"seed {run_['seed']}{chosen}")
    print(f"device: {sim.device}; threads: {sim.threads}")
    print(f"energy error            {errors['energy_error']:.3e}   |E - E0| / |E0|, E = cluster + Galaxy "
          "(the paper's definition)")
    print(f"internal energy error   {errors['internal_energy_error']:.3e}   |E - E0| / |K_int + W|, the same "
          "change in units of the cluster's own energy")
    print(f"angular momentum error  {errors['angular_momentum_error']:.3e}")
    if sim.steps_done:
        print(f"seconds per step        {result['seconds_per_step']:.4g}")
    print("task shares             " + ", ".join(f"{k} {v:.2f} %" for k, v in result["task_shares"].items()))
    if folder is not None:
        print(f"snapshots in {folder}")
    if checkpoint is not None:
        print(f"checkpoint {checkpoint} (step {sim.steps_done})")
    return 0
