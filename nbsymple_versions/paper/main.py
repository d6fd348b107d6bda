"""`nbsymple paper [options]`: the command line, and the order in which the artefacts are made.

Everything the user typed (options, the results folder, the output folder, the science version)
is checked before anything is written: a mistake is one sentence on stderr, exit status 2, and
nothing is overwritten. After that each artefact is written on its own: one that cannot be made
is named in one sentence (on stderr and in REPORT.md's notes) and the others are still written;
the last line names every artefact asked for that was not written, and the status is then 1
(with --no-science, a science figure without a finished run or an earlier copy is not asked for).
`--full` makes only the full-size tidal-tail run, its figure and its table (`full_size`).
SIGINT, SIGTERM, SIGHUP, SIGXCPU, SIGUSR1, SIGUSR2 or SIGALRM stops a science run with a checkpoint (status 128 +
the signal's number) and writes no REPORT.md; the same command resumes it. So does a write that
fails during a science run (a full disk: status 4, the last good checkpoint named).
The modules that draw (`figures`, `science_plots`, `full_size`) are imported where a figure is
made, not at the start: a command refused, or asked for --help, answers without matplotlib.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from contextlib import ExitStack
from pathlib import Path

from ..core.checks import SEED_BOUND, as_float
from ..core.options import whole_number_argument
from ..entry import sentence, stop_pending
from ..environment import os_reason
from ..core.vocabulary import PRECISIONS
from ..instruments.provenance import pin_commit
from ..arguments import Parser, folder_argument, path_argument
from ..runs.errors import in_the_way_of, writable
from ..runs.locks import hold
from ..runs.paths import (FileRefused, blocking, failed_write, inside, read_bytes, read_json, remove_stale_temporaries,
                          write_file)
from ..runs.snapshots import SnapshotError
from ..gpu_pairwise.simulator import cuda_simulator
from ..versions import LETTERS, TABLE, get_version, simulated
from .data import GPU_RANGE, PAPER_NEEDS, MissingData, describe_machine, source_line, task_share_table, with_predicted
from .prediction import DEFAULT_GPU, GPUS, PredictionUnavailable, gpu_named, predict
from . import records
from .report import TITLE, foreign_file, science_record_line, write_report
from .results import Results, ResultsError, load_results, name_problem, quoted
from ..runs.errors import FAULT
from .resumable import CHECKPOINT, RUN_FILE, Busy, Interrupted, OtherRun, WriteFault, kept_problem
from .science_runs import (BH_DEFAULTS, FULL_ORBITS, TIDAL_DEFAULTS, TIDAL_FULL, TIDAL_FULL_N, STEPS_PER_ENCOUNTER,
                           black_hole_params, check_black_hole_work, check_tidal_work, fmt_dt, ratio_folder,
                           run_black_hole, run_folder, run_tidal_tails, step_rule, tidal_params)
from .tables import (CONSERVATION_TITLE, SHARES_HEADER, SHARES_TITLE, write_conservation, write_task_shares_csv,
                     write_task_shares_md)

SCIENCE_SUMMARIES = "science_runs.json"
# versions for the full-N science run, in order of preference: GPU forces, all CPU cores on the host
FULL_N_VERSIONS = tuple(v.letter for v in TABLE if v.gpu and v.host_kernels == "threaded")
SCIENCE_LETTERS = tuple(v.letter for v in TABLE if v.letter in LETTERS[:5])   # A-E (F needs MPI)
# what `written` calls each benchmark artefact, and its file: all of them are asked for unless --full
BENCHMARK_FILES = {"time_per_step": "time_per_step.png", "speedup": "speedup.png", "dp_vs_dsp": "dp_vs_dsp.png",
                   "task_shares_csv": "task_shares.csv", "task_shares_md": "task_shares.md",
                   "task_shares_png": "task_shares.png", "conservation": "conservation.md"}
_PNG = re.compile(rb"\x89PNG\r\n\x1a\n.*?tEXtSoftware\x00Matplotlib", re.S)     # a PNG with matplotlib's tEXt chunk
# how each file paper writes (all but --full's) begins: another is refused, not replaced (`foreign_file`; a hunt:
# a user's notes at science_runs.json, a figure at a science figure's name, were replaced)
OWN_STARTS = {name: re.compile(re.escape(start.encode())) for name, start in {
    "REPORT.md": TITLE, "conservation.md": CONSERVATION_TITLE, "task_shares.md": SHARES_TITLE,
    "task_shares.csv": ",".join(SHARES_HEADER[:2]) + ","}.items()}    # an older paper's had no source column
OWN_STARTS |= {f: _PNG for f in (*BENCHMARK_FILES.values(), "tidal_tails.png", "black_hole_passage.png")
               if f.endswith(".png")}
OWN_STARTS[SCIENCE_SUMMARIES] = re.compile(rb'\{\s*(\}|"(black_hole|tidal_tails)")')     # its first key (sorted)
FULL_TABLE_START = re.compile(rb"# Tidal tails at N = ")        # --full's table (`_own_files`)


class PaperError(Exception):
    """A mistake in what the user typed: one sentence, exit status 2, nothing written."""


class _Parser(Parser):
    def error(self, message):
        raise PaperError(f"{message}{self._taken_for_an_option(message)} (see nbsymple paper --help)")


def _number(kind, minimum, what):
    """argparse type: a finite `kind` number >= minimum (> 0 when minimum is 0.0)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not math.isfinite(as_float(value)) or value < minimum or (minimum == 0 and value <= 0):   # 10**400 too
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value
    return parse


def _name(text: str) -> str:
    """argparse type of --machine and --commit: a name, not an empty one (an unset shell variable),
    and one that prints, in UTF-8 (asv writes no other; a line feed would split the sentences
    naming it: `results.name_problem`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"needs a name, got {text!r}")
    if (why := name_problem(text)) is not None:
        raise argparse.ArgumentTypeError(f"{quoted(text[:40] + ('...' if len(text) > 40 else ''))} {why}")
    if "/" in text or text in (".", ".."):      # a path would read a folder outside --results, named as typed
        raise argparse.ArgumentTypeError(f"{text!r} is a path; give the folder's name alone, as --results holds it")
    return text


def _commit(text: str) -> str:
    """argparse type of --commit: a name (`_name`) that is a commit hash or its prefix, hexadecimal
    digits in either case, as git reads them (a hunt: 'f86a8e19 ', a blank after it, was "no results
    for commit f86a8e19  (it has: f86a8e19)", the same on screen)."""
    text = _name(text)
    if re.fullmatch("[0-9a-fA-F]+", text) is None:
        raise argparse.ArgumentTypeError(f"expected a commit hash or its prefix (hexadecimal digits), got "
                                         f"{quoted(text[:40] + ('...' if len(text) > 40 else ''))}")
    return text


COUNT = _number(int, 2, "a whole number of at least 2")
POSITIVE = _number(float, 0.0, "a positive finite number")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="nbsymple paper",
        description="Regenerate the paper's figures and tables from asv results (and the science figures "
                    "from simulation runs) into one folder.")
    p.add_argument("--results", default="results", type=path_argument,
                   help="asv results folder (default: results)")
    p.add_argument("--machine", default=None, type=_name,
                   help="machine folder under --results (default: the only one, or, of those whose chosen commit "
                        "lacks the fewest benchmarks the figures need, the one that ran last)")
    p.add_argument("--commit", default=None, type=_commit,
                   help="commit hash or prefix (default: the newest commit whose results hold every benchmark the "
                        "figures need; stdout names it)")
    p.add_argument("--out", default="plots", type=folder_argument, help="output folder (default: plots)")
    p.add_argument("--science", action=argparse.BooleanOptionalAction, default=True,
                   help="run the tidal-tail and black-hole simulations (finished runs with the same "
                        "parameters in OUT/runs/ are reused); --no-science only re-plots existing runs")
    p.add_argument("--rerun", action="store_true", help="re-run the simulations even if finished runs exist")
    p.add_argument("--full", action="store_true",
                   help=f"only the paper's science at full size: the tidal-tail run at N = {TIDAL_FULL_N} over "
                        f"{TIDAL_FULL['orbits']:g} orbits ({TIDAL_FULL['precision']}), checkpointed and resumed by the "
                        f"same command, drawn as tidal_tails_n<N>.png with its table tidal_tails_n<N>.md (other "
                        f"orbits or precision named after N, as tidal_tails_n4096_0.5orb_dp.md); each "
                        f"--tidal-dt runs in its own folder and joins the series over dt (its table, verdict and "
                        f"..._dt_series.png; the figure shows the smallest dt that finished); "
                        f"version {FULL_N_VERSIONS[0]} where a GPU is available, else {TIDAL_DEFAULTS['version']}")
    p.add_argument("--science-version", default=None, type=str.upper, choices=SCIENCE_LETTERS,
                   help=f"version for the simulations (default {TIDAL_DEFAULTS['version']}; "
                        f"{FULL_N_VERSIONS[0]} with --full if a GPU is available)")
    p.add_argument("--tidal-n", type=COUNT, default=None, help=f"bodies in the tidal-tail run (default "
                                                               f"{TIDAL_DEFAULTS['n']}, {TIDAL_FULL_N} with --full)")
    p.add_argument("--tidal-dt", type=POSITIVE, default=None,
                   help=f"time step of the tidal-tail run in T (default {fmt_dt(TIDAL_DEFAULTS['dt'])} T, the "
                        f"encounter time at the softening length over {STEPS_PER_ENCOUNTER}, rounded down to a power "
                        f"of two; {fmt_dt(TIDAL_FULL['dt'])} T with --full)")
    p.add_argument("--tidal-orbits", type=POSITIVE, default=None,
                   help=f"orbits to integrate (default {TIDAL_DEFAULTS['orbits']:g})")
    p.add_argument("--tidal-seed", type=whole_number_argument(1, SEED_BOUND, "2**128"), default=1,   # as --seed
                   help="seed of the tidal-tail run's initial conditions (default 1); with --full each seed runs in "
                        "its own folder and joins the series over dt, whose test uses the seeds' scatter")
    p.add_argument("--tidal-precision", default=None, type=str.lower, choices=PRECISIONS,
                   help=f"precision of the tidal-tail run (default {TIDAL_DEFAULTS['precision']}, "
                        f"{TIDAL_FULL['precision']} with --full)")
    p.add_argument("--bh-n", type=COUNT, default=BH_DEFAULTS["n"],
                   help=f"bodies in the black-hole runs (default {BH_DEFAULTS['n']})")
    p.add_argument("--bh-ratios", type=POSITIVE, nargs="+", default=list(BH_DEFAULTS["ratios"]),
                   help="black-hole to cluster mass ratios (default: 1 10)")
    p.add_argument("--bh-dt", type=POSITIVE, default=BH_DEFAULTS["dt"],
                   help=f"time step of the black-hole runs in T (default {fmt_dt(BH_DEFAULTS['dt'])} T)")
    p.add_argument("--bh-t-end", type=POSITIVE, default=BH_DEFAULTS["t_end"],
                   help=f"duration of the black-hole runs in T (default {BH_DEFAULTS['t_end']:g})")
    p.add_argument("--gpu-model", default=None, type=str.upper, choices=tuple(GPUS),
                   help=f"GPU the GPU versions {GPU_RANGE} are predicted for where the results lack them (default: "
                        f"the results' GPU if it is one of these, else {DEFAULT_GPU})")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def _say(msg: str):
    print(sentence(f"nbsymple paper: {msg}"), file=sys.stderr, flush=True)


def _available(letter: str) -> tuple[bool, str]:
    try:
        return get_version(letter).available()
    except Exception as exc:   # noqa: BLE001 - a broken optional GPU stack means: not available
        return False, f"{type(exc).__name__}: {exc}"


def _science_version(args) -> str:
    """The version the simulations run on: --science-version, else with --full the first GPU
    version available on a GPU (not in numba's CUDA simulator, ten million times slower), else B."""
    if args.science_version:
        return args.science_version
    default = TIDAL_DEFAULTS["version"]
    if args.full:
        for letter in FULL_N_VERSIONS:
            if _available(letter)[0] and not simulated(letter):
                return letter
        if args.science:
            where = " (the CUDA simulator is not one)" if cuda_simulator() else ""
            _say(f"no GPU version is available{where}; the N = {_tidal(args)['n']} run uses version {default}.")
    return default


def _tidal(args) -> dict:
    """The tidal-tail run's n, dt, orbits and precision: the options given, else the defaults of
    the run asked for (the default run, or the full-size one with --full)."""
    base = {**TIDAL_DEFAULTS, **(TIDAL_FULL if args.full else {})}
    given = {"n": args.tidal_n, "dt": args.tidal_dt, "orbits": args.tidal_orbits, "precision": args.tidal_precision}
    return {k: base[k] if v is None else v for k, v in given.items()}


def _check_inputs(args) -> Results | None:
    """Everything the user typed, before anything is written: the results (unless --full), the
    science version and the output folder. Raises PaperError (one sentence)."""
    res = None
    if not args.full:
        try:
            res = load_results(args.results, args.machine, args.commit, needs=PAPER_NEEDS)
        except ResultsError as exc:
            raise PaperError(str(exc).rstrip(".") + "; nothing was written") from None
    if args.science:                # the runs that would be made: no run of no steps, none beyond the machine
        tidal = _tidal(args)
        version = args.science_version or TIDAL_DEFAULTS["version"]   # --full's default: a GPU, never simulated
        try:
            check_tidal_work(tidal["n"], tidal["dt"], tidal["orbits"], version=version)
            if args.full and tidal["orbits"] < min(FULL_ORBITS) - 0.05:
                raise ValueError(f"--tidal-orbits {tidal['orbits']:g}: the full-size figure shows the cluster at "
                                 f"{', '.join(f'{k:g}' for k in FULL_ORBITS)} orbits, so the run needs at least "
                                 f"{min(FULL_ORBITS):g}")
            if not args.full:
                check_black_hole_work(args.bh_n, args.bh_dt, args.bh_t_end, args.bh_ratios, version)
        except ValueError as exc:
            raise PaperError(str(exc)) from None
    if args.science and args.science_version:
        ok, reason = _available(args.science_version)
        if not ok:
            raise PaperError(f"version {args.science_version} is not available for the simulations: {reason}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise PaperError(f"--out {out} is {blocking(out)[1]}, not a folder")
    if not args.full and inside(out, args.results):    # a hunt: its science_runs.json then read as asv results
        raise PaperError(f"--out {out} is inside --results {args.results}, where what paper writes would be "
                         f"read as asv results; give --out a folder outside it")
    for name, own in _own_files(args).items():
        if (why := foreign_file(out / name, own)) is not None:
            raise PaperError(f"--out {out} holds a {name} {why}, which it would replace; give another --out, or "
                             f"move that file away")
    writable(out, "the figures (--out)", PaperError)
    remove_stale_temporaries(out)
    if args.science:                # checked before hours of runs, not when their figure is drawn
        for folder, params in _science_runs(args, out):  # a file or a dangling link in a run's way: a traceback
            if (why := in_the_way_of(folder)) is not None:              # of --full, after the figures of the rest
                raise PaperError(f"cannot write the science run into {folder}: {why}")
            if not args.rerun and (kept := kept_problem(folder, params)) is not None:   # (a hunt: deleted and run
                raise PaperError(f"{folder} holds {kept}, which is kept; give --rerun to replace it, or another "
                                 f"--out")                                             # again, or status 1)
        if (out / "runs").is_dir():
            writable(out / "runs", "the science runs", PaperError)
    return res


def _own_files(args) -> dict:
    """{file name: how it begins} of the files in OUT this command is to replace: with --full, the
    full-size run's table and figures, named after its parameters (`dt_series.stem`)."""
    if not args.full:
        return OWN_STARTS
    from .dt_series import figure_name, stem
    params = tidal_params(**_tidal(args))
    return {f"{stem(params)}.md": FULL_TABLE_START, f"{stem(params)}.png": _PNG, figure_name(params): _PNG}


def _tidal_run(args, out: Path) -> tuple[Path, dict]:
    """The tidal-tail run asked for: its folder and its parameters (those of `tidal_params`)."""
    tidal = _tidal(args)
    given = {**tidal, "version": args.run_version, "seed": args.tidal_seed}
    if args.full:
        return run_folder(out, tidal["n"], tidal["dt"], tidal["orbits"], args.tidal_seed, tidal["precision"]), given
    return out / "runs" / "tidal_tails", given


def _black_hole_asked(args) -> dict:
    """The black-hole runs' parameters asked for, but the ratio (those of `black_hole_params`)."""
    return {"n": args.bh_n, "dt": args.bh_dt, "t_end": args.bh_t_end, "version": args.run_version}


def _science_runs(args, out: Path) -> list[tuple[Path, dict]]:
    """The folder of each science run asked for, and the parameters of the run it is to hold."""
    folder, given = _tidal_run(args, out)
    runs = [(folder, tidal_params(**given))]
    if not args.full:
        runs += [(out / "runs" / "black_hole" / ratio_folder(r), black_hole_params(r, **_black_hole_asked(args)))
                 for r in args.bh_ratios]
    return runs


def _read_science_summaries(out: Path, note) -> dict:
    """The records of the science figures in OUT (small, committed beside the PNGs:
    {"summary": one paragraph, "runs": each run's energy errors}), so that `--no-science` on a
    fresh clone keeps them in REPORT.md; a bare paragraph (an earlier version's) has no runs.
    Each is checked (`records.SCIENCE_RECORD`); one that is not what paper wrote is noted and not kept."""
    if not os.path.lexists(out / SCIENCE_SUMMARIES):
        return {}
    try:                                 # a regular file of bounded JSON; one that is not is said (a hunt: the
        data = read_json(out / SCIENCE_SUMMARIES, "run record")      # figures were "not written: no finished
    except FileRefused as exc:                                        # run", the file's fault unsaid)
        note(f"{exc}, so the records of the science figures in it are not kept.")
        return {}
    if not isinstance(data, dict):
        note(f"{out}/{SCIENCE_SUMMARIES} is not one that nbsymple paper wrote (not a JSON object), so the records of "
             f"the science figures in it are not kept.")
        return {}
    kept = {}
    for key, record in data.items():
        if isinstance(record, str):
            record = {"summary": record, "runs": []}
        if (why := records.problem(record, records.SCIENCE_RECORD)) is None:
            kept[key] = record
        elif records.one_line(key):
            note(f"the record of {key} in {out}/{SCIENCE_SUMMARIES} is not one that nbsymple paper wrote "
                 f"({why}); it is not kept.")
    return kept


def _full_size_tables(out: Path, note) -> list[tuple[Path, str]]:
    """[(path, text)] of the full-size tables in OUT (`tidal_tails_n<N>.md`, `--full`'s), for
    REPORT.md: each read as a regular file of bounded size; one that is not, or is not a
    Markdown table with its title, is noted and left out."""
    tables = []
    for md in sorted(out.glob("tidal_tails_n*.md")):
        try:
            text = read_bytes(md, "Markdown table").decode("utf-8", "replace")
        except FileRefused as exc:
            note(f"{md.name} is not in REPORT.md: {exc}.")
            continue
        if not text.startswith("# "):
            note(f"{md.name} is not in REPORT.md: it does not begin with the title `nbsymple paper --full` writes.")
            continue
        tables.append((md, text))
    return tables


def _write_science_summaries(out: Path, summaries: dict):
    write_file(out / SCIENCE_SUMMARIES, json.dumps(summaries, indent=2, sort_keys=True) + "\n")


def _prediction(res: Results, gpu_model: str | None, note):
    """The GPU versions predicted for the chosen GPU (`prediction`), or None (a note says why)."""
    try:
        return predict(res, gpu_named(describe_machine(res)["device"], gpu_model))
    except (MissingData, PredictionUnavailable) as exc:
        note(f"the GPU versions {GPU_RANGE} are not predicted: {exc}.")
        return None


def _benchmark_artefacts(res: Results, out: Path, written: dict, note, prediction) -> list | None:
    """The benchmark figures and tables, with the GPU versions `prediction` has where the results
    lack them, each written or noted (the data it lacks, or a write that failed); returns the
    task-share table (None if it is missing)."""
    from .figures import dp_vs_dsp, speedup, task_shares, time_per_step      # matplotlib: see the module's text
    source = source_line(res)
    draws = {"time_per_step": lambda path: time_per_step(res, path, prediction),
             "speedup": lambda path: speedup(res, path, prediction), "dp_vs_dsp": lambda path: dp_vs_dsp(res, path)}
    try:
        shares, origin = task_share_table(res)
        share_source = source
        if prediction is not None:
            shares = with_predicted(shares, prediction.share_rows())
            share_source += f"; {GPU_RANGE} rows without results: {prediction.label}"
        draws.update(task_shares_csv=lambda path: write_task_shares_csv(shares, path),
                     task_shares_md=lambda path: write_task_shares_md(shares, origin, path, share_source),
                     task_shares_png=lambda path: task_shares(shares, path, share_source))
    except MissingData as exc:
        shares = None
        note(f"task_shares.md, .csv and .png not written: {exc}.")
    draws["conservation"] = lambda path: write_conservation(res, path, source)
    for key, draw in draws.items():
        fname = BENCHMARK_FILES[key]
        try:
            draw(out / fname)
            written[key] = fname
        except (MissingData, OSError) as exc:
            note(f"{fname} not written: {_why(exc, out / fname)}.")
    return shares


def _why(exc: Exception, path: Path) -> str:
    """Why artefact `path` was not written: the data it lacks, its write failed (a folder in its
    place, a full disk: the file named), or a file it is made from could not be read (named: a
    review, such a file was said to be one that "cannot be written")."""
    if not isinstance(exc, OSError):
        return str(exc)
    if failed_write(exc) is None and exc.filename:
        return f"{os_reason(exc)} ({exc.filename})"
    return f"{failed_write(exc) or path} cannot be written ({os_reason(exc)})"


def _science_artefacts(args, out: Path, written: dict, note) -> tuple[dict, list]:
    """The science runs (unless --no-science) and their figures; returns (summaries, the
    figures asked for that were not written). `Interrupted` (a signal stopped a run, its
    checkpoint written) is passed on."""
    from .science_plots import plot_black_hole, plot_tidal_tails            # matplotlib: see the module's text
    summaries: dict[str, str] = {}
    failed = []
    runs = out / "runs"
    progress = not args.quiet
    tidal_folder, tidal = _tidal_run(args, out)
    if args.science and progress:
        _say(f"tidal tails, N = {tidal['n']}: {step_rule(tidal['n'], tidal['dt'])}.")
    jobs = [
        ("tidal_tails", "tidal_tails.png", tidal_folder,
         lambda: run_tidal_tails(tidal_folder, progress=progress, rerun=args.rerun, **tidal),
         plot_tidal_tails),
        ("black_hole", "black_hole_passage.png", runs / "black_hole",
         lambda: run_black_hole(runs / "black_hole", ratios=tuple(args.bh_ratios), progress=progress,
                                rerun=args.rerun, **_black_hole_asked(args)),
         lambda folder, path: plot_black_hole(folder, path, tuple(args.bh_ratios) if args.science else None)),
    ]
    kept = _read_science_summaries(out, note)
    for key, fname, folder, run, plot in jobs:
        stop_pending()                   # a signal swallowed in a callback since: not the next run whole
        try:
            if args.science:
                run()
            elif not (folder / RUN_FILE).exists() and not any(folder.glob(f"*/{RUN_FILE}")):   # no finished run
                why = f"no finished run in {out}/runs/{folder.name}/ and --no-science given" + (
                    "; the same command without --no-science resumes the run stopped there"
                    if folder.exists() and any(folder.rglob(CHECKPOINT)) else "")
                if (out / fname).exists() and key in kept:
                    _say(f"kept {fname} from its earlier run ({why}).")
                    summaries[key] = kept[key]
                    written[key] = fname
                else:
                    note(f"{fname} not written: {why}.")
                continue
            _, summaries[key] = plot(folder, out / fname)
            written[key] = fname
            for r in summaries[key]["runs"]:
                _say(f"{fname}: {r['run']}, {science_record_line(r)}.")
            kept[key] = summaries[key]
            try:                         # the figure is written: a failure here is the record's alone (a hunt:
                _write_science_summaries(out, kept)     # "tidal_tails.png not written: OSError: [Errno 28]...")
                written["summaries"] = SCIENCE_SUMMARIES     # in the list of files written (a hunt: left out)
            except OSError as exc:
                failed = [*(f for f in failed if f != SCIENCE_SUMMARIES), SCIENCE_SUMMARIES]
                note(f"{SCIENCE_SUMMARIES} not written: {_why(exc, out / SCIENCE_SUMMARIES)}.")
        except (Interrupted, Busy, WriteFault):
            raise
        except OtherRun as exc:          # kept, made since `_check_inputs` (which refuses one found before anything
            # is written, status 2); the benchmarks' artefacts are written by now: status 1
            failed.append(fname)
            note(f"{fname} not written: {exc}.")
        except (FileNotFoundError, FileRefused) as exc:      # no run, or a record that is none
            failed.append(fname)
            note(f"{fname} not written: {exc}.")
        except OSError as exc:           # its figure's write (a full disk), or a read of its run's files
            failed.append(fname)
            note(f"{fname} not written: {_why(exc, out / fname)}.")
        except Exception as exc:  # noqa: BLE001 - one sentence, the other artefacts still get written
            failed.append(fname)
            note(f"{fname} not written: {type(exc).__name__}: {exc}.")
    return summaries, failed


def _full(args, out: Path) -> int:
    """`--full`: the full-size tidal-tail run (or, with --no-science, its finished snapshots),
    its figure and its table; nothing else is touched."""
    from .full_size import write_full_size, write_series                    # matplotlib: see the module's text
    folder, tidal = _tidal_run(args, out)
    if args.science:
        try:
            run_tidal_tails(folder, progress=not args.quiet, rerun=args.rerun, **tidal)
        except FileRefused as exc:      # its folder made a file since the check (`resumable.run`)
            _say(f"the full-size run was not made: {exc}.")
            return 2
    try:
        if args.science or (folder / RUN_FILE).exists():
            files = write_full_size(folder, out)
        else:                   # --no-science and the run's snapshots gone: the series from its JSON
            files = write_series(out, {"n": tidal["n"], "orbits": tidal["orbits"], "scheme": "leapfrog",
                                       "precision": tidal["precision"], "snapshots_per_orbit": 4})
    except (FileNotFoundError, FileRefused, SnapshotError) as exc:   # no run; a record, table, snapshot that is none
        _say(f"the full-size figure was not written: {exc}.")
        return 1
    except OSError as exc:              # a folder in a file's place, a full disk
        _say(f"the full-size figure was not written: {_why(exc, out)}.")
        return 1
    _say(f"wrote {', '.join(p.name for p in files)} into {out}/")
    return 0


def main(argv=None) -> int:
    """Entry point (`nbsymple paper ...` or `python -m nbsymple_versions.paper ...`); returns the exit
    status: 0 if everything asked for was written, 1 if an artefact was not, 2 for a mistake in the input
    (nothing written), 4 if a write failed during a science run (a full disk: the last good checkpoint
    is named), 128 + the signal's number if a signal stopped a science run.
    The checkout's commit is read first (`pin_commit`): the figures, tables and runs name the
    tree as the command found it, not as its own writes into plots/ leave it."""
    pin_commit()
    try:
        args = _parser().parse_args(argv)
        args.run_version = _science_version(args)           # the simulations', chosen once
        res = _check_inputs(args)
    except PaperError as exc:
        _say(str(exc) + ("" if str(exc).endswith(".") else "."))
        return 2
    out = Path(args.out)
    try:
        if args.full:                   # its own files and run folder (locked) alone
            return _full(args, out)
        with ExitStack() as held:       # two at once mixed their figures, REPORT.md and science_runs.json (a hunt)
            try:
                unlocked = held.enter_context(hold(out, "--out", folder=True))
            except Busy as exc:
                _say(f"{exc}; nothing was written.")
                return 2
            if unlocked is not None:
                _say(f"{unlocked}.")
            return _everything(args, res, out)
    except Interrupted as exc:
        _say(f"{exc}" + ("." if args.full else "; REPORT.md was not rewritten."))
        return 128 + exc.signum
    except (Busy, OtherRun) as exc:
        _say(f"{exc}" + ("; nothing was written." if args.full else "; REPORT.md was not rewritten."))
        return 2
    except WriteFault as exc:           # a fault of the machine (a full disk): status 4, the checkpoint named
        _say(f"{exc}" + ("." if args.full else "; REPORT.md was not rewritten."))
        return FAULT


def _everything(args, res: Results, out: Path) -> int:
    written: dict[str, str] = {}
    notes: list[str] = []
    start = time.perf_counter()

    def note(msg: str):
        notes.append(msg)
        _say(msg)

    print(f"nbsymple paper: results of {res.choice}.", flush=True)      # stdout: what the figures are made of
    for w in res.warnings:
        note(w)
    prediction = _prediction(res, args.gpu_model, note)
    shares = _benchmark_artefacts(res, out, written, note, prediction)
    summaries, failed = _science_artefacts(args, out, written, note)
    full = _full_size_tables(out, note)
    stop_pending()
    try:
        write_report(out, res, written, notes, shares, summaries, full, prediction)
        written["report"] = "REPORT.md"
    except OSError as exc:
        _say(f"REPORT.md not written: {_why(exc, out / 'REPORT.md')}.")
        failed = [*failed, "REPORT.md"]
    files = sorted(set(written.values()))
    _say(f"wrote {len(files)} files into {out}/ in {time.perf_counter() - start:.0f} s: {', '.join(files)}")
    missing = [fname for key, fname in BENCHMARK_FILES.items() if key not in written] + failed
    if missing:
        why = "the lines above say" if "REPORT.md" in missing else "REPORT.md's notes say"
        _say(f"{len(missing)} of the artefacts asked for {'was' if len(missing) == 1 else 'were'} not written "
             f"({', '.join(missing)}; {why} why), so the status is 1.")
    return 1 if missing else 0
