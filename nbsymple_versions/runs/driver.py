"""`nbsymple run` for every version, A-F: a fresh or resumed run stepped to its total, with
snapshots, checkpoints, signals and seeds. `run(spec)` takes a `RunSpec` (spec.py), built by
the CLI from its flags or in Python; the flags below are its fields.

- `--checkpoint FILE --checkpoint-every K` writes a checkpoint (`checkpoint.py`) at step 0, every K
  steps and at the end; `kill -9` loses at most K steps. SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGUSR1,
  SIGUSR2 and SIGALRM (`entry.HELD`) finish the step under way, write a last checkpoint and exit with status 128 + the
  signal's number.
- `--resume FILE` continues that run bit for bit, to its original total (or `--steps M`), its
  snapshots in its original folder (or `--snapshots DIR`); every other setting comes from FILE.
- A step that leaves a non-finite value stops the run there (status 3); checkpoints and
  snapshots of good steps are kept, no bad state is written.
- A run without `--seed` draws one and records it. A snapshot folder that holds another run's
  snapshots is refused; temporaries left by a killed writer are removed.
- N is checked against the memory this machine has, and the steps against the least time they
  can take (`core.work`), before anything is allocated.
- `--ics FILE` starts from a file in the authors' ASCII layout, read at the scale `--ics-radius PC`
  (default 10) and `--ics-mass MSUN` (required: such a file does not state its mass, unless it is a
  snapshot of ours with its `snapshots.json`) with `--constants` (the checkpoint's state keeps them
  for `--resume`, which refuses other constants),
  `--snapshot-format nbsymple` writes snapshots in it (`authors_format`), `--mass-classes K`
  draws a Salpeter spectrum.
Every refusal is one sentence and exit status 2, with nothing written or overwritten.

Version F runs this same code on every MPI rank: the ranks make the same calls, what only one
process may do (read the user's files, check and write folders, draw the seed) happens on rank
0 and its outcome reaches every rank (`on_root`), the state is gathered before each snapshot
and checkpoint that rank 0 alone writes, a signal caught by any rank stops all of them after
the same step, and rank 0 alone prints. On one process every collective does nothing.
"""
from contextlib import ExitStack
import hashlib
import json
import math
import os
from pathlib import Path
import secrets
import signal
import sys
import time
import uuid

import numpy as np

from ..core.checks import positive_number
from ..core.diagnostics import cluster_problem
from ..core.ics import make_cluster
from ..core.ranks import launcher_rank, one_process_problem
from ..core.schemes import get_scheme
from ..core.units import Units
from ..core.vocabulary import precision_name
from ..core.work import WorkRefused, bodies, check_time, count, size
from ..entry import OutputFailed, shell_word, stopped_and_continued
from ..environment import os_reason
from ..mpi.comm import launched, release_shared_memory
from ..simulation import NonFiniteState, Simulation
from ..versions import VersionUnavailable, get_version, option_flags, simulated
from .authors_format import FormatError, read_table, state_of
from .checkpoint import CheckpointError, check_run, load, save, temporary_files
from .errors import FAULT, RunStop, stop_on_write_fault, user_values, writable
from .locks import PathBusy, hold, how_moved, identity, lock_file, moved
from .loop import Stopped, cadence, snapshots_after, step_run
from .memory import memory_problem, warn_if_slow
from .paths import (LINK_LOOP, FileRefused, blocking, dead_link, inside, not_a_folder, odd_kind, read_json,
                    resolved, write_atomically, written_name)
from .progress import Progress, launcher_on_terminal
from .report import report, session_device
from .signals import StopNow, StopSignals, wait_for_rank_0
from .snapshots import (SIDECAR, OtherRunsSnapshots, SidecarMissing, SnapshotError, least_bytes, list_snapshots,
                        names_constants, prepare_folder, read_snapshot, stated_units, step_of, write_snapshot)
from .spec import RunSpec, flag

RESUME_OPTIONS = {"resume", "steps", "snapshots", "every", "json", "checkpoint", "checkpoint_every", "progress",
                  "constants"}      # --constants only as the checkpoint's own
ICS_EXCLUDES = ("n", "seed", "mass_classes")     # what an initial-condition file already fixes
ICS_SCALE = ("ics_radius", "ics_mass")           # the scale an initial-condition file is read at
DEFAULT_CHECKPOINT_EVERY = 100
RUN_RECORD = "nbsymple-run.json"   # in the snapshot folder: which run writes it, and whether it finished


def on_root(world, task):
    """`task()` on rank 0 alone; its result, or its RunStop, reaches every rank."""
    result = stop = None
    if world.is_root:
        try:
            result = task()
        except RunStop as e:
            stop = (str(e), e.status)
    stop, result = world.broadcast_object((stop, result))
    if stop is not None:
        raise RunStop(*stop)
    return result


def _flags(names, given) -> list[str]:
    return [flag(k) for k in names if k in given]


def _ics_units(spec) -> Units:
    """The scale `--ics FILE` is read at: the one its folder's `snapshots.json` states (a snapshot
    this suite wrote in the authors' layout), else `--ics-mass MSUN` (required: the file does not
    say), `--ics-radius PC` (default 10, as the authors') and `--constants`. A flag that
    contradicts a stated scale is refused."""
    try:
        stated = stated_units(spec.ics)
    except SnapshotError as e:
        raise RunStop(str(e)) from None
    if stated is None:
        if spec.ics_mass is None:
            raise RunStop(f"{spec.ics} does not state the cluster mass its units are in (no {SIDECAR} of nbsymple "
                          f"beside it names it), so give it with --ics-mass MSUN: the authors' files are in units of "
                          f"the total mass of their input.txt, 480 Msun for their N = 480 example (--ics-mass 480)")
        try:
            return Units(Units().r_cl_pc if spec.ics_radius is None else spec.ics_radius, spec.ics_mass,
                         spec.constants)
        except ValueError as e:
            raise RunStop(f"{spec.ics} cannot be read at that scale: {e}") from None
    for name, value in (("ics_radius", stated.r_cl_pc), ("ics_mass", stated.mass_msun),
                        ("constants", stated.constants)):
        if name in spec.given and getattr(spec, name) != value:
            if name == "constants" and not names_constants(spec.ics):           # (a hunt: "as it states")
                raise RunStop(f"{spec.ics} is read with the exact constants: the {SIDECAR} beside it states its "
                              f"scale and names no constants (add \"constants\": \"{spec.constants}\" to it for "
                              f"the {spec.constants} ones), so --constants {spec.constants} cannot be given with it")
            raise RunStop(f"{spec.ics} is at r_cl = {stated.r_cl_pc:g} pc, M = {stated.mass_msun:g} Msun with the "
                          f"{stated.constants} constants, as the {SIDECAR} beside it states, so {flag(name)} "
                          f"{getattr(spec, name)} cannot be given with it")
    return stated


def _initial_state(spec):
    """The state read from `--ics FILE` at its scale (None without it); one sentence if it cannot be used."""
    if spec.ics is None:
        if scale := _flags(ICS_SCALE, spec.given):
            raise RunStop(f"{' and '.join(scale)} {'gives' if len(scale) == 1 else 'give'} the scale of an "
                          f"initial-condition file, so {'it needs' if len(scale) == 1 else 'they need'} --ics FILE")
        return None
    if given := _flags(ICS_EXCLUDES, spec.given):
        raise RunStop(f"--ics takes the bodies from its file, so {', '.join(given)} cannot be given with it")
    try:
        # first: a file that is none of the authors' is named so before its scale is asked
        table = read_table(spec.ics)
    except FormatError as e:
        raise RunStop(str(e)) from None
    state = state_of(table, _ics_units(spec))
    if stated_units(spec.ics) is not None:   # a snapshot of ours: its softening and time too, and its digest
        try:                                 # (read as a bare table it took N's default softening and t = 0)
            state = read_snapshot(spec.ics)[0]
        except SnapshotError as e:
            raise RunStop(str(e)) from None
    with np.errstate(all="ignore"):
        total = float(state.m.sum())
    if not math.isfinite(total):
        raise RunStop(f"the masses in {spec.ics} sum to more than float64 holds, so the bodies' energies cannot "
                      f"be represented")
    _state_problem(state, str(spec.ics))
    if abs(total - 1.0) > 1e-6:
        print(f"nbsymple run: the masses in {spec.ics} sum to {total:.8g}, not 1: NBSymple files give "
              f"masses in units of the cluster's total mass", file=sys.stderr, flush=True)
    return state


def _fresh(spec, world):
    """(run parameters, a function building the simulation) of a new run."""
    if spec.every is not None and spec.snapshots is None:
        raise RunStop("--every needs --snapshots DIR")
    if "snapshot_format" in spec.given and spec.snapshots is None and spec.checkpoint is None:   # (a hunt: ignored)
        raise RunStop("--snapshot-format needs --snapshots DIR (or a --checkpoint, whose resume may write them)")
    initial = on_root(world, lambda: _initial_state(spec))
    n = spec.n if initial is None else initial.n
    classes = spec.mass_classes
    if initial is None and classes is not None and classes > n:
        raise RunStop(f"--mass-classes {classes} is more than the {n} bodies (--n); give at most {n} "
                      f"mass classes")
    _check_work(world, n, spec.steps, f"--steps {spec.steps}", "fewer --steps or a smaller --n",
                simulated(spec.version, spec.options))
    seed = spec.seed if spec.seed is not None else world.broadcast_object(secrets.randbits(32))
    run = {"run_id": world.broadcast_object(uuid.uuid4().hex), "n": n, "seed": seed,
           "seed_chosen": spec.seed is None and initial is None, "steps": spec.steps,     # (--ics: no seed drew)
           "snapshots": None if spec.snapshots is None else str(_resolved(spec.snapshots, "--snapshots")),
           "every": spec.every,          # None: its steps (`loop.cadence`), so that a resume to more steps
                                         # snapshots as a new run of them would (a hunt: it kept the first's)
           "checkpoint_every": spec.checkpoint_every or DEFAULT_CHECKPOINT_EVERY,
           "ics": None if initial is None else str(spec.ics),
           "ics_sha256": None if initial is None else initial.digest(),
           "ics_radius_pc": None if initial is None else initial.units.r_cl_pc,
           "ics_mass_msun": None if initial is None else initial.units.mass_msun,
           "mass_classes": spec.mass_classes, "snapshot_format": spec.snapshot_format or "npz",
           "constants": spec.constants if initial is None else initial.units.constants}

    def build():
        if world.is_root:
            warn_if_slow(n)
        progress = Progress("initial energy, O(N^2)", n, unit="body",
                            enabled=world.is_root and (spec.progress or launcher_on_terminal() or n > 20000))
        with user_values():
            state = initial if initial is not None else make_cluster(n, seed=seed, mass_classes=run["mass_classes"],
                                                                     units=Units(constants=spec.constants))
            return Simulation(state, spec.version, spec.scheme, spec.precision, spec.dt,
                              progress=lambda done, total: progress(done), **spec.options)
    return run, build


def _read_checkpoint(spec):
    """(run parameters, `Simulation.record()`, state) of `--resume FILE`, read by every rank (the
    version, F or not, is in it), or (None, the reason) where it cannot be resumed."""
    flags = option_flags()          # a version option by its own flag: --gpu-kernel, not --kernel (a hunt)
    extra = sorted(flags[k][0]["flag"] if k in flags else flag(k) for k in spec.given - RESUME_OPTIONS)
    if extra:
        names = ", ".join(extra)
        raise RunStop(f"--resume takes the run's settings from its checkpoint, so {names} cannot be given with it")
    try:
        loaded = load(spec.resume)
        check_run(spec.resume, loaded[0])
        return loaded, ""
    except CheckpointError as e:
        return None, str(e)


def _check_record(record):
    """ValueError in one sentence where a checkpoint's `Simulation.record()` names a version,
    scheme, precision, time step or options this nbsymple cannot restore."""
    get_version(record["version"]).options_from(record["options"])
    get_scheme(record["scheme"])
    precision_name(record["precision"])
    positive_number(record["dt"], "dt (the time step)")


def _state_problem(state, what):
    """RunStop where the bodies of `state` (from `what`) are none a run steps (`cluster_problem`: a
    checkpoint of bodies all at one point is refused as one too, `checkpoint.AGREEMENTS`)."""
    if (problem := cluster_problem(state)) is not None:
        raise RunStop(f"{what}: {problem}")


def _resumed(spec, world, loaded):
    """(run parameters, a function building the simulation) continuing checkpoint `spec.resume`,
    `loaded` by `_read_checkpoint`."""
    run, record, state = loaded
    done = int(record["steps_done"])
    if record["energy0"] is None:        # made without diagnostics: the report's errors raised at the end, a traceback
        raise RunStop(f"{spec.resume} is the checkpoint of " + (
            "a science run of nbsymple paper, which the nbsymple paper command that started it resumes"
            if run.get("science") else "a simulation made with diagnostics=False") + "; it keeps no initial energy "
            "and angular momentum for nbsymple run to report the errors of its steps against")
    if "constants" in spec.given and spec.constants != state.units.constants:
        raise RunStop(f"{spec.resume} runs with the {state.units.constants} constants, so it cannot go on with "
                      f"--constants {spec.constants} (the Galaxy and the physical scale would change mid-run)")
    if "steps" in spec.given:
        if spec.steps < done:
            raise RunStop(f"--steps {spec.steps} is fewer than the {done} steps {spec.resume} has already done")
        run["steps"] = spec.steps
    if "snapshots" in spec.given:
        run["snapshots"] = str(_resolved(spec.snapshots, "--snapshots"))
    elif run["snapshots"] is not None and (why := world.broadcast_object(
            None if os.path.isdir(run["snapshots"]) else not_a_folder(run["snapshots"]) or "does not exist")):
        gone = "is gone (moved or removed)" if why == "does not exist" else why     # (a file there was "gone" too)
        raise RunStop(f"the snapshot folder of the run in {spec.resume}, {run['snapshots']}, {gone}; give --snapshots "
                      f"DIR for the rest of its snapshots")   # (made again: split in two)
    if "every" in spec.given:
        if run["snapshots"] is None:
            raise RunStop(f"--every needs --snapshots DIR (the run in {spec.resume} writes no snapshots)")
        run["every"] = spec.every
    if "checkpoint_every" in spec.given:
        run["checkpoint_every"] = spec.checkpoint_every
    _check_work(world, state.n, run["steps"] - done, f"the rest of the run in {spec.resume}", "fewer --steps",
                simulated(record["version"], record["options"]))
    _state_problem(state, str(spec.resume))

    def build():
        with user_values(lambda why: RunStop(f"{spec.resume} is not a valid checkpoint ({why})")):
            return Simulation.restore(state, record)
    return run, build


def _resolved(path, option: str) -> Path:
    """`paths.resolved`: the one real name of a path the run writes, or RunStop naming `option`. A
    dangling link is refused where the run would make the folder it names (`--snapshots`, the
    checkpoint's folder), as `paper --out` and `--keep` refuse one: a link to a disk not mounted
    here had the run make its path on this one and write there, in silence (a hunt); so is one on the
    folder's path (`--snapshots data/run1`, `--checkpoint data/c.ck`: data such a link)."""
    folder = option == "--snapshots"
    made = Path(path) if folder else Path(path).parent           # the folder the run makes where it is not
    if (on_path := blocking(made)) is not None and (link := dead_link(on_path[0])) not in (None, LINK_LOOP):
        where = f"{path} is {link}, not a folder" if on_path[0] == Path(path) else \
            f"{path}: a folder on its path ({on_path[0]}) is {link}"
    elif not folder and (link := dead_link(path)) not in (None, LINK_LOOP) and not os.path.isdir(
            os.path.dirname(os.path.realpath(path))):
        where = f"{path} is {link}, in a folder that does not exist"
    else:
        where = None
    if where is not None:
        raise RunStop(f"{option} {where}: make the folder it names first (a disk not mounted here?), or give "
                      f"another path")
    try:
        return resolved(path, option)
    except FileRefused as e:
        raise RunStop(str(e)) from None


def _check_work(world, n: int, steps: int, asked: str, option: str, simulated: bool):
    """RunStop where n bodies do not fit in this machine's memory (each rank's, agreed) or where
    `steps` steps of them (`asked` for, in words) cannot end within `core.work`'s limit (in the
    CUDA simulator: `simulated`)."""
    ok, problem = world.agree(not (problem := memory_problem(n)), problem or "")
    if not ok:
        raise RunStop(problem.split(": ", 1)[1] if world.size == 1 else problem)
    try:
        check_time(n, steps, asked, option, simulated)
    except WorkRefused as e:
        raise RunStop(str(e)) from None


def _loaded_digest(loaded) -> str:
    """SHA-256 of what `_read_checkpoint` loaded: its run, record and bodies."""
    run, record, state = loaded
    return hashlib.sha256(repr((run, record)).encode() + state.digest().encode()).hexdigest()


def _command(spec, run_, checkpoint, record: dict | None = None) -> dict:
    """What makes two runs the same run (the run id, a drawn seed and the steps aside; bodies from
    `--ics` by their digest, not the file's name, a hunt found), as JSON values; the
    version, scheme, precision, step and options are `spec`'s, or those of the checkpoint's
    `record` for a resumed run (a resume names none of them: the record said the defaults')."""
    same = {k: v for k, v in run_.items() if k not in ("run_id", "seed", "steps", "stood_still", "devices")}
    same.update(seed=None if run_["seed_chosen"] or run_.get("ics") else run_["seed"],
                checkpoint=None if checkpoint is None else str(_resolved(checkpoint, "--checkpoint")),
                **({key: record[key] for key in ("version", "scheme", "precision", "dt", "options")} if record else
                   dict(version=spec.version, scheme=spec.scheme, precision=spec.precision, dt=spec.dt,
                        options=dict(spec.options))))
    return json.loads(json.dumps(same))


def _resume_the_other(folder: Path, checkpoint: Path | None) -> str:
    """How to resume the run whose snapshots `folder` holds, where its record names a checkpoint
    that is there (a killed run may have left none) and is not `checkpoint`, the one this run
    writes (a resume whose folder held a snapshot of no run id was told to resume itself)."""
    try:
        left = read_json(folder / RUN_RECORD, "run record")["command"]["checkpoint"]
    except (FileRefused, KeyError, TypeError):
        return ""
    if not (isinstance(left, str) and os.path.isfile(left)) or (checkpoint and Path(left).resolve() == checkpoint):
        return ""
    return f", or resume that run: {resume_command(left)}"


def _restartable(folder: Path, command: dict) -> bool:
    """True when `folder` holds snapshots of an unfinished run of the same command that left no
    checkpoint to resume (killed before its first one, or run without one) and whose bodies the
    same command makes again (its seed given, or its bodies read from a file): that command may
    start it again. A drawn seed's snapshots could never be written again: they are kept."""
    try:
        record = read_json(folder / RUN_RECORD, "run record")
    except FileRefused:
        return False
    if not isinstance(record, dict) or not isinstance(record.get("command"), dict):
        return False
    left, kept = record["command"].get("checkpoint"), record["command"]
    same = {**kept, "ics": command["ics"]} if kept.get("ics") is not None and command["ics"] is not None else kept
    return (not record.get("finished") and same == command      # an --ics file by its digest, not its name
            and (command["seed"] is not None or command["ics"] is not None)
            and (left is None or (isinstance(left, str) and not Path(left).exists())))


def _every(every: int) -> str:
    return "at every step" if every == 1 else f"one every {every} steps"


def _room_problem(run_: dict, start: int, folder: Path | None, checkpoint: Path | None) -> str | None:
    """A sentence where what the run still writes cannot fit on the file systems that are to hold
    it: its snapshots after step `start` (each of its least size, less the snapshots of those
    steps already there, which it replaces) and a checkpoint (written beside the last one before
    it replaces it); None where it fits, or where a file system does not say how much room it has."""
    n, fmt = run_["n"], run_.get("snapshot_format", "npz")
    needs = {}                                      # device -> [bytes, folder, what, free]
    writes = [] if checkpoint is None else [(checkpoint.parent, least_bytes(n), "a checkpoint")]
    if folder is not None and (k := snapshots_after(run_, start)):
        replaced = sum(p.stat().st_size for p in folder.glob("snap_*.*")
                       if (step_of(p) or 0) > start and p.is_file())
        writes.insert(0, (folder, k * least_bytes(n, fmt) - replaced,
                          f"{count(k)} snapshot{'s' if k != 1 else ''} of N = {bodies(n)} ({fmt}, "
                          f"{_every(cadence(run_))} to step {run_['steps']})"))
    for where, size_, what in writes:
        try:
            info, device = os.statvfs(where), where.stat().st_dev
        except OSError:
            return None
        entry = needs.setdefault(device, [0, where, [], info.f_bavail * info.f_frsize])
        entry[0] += size_
        entry[2].append(what)
    for needed, where, what, free in needs.values():
        if needed > free:           # fewer snapshots only where it would write some (a hunt: a checkpoint alone)
            fewer = ("write fewer snapshots (a larger --every, fewer --steps) or " if what[0] != "a checkpoint"
                     else "")
            return (f"the run would write {' and '.join(what)} into {where}, at least {size(needed)}, and its "
                    f"file system has {size(free)} free; {fewer}choose a folder with more room")
    return None


def _checked_paths(spec, run_, checkpoint, loaded, locks, undo, held) -> tuple[Path | None, bool]:
    """Rank 0's checks of the checkpoint file and the snapshot folder, each locked for the rest of
    the run (`locks`, an ExitStack), against the checkpoint `loaded` (None for a fresh run); nothing is
    written but the folders, the lock files (each removed by `undo` should the set-up fail) and a killed
    writer's temporaries. (The folder or None, whether it holds a killed run of the same command that
    `_claim` replaces.)"""
    start = loaded[1]["steps_done"] if loaded else 0
    folder = None if run_["snapshots"] is None else Path(run_["snapshots"])
    if checkpoint is not None:
        target = _resolved(checkpoint, "--checkpoint")      # what is locked and written: two names, one lock
        odd = odd_kind(target)
        if odd == "a folder" or (folder is not None and target == folder.resolve()):
            raise RunStop(f"--checkpoint {checkpoint} names a folder{' (the snapshot folder)' if folder else ''}; "
                          f"give it a file name")
        if odd is not None:
            raise RunStop(f"--checkpoint {checkpoint} is {odd}, not a checkpoint file; give it a file name")
        if folder is not None and inside(target, folder):
            raise RunStop(f"--checkpoint {checkpoint} lies inside the snapshot folder {folder}, where a snapshot "
                          f"could replace it; put it beside that folder")
        _writable(target.parent, "the checkpoint", undo)
        _lock(locks, target, "the checkpoint", False, undo, held)
        resuming = spec.resume and target == _resolved(spec.resume, "--resume")
        if os.path.lexists(target) and not resuming:
            raise RunStop(f"{checkpoint} already exists; {_existing_checkpoint_advice(checkpoint)}")
        for tmp in temporary_files(target):
            tmp.unlink(missing_ok=True)
    restart = False
    if folder is not None:
        _writable(folder, "snapshots", undo)
        _lock(locks, folder, "the snapshot folder", True, undo, held)
        restart = spec.resume is None and _restartable(folder, _command(spec, run_, checkpoint))
        if not restart:
            try:
                prepare_folder(folder, run_["run_id"], loaded[2] if loaded else None)
            except SidecarMissing as e:          # resuming would meet it again: no hint to
                raise RunStop(str(e)) from None
            except OtherRunsSnapshots as e:      # (a snapshot it cannot read was "..., or resume that run": the
                other = _resume_the_other(folder, None if checkpoint is None else target)    # run being resumed,
                raise RunStop(f"{e}{other}") from None                                         # a loop)
            except SnapshotError as e:
                raise RunStop(str(e)) from None
    if (problem := _room_problem(run_, start, folder, None if checkpoint is None else target)) is not None:
        raise RunStop(problem)
    return folder, restart


def _claim(spec, run_, checkpoint, folder, restart, record=None):
    """Once the simulation is built (every refusal is behind): the snapshot folder becomes this
    run's, its record written (a resumed run's from its checkpoint's `record`), a killed run of
    the same command (`restart`) replaced."""
    if folder is None:
        return
    if restart:
        for old in list_snapshots(folder) + [folder / SIDECAR]:
            old.unlink(missing_ok=True)
        prepare_folder(folder, run_["run_id"])
    made = _new_record(spec, run_, checkpoint, record)
    kept = None if spec.resume is None else _kept_record(folder, run_)
    if kept is None:
        _write_record(folder, made)
    elif kept.get("finished") or kept.get("command") != made["command"]:
        # resumed on to more steps: not finished until they are; its command as resumed: another checkpoint,
        # cadence or steps (a hunt: a refusal offered the old checkpoint)
        _write_record(folder, {**kept, "command": made["command"], "finished": False})


def _new_record(spec, run_, checkpoint, record=None) -> dict:
    """The snapshot folder's run record (`RUN_RECORD`) of this run, unfinished."""
    return {"run_id": run_["run_id"], "command": _command(spec, run_, checkpoint, record),
            "seed": None if run_.get("ics") else run_["seed"], "finished": False}


def _kept_record(folder: Path, run_: dict) -> dict | None:
    """The snapshot folder's run record where it is this run's (a JSON object of its run id), else None:
    none, one damaged (empty, cut short, not JSON, not an object: the resumed run ran every step, then
    ended in a traceback) or another run's (kept, it named that run's id and seed beside this run's
    snapshots); such a record is written anew."""
    try:
        kept = read_json(folder / RUN_RECORD, "run record")
    except FileRefused:
        return None
    return kept if isinstance(kept, dict) and kept.get("run_id") == run_["run_id"] else None


def resume_command(checkpoint) -> str:
    """The command that continues the run checkpointed in `checkpoint` (quoted for a POSIX shell; a
    name that starts with `-` as `./-x.ck`: `--resume -x.ck` is taken for an option, and refused)."""
    name = str(checkpoint)
    return f"nbsymple run --resume {shell_word('./' + name if name.startswith('-') else name)}"


def _existing_checkpoint_advice(checkpoint: Path) -> str:
    """What to do about a checkpoint file that is in the way: resume it where it is one."""
    try:
        check_run(checkpoint, load(checkpoint)[0])
    except CheckpointError:
        return "it is not a checkpoint nbsymple can resume, so choose another file"
    return f"resume it with: {resume_command(checkpoint)}, or choose another file"


def _writable(folder: Path, what: str, undo):
    """`writable(folder)`; the folders it had to make are removed by `undo` (if still empty)."""
    missing = [p for p in (folder, *folder.absolute().parents) if not p.exists()]      # deepest first
    writable(folder, what)
    for made in reversed(missing):       # `undo` runs last in, first out: the deepest goes first
        undo.callback(_remove_folder, made)


def _remove_folder(folder: Path):
    try:
        folder.rmdir()
    except OSError:                      # something else came into it: it stays
        pass


def _lock(locks, path, what, folder, undo, held):
    """Hold `path`'s lock for the run; a lock file it had to make is removed by `undo`; `held`
    gains (what, path, whether a folder, the lock file's identity) for `_check_held`."""
    lock = lock_file(path, folder)
    if not os.path.lexists(lock):
        undo.callback(lock.unlink, missing_ok=True)
    try:
        unlocked = locks.enter_context(hold(path, what, folder))
    except PathBusy as e:
        raise RunStop(str(e)) from None
    except OSError as e:                 # a full disk: the process id cannot be written into it
        raise OSError(e.errno, e.strerror, str(lock)) from None
    if unlocked is not None:
        print(f"nbsymple run: {unlocked}", file=sys.stderr, flush=True)
    held.append((what, Path(path), folder, identity(Path(path), folder)))


class FolderMoved(Exception):
    """A folder the run locked is no longer under its name (`_check_held`); `took_checkpoint`:
    the run's checkpoint was in it, so it went with the folder."""

    def __init__(self, sentence: str, took_checkpoint: bool):
        super().__init__(sentence)
        self.took_checkpoint = took_checkpoint


def _check_held(held, stopped: str):
    """FolderMoved where a path the run locked is no longer under its name (`locks.moved`):
    nothing is written into whatever folder took the name, another run's locked one included."""
    for what, path, folder, taken in held:
        if moved(path, folder, taken):
            place = path if folder else path.parent
            named = f"{what}, {place}," if folder else f"the folder of {what}, {place},"
            how, went = how_moved(path, folder, taken)
            raise FolderMoved(f"{stopped}: {named} {how} while the run held it, so nothing more is written "
                              + ("under that name; what the run wrote there went with the folder" if went else
                                 "there (another run could take it now)"),
                              took_checkpoint=went and not folder)     # the checkpoint is checked first


def _write_record(folder: Path, record: dict):
    body = (json.dumps(record, indent=1) + "\n").encode()
    write_atomically(folder / RUN_RECORD, lambda f: f.write(body), f".{RUN_RECORD}.")


def run(spec: RunSpec) -> int:
    """`nbsymple run`, from the CLI or from Python: returns the exit status (0, or 128 + a signal's
    number) or raises RunStop (one sentence and the status the CLI exits with) or
    VersionUnavailable. Everything the user asked for is checked (and refused with nothing written)
    before the initial conditions are built. The signals of `entry.HELD`
    are answered from the first line (`StopSignals`). Under an MPI launcher a signal caught before
    the ranks are joined waits for them to be (a rank that ended alone would leave the others
    waiting in `MPI_Init`), then stops every rank together."""
    if not isinstance(spec, RunSpec):   # (a hunt: run(None) raised AttributeError)
        raise RunStop(f"run needs a RunSpec, got {type(spec).__name__}")
    ranks = {}
    joining = launched()                 # under mpiexec: until `version.world()`, signals wait

    def at_once(signum):                 # across ranks MPI_Abort, else StopNow where it landed
        if joining and "world" not in ranks:
            return                       # the first one, in `signals.signum`, is answered once joined
        if ranks.get("world") is not None and ranks["world"].size > 1:
            if signals.done is not None:
                _abort_at_once(signum, ranks["world"], _report_stop(signum, signals.done))
            if signals.immediate:
                _abort_at_once(signum, ranks["world"], _set_up_stop(signum, spec.resume))
            checkpoint = spec.checkpoint or spec.resume
            _abort_at_once(signum, ranks["world"], f"stopped at once by a second {signal.Signals(signum).name}"
                           + (f"; continue from the last checkpoint written: {resume_command(checkpoint)}"
                              if checkpoint else ""))
        raise StopNow(signum)

    with StopSignals(at_once, immediate=not joining) as signals:
        try:
            loaded, unreadable = _read_checkpoint(spec) if spec.resume else (None, "")
            with user_values(lambda why: RunStop(f"{spec.resume} is not a valid checkpoint ({why})")):
                if loaded:
                    _check_record(loaded[1])
                version = get_version(loaded[1]["version"] if loaded else spec.version)
            one_process = None if unreadable or version.distributed else \
                one_process_problem(f"version {version.letter}", spec.resume and resume_command(spec.resume))
            if one_process is not None:      # (a checkpoint that cannot be read is named below, first)
                raise RunStop(one_process)
            with user_values():
                # before anything is built
                options = version.options_from(loaded[1]["options"] if loaded else spec.options)
            ok, reason = version.package.availability(options)
            if not ok:
                raise VersionUnavailable(f"version {version.letter} is not available: {reason}")
            world = ranks["world"] = version.world()
            signals.reclaim()                                      # from what MPI_Init installed
            signals.immediate = True
            caught = world.first(signals.signum)                   # by any rank while they were joined
            ok, reason = world.agree(not unreadable, unreadable)    # every rank read the same file, or none runs
            if ok and loaded and world.size > 1:      # the same: ranks of other folders read other files of that
                mine = _loaded_digest(loaded)         # name, and stepped in their own precision or hung (a hunt)
                ok, reason = world.agree(mine == world.broadcast_object(mine),
                                         f"{spec.resume} here is not the checkpoint rank 0 read (another file of "
                                         f"that name); every rank must read one file: run from a folder they share")
            try:
                if caught is not None:
                    raise RunStop(_set_up_stop(caught, spec.resume), status=128 + caught)
                if not ok:
                    raise RunStop(reason.split(": ", 1)[1] if world.size == 1 else reason)
                return _run(spec, world, signals, loaded)
            except RunStop as e:
                e.speak = e.speak and world.is_root    # every rank stops alike; rank 0 says why
                raise
        except StopNow as e:                 # a process of its own (outside mpiexec, or A-E under it)
            wait_for_rank_0(launcher_rank())
            stop = RunStop(_set_up_stop(e.signum, spec.resume), status=128 + e.signum)
            stop.speak = True                # the process that caught it says why (`wait_for_rank_0`)
            raise stop from None


def _run(spec, world, signals, loaded) -> int:
    if spec.checkpoint_every is not None and spec.checkpoint is None and spec.resume is None:
        raise RunStop("--checkpoint-every needs --checkpoint FILE")
    checkpoint = Path(spec.checkpoint or spec.resume) if (spec.checkpoint or spec.resume) else None
    run_, build = _resumed(spec, world, loaded) if spec.resume else _fresh(spec, world)
    nothing_run = (f"{spec.resume} is unchanged; continue with: {resume_command(spec.resume)}" if spec.resume
                   else "no step had run")
    held = []                            # the paths locked, checked before each write (`_check_held`)
    with ExitStack() as locks:
        with ExitStack() as undo:        # a set-up that fails leaves no folder or lock file it made
            def check_paths():
                with stop_on_write_fault(nothing_run):
                    return _checked_paths(spec, run_, checkpoint, loaded, locks, undo, held)

            def claim():
                with stop_on_write_fault(nothing_run):
                    _claim(spec, run_, checkpoint, folder, restart, loaded[1] if loaded else None)
            folder, restart = on_root(world, check_paths)
            signals.catching = checkpoint is not None or world.size > 1     # ranks must stop after the same step
            sim = build()
            on_root(world, claim)
            undo.pop_all()
        start = sim.steps_done
        _steps(spec, run_, sim, folder, checkpoint, signals, held)
        steps = run_["steps"]
        done = f"the run finished its {steps} step{'s' if steps != 1 else ''}" + (
            "" if checkpoint is None else f"; its checkpoint {checkpoint} (step {sim.steps_done}) is written")

        def finish():
            try:
                _check_held(held, f"{done}, but {RUN_RECORD} does not say so")
            except FolderMoved as e:
                raise RunStop(str(e), status=FAULT) from None
            with stop_on_write_fault(f"{done}, but {RUN_RECORD} does not say so", started=True):
                record = _kept_record(folder, run_) or _new_record(spec, run_, checkpoint,
                                                                       loaded[1] if loaded else None)
                _write_record(folder, {**record, "finished": True})
        signals.done = done             # a signal from here on stops the report (its O(N^2) errors) at once
        try:
            if folder is not None:
                on_root(world, finish)
            if (caught := world.first(signals.signum)) is not None:    # after the last step's check
                raise StopNow(caught)
            signals.immediate = True
            return report(spec, run_, sim, folder, checkpoint, start)
        except StopNow as e:
            raise RunStop(_report_stop(e.signum, done), status=128 + e.signum) from None
        except OutputFailed as e:       # stdout is full or gone: `entry.command` says so, and what is kept
            e.add_note(done)
            raise


def _set_up_stop(signum: int, resume) -> str:
    """The sentence of a signal that stopped the run at once during the set-up, before the first
    step (which loses nothing); one during a step is `_steps`' own."""
    kept = f"; {resume} is unchanged" if resume else "; no step had run: the same command starts it again"
    return f"stopped by {signal.Signals(signum).name} during the set-up, before the first step{kept}"


def _report_stop(signum: int, done: str) -> str:
    """The sentence of a signal after the last step, while the report was made: nothing is lost
    but the report."""
    return f"{done}; stopped by {signal.Signals(signum).name} before its report was printed"


def _abort_at_once(signum: int, world, message: str):
    """Across ranks, a signal that must stop the job at once ends it with `MPI_Abort`, from the
    signal handler (a rank may be waiting in a collective, or inside compiled code that would
    swallow an exception), the rank that caught it saying why. A signal sent to the whole job
    reaches every rank: rank 0 speaks and aborts at once, the others wait a moment first, so that
    its abort ends them before they speak (one sentence); a signal sent to one rank alone is
    answered by that rank."""
    release_shared_memory()              # on every node, before its ranks wait for the abort
    wait_for_rank_0(world.rank)
    print(f"nbsymple run: {message}", file=sys.stderr, flush=True)
    time.sleep(0.2)                      # let the sentence reach mpiexec before the abort
    world.abort(128 + signum)


def _steps(spec, run_, sim, folder, checkpoint, signals, held=()):
    """Step to the run's total with snapshots and checkpoints; a signal (caught by `signals` on
    any rank) or a non-finite value stops it after a whole step, a fault of the machine (a full
    disk, a folder removed) at the write that failed: each in one sentence that names the last
    good checkpoint and how to resume it."""
    world = sim.world
    total, fmt, start = run_["steps"], run_.get("snapshot_format", "npz"), sim.steps_done
    # the last checkpoint on disk under `checkpoint`: a resume into another file has none yet
    same = spec.resume is not None and os.path.realpath(checkpoint) == os.path.realpath(spec.resume)
    saved = {"step": start if same else None}
    # written under its one real name, the one locked (`_checked_paths`), not through a link's
    target = resolved(checkpoint, "--checkpoint") if checkpoint is not None and world.is_root else None

    continued, stood_still = stopped_and_continued(), run_.get("stood_still") or 0
    session = session_device(sim)
    run_["devices"] = list(dict.fromkeys([*(run_.get("devices") or []), session]))    # each session's, in order

    def count_stops():
        """The stops (SIGSTOP and SIGCONT) while the ranks stepped, this session's added to the
        earlier sessions' (collective): the most any rank had, since a job suspended stops every
        rank once; the report says its times include them."""
        run_["stood_still"] = stood_still + int(world.max(stopped_and_continued() - continued))

    def write_snapshot_(step):
        sim.gather()
        if world.is_root:
            _check_held(held, f"the run stopped after step {sim.steps_done} of {total}")
            write_snapshot(folder, sim.state, step, run_["run_id"], fmt)

    def save_(stopping=False):
        if checkpoint is None:
            return
        sim.gather()
        count_stops()
        if world.is_root:
            _check_held(held, f"the run stopped after step {sim.steps_done} of {total}")
            save(target, run_, sim)
        saved["step"] = sim.steps_done

    def resume_hint() -> str:
        if checkpoint is None:
            return ""
        # a snapshot folder no longer there: a resume needs another (a hunt: `--resume FILE` alone was refused)
        more = " --snapshots DIR (where the folder is now, or a new one for the rest)" \
            if folder is not None and not os.path.isdir(folder) else ""
        if saved["step"] is None:
            return (f"; {spec.resume} is unchanged; continue with: {resume_command(spec.resume)}{more}" if spec.resume
                    else f"; no checkpoint was written yet ({checkpoint} does not exist)")
        if not checkpoint.is_file():     # (a hunt: replaced by a folder while the run stepped, the hint named it)
            now = f"{kind} stands there now" if (kind := odd_kind(checkpoint)) else "it was removed"
            return (f"; the last good checkpoint, {checkpoint} (step {saved['step']}), is no longer there ({now}): "
                    f"nothing is left to continue from")
        return (f"; the last good checkpoint, {checkpoint} (step {saved['step']}), is kept; continue with: "
                f"{resume_command(checkpoint)}{more}")

    progress = Progress(f"version {sim.version.letter}" + (f", {world.size} ranks" if world.size > 1 else ""),
                        total - start, enabled=world.is_root and (spec.progress or launcher_on_terminal()))

    def stop_asked() -> bool:
        return world.any(signals.signum is not None) if signals.catching else False

    try:
        signals.immediate = not signals.catching     # from here on a signal stops after a whole step
        step_run(sim, run_, fresh=spec.resume is None, snapshot=write_snapshot_, checkpoint=save_,
                 stop_asked=stop_asked, progress=progress)
        count_stops()
    except NonFiniteState as e:          # every rank raises it together
        raise RunStop(f"{e}, so the run stopped there (where the time step made them, not a fault, a resumed run "
                      f"makes them again: start anew with a smaller --dt){resume_hint()}", status=3) from None
    except Stopped:
        signum = world.first(signals.signum) or signal.SIGTERM     # whichever rank caught it, the first in rank order
        name = signal.Signals(signum).name
        if checkpoint is None:
            raise RunStop(f"stopped by {name} after step {sim.steps_done} of {total} (no --checkpoint: it cannot "
                          f"be resumed)", status=128 + signum) from None
        raise RunStop(f"stopped by {name} after step {sim.steps_done} of {total}; checkpoint written to "
                      f"{checkpoint}; continue with: {resume_command(checkpoint)}",
                      status=128 + signum) from None
    except StopNow as e:                 # at once, mid-step: no checkpoint, or a second signal
        lost = resume_hint() if checkpoint is not None else " (no --checkpoint: it cannot be resumed)"
        # or between steps, in a snapshot or checkpoint (a mutation hunt: "during step k+1" was said of those)
        where = (f"during step {sim.steps_done + 1} of {total}" if sim.cut_short is not None
                 else f"after step {sim.steps_done} of {total}, while its output was written")
        raise RunStop(f"stopped by {signal.Signals(e.signum).name} {where}{lost}", status=128 + e.signum) from None
    except FolderMoved as e:
        kept = (" (its checkpoint too: where the folder was renamed, resume the checkpoint there)"
                if e.took_checkpoint and saved["step"] is not None else resume_hint())
        raise RunStop(f"{e}{kept}", status=FAULT) from None
    except SnapshotError as e:           # the folder's sidecar changed under the run (another run's, scale)
        raise RunStop(f"the run stopped after step {sim.steps_done} of {total}: {e}{resume_hint()}") from None
    except OSError as e:                 # the machine: a full disk, a folder removed, a file made read-only
        where = f" ({name})" if (name := written_name(e)) else ""
        raise RunStop(f"the run stopped after step {sim.steps_done} of {total}: {os_reason(e)}{where}"
                      f"{resume_hint()}", status=FAULT) from None
