"""`nbsymple paper`: regenerate the paper's figures and tables from asv results, plus the
science figures from simulation runs (snapshots), into plots/.

    nbsymple paper [--results results/] [--machine NAME] [--commit HASH] [--out plots/]
                   [--science | --no-science] [--rerun] [--full] [--tidal-n N] ...

Writes time_per_step.png, speedup.png, dp_vs_dsp.png, task_shares.{md,csv,png}, conservation.md,
tidal_tails.png, black_hole_passage.png and REPORT.md. A results file that cannot be read is
named in one sentence on stderr; everything that does not depend on it is still written.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .results import Results, ResultsError, load_results

__all__ = ["main", "load_results", "Results", "ResultsError"]


def _parser() -> argparse.ArgumentParser:
    from .science import BH_DEFAULTS, TIDAL_DEFAULTS, TIDAL_FULL_N
    p = argparse.ArgumentParser(
        prog="nbsymple paper",
        description="Regenerate the paper's figures and tables from asv results (and the science figures "
                    "from simulation runs) into one folder.")
    p.add_argument("--results", default="results", help="asv results folder (default: results)")
    p.add_argument("--machine", default=None, help="machine folder under --results (default: the only one, "
                                                     "or the one with the most recent results)")
    p.add_argument("--commit", default=None, help="commit hash or prefix (default: the latest results by date)")
    p.add_argument("--out", default="plots", help="output folder (default: plots)")
    p.add_argument("--science", action=argparse.BooleanOptionalAction, default=True,
                   help="run the tidal-tail and black-hole simulations (finished runs with the same "
                        "parameters in OUT/runs/ are reused); --no-science only re-plots existing runs")
    p.add_argument("--rerun", action="store_true", help="re-run the simulations even if finished runs exist")
    p.add_argument("--full", action="store_true",
                   help=f"tidal tails at the paper's N = {TIDAL_FULL_N} (use on a GPU machine: version D)")
    p.add_argument("--science-version", default=None,
                   help="version for the simulations (default B; D with --full if a GPU is available)")
    p.add_argument("--tidal-n", type=int, default=None, help=f"bodies in the tidal-tail run (default "
                                                             f"{TIDAL_DEFAULTS['n']})")
    p.add_argument("--tidal-dt", type=float, default=TIDAL_DEFAULTS["dt"],
                   help=f"time step of the tidal-tail run in T (default {TIDAL_DEFAULTS['dt']:g})")
    p.add_argument("--tidal-orbits", type=float, default=TIDAL_DEFAULTS["orbits"],
                   help=f"orbits to integrate (default {TIDAL_DEFAULTS['orbits']:g})")
    p.add_argument("--bh-n", type=int, default=BH_DEFAULTS["n"],
                   help=f"bodies in the black-hole runs (default {BH_DEFAULTS['n']})")
    p.add_argument("--bh-ratios", type=float, nargs="+", default=list(BH_DEFAULTS["ratios"]),
                   help="black-hole to cluster mass ratios (default: 1 10)")
    p.add_argument("--bh-dt", type=float, default=BH_DEFAULTS["dt"],
                   help=f"time step of the black-hole runs in T (default {BH_DEFAULTS['dt']:g})")
    p.add_argument("--bh-t-end", type=float, default=BH_DEFAULTS["t_end"],
                   help=f"duration of the black-hole runs in T (default {BH_DEFAULTS['t_end']:g})")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def _say(msg: str):
    print(f"nbsymple paper: {msg}", file=sys.stderr, flush=True)


def _science_version(args) -> str:
    if args.science_version:
        return args.science_version
    if args.full:
        from ..versions import get_version
        for letter in ("D", "E"):
            try:
                if get_version(letter).available()[0]:
                    return letter
            except Exception:   # noqa: BLE001 - a broken optional GPU stack means: no GPU
                pass
        _say("no GPU version is available; the full N = 15360 run uses version B (about 15 times the default run's time).")
    return "B"


SCIENCE_SUMMARIES = "science_runs.json"


def _read_science_summaries(out: Path) -> dict:
    """The one-paragraph summaries of the science figures in OUT (small, committed beside the
    PNGs), so that `--no-science` on a fresh clone keeps them in REPORT.md."""
    import json
    try:
        data = json.loads((out / SCIENCE_SUMMARIES).read_text())
        return {k: str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_science_summaries(out: Path, summaries: dict):
    import json
    (out / SCIENCE_SUMMARIES).write_text(json.dumps(summaries, indent=2, sort_keys=True) + "\n")


def main(argv=None) -> int:
    """Entry point (`nbsymple paper ...` or `python -m nbsymple_versions.paper ...`); returns the exit
    status: 0 if everything could be written, 1 if a results file was unusable or a step failed."""
    args = _parser().parse_args(argv)
    from . import figures, report, science, tables
    from .figures import MissingData

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    notes: list[str] = []
    status = 0
    start = time.perf_counter()

    def note(msg: str):
        notes.append(msg)
        _say(msg)

    res = None
    try:
        res = load_results(args.results, args.machine, args.commit)
    except ResultsError as exc:
        status = 1
        note(str(exc).rstrip(".") + "; no benchmark figure or table was written.")
    shares = None
    if res is not None:
        for w in res.warnings:
            note(w)
        source = figures.source_line(res)
        jobs = [("time_per_step", "time_per_step.png", figures.time_per_step),
                ("speedup", "speedup.png", figures.speedup),
                ("dp_vs_dsp", "dp_vs_dsp.png", figures.dp_vs_dsp)]
        for key, fname, fn in jobs:
            try:
                fn(res, out / fname)
                written[key] = fname
            except MissingData as exc:
                note(f"{fname} not written: {exc}.")
        try:
            shares, origin = tables.task_share_table(res)
            tables.write_task_shares(shares, origin, out / "task_shares.csv", out / "task_shares.md", source)
            written.update(task_shares_csv="task_shares.csv", task_shares_md="task_shares.md")
            figures.task_shares(shares, out / "task_shares.png", source)
            written["task_shares_png"] = "task_shares.png"
        except MissingData as exc:
            note(f"task_shares.md, .csv and .png not written: {exc}.")
        try:
            tables.write_conservation(res, out / "conservation.md", source)
            written["conservation"] = "conservation.md"
        except MissingData as exc:
            note(f"conservation.md not written: {exc}.")

    summaries: dict[str, str] = {}
    runs = out / "runs"
    version = _science_version(args)
    progress = not args.quiet
    science_jobs = [
        ("tidal_tails", "tidal_tails.png", runs / "tidal_tails",
         lambda: science.run_tidal_tails(
             runs / "tidal_tails", n=args.tidal_n or (science.TIDAL_FULL_N if args.full else science.TIDAL_DEFAULTS["n"]),
             dt=args.tidal_dt, orbits=args.tidal_orbits, version=version, progress=progress, rerun=args.rerun),
         science.plot_tidal_tails),
        ("black_hole", "black_hole_passage.png", runs / "black_hole",
         lambda: science.run_black_hole(
             runs / "black_hole", n=args.bh_n, ratios=tuple(args.bh_ratios), dt=args.bh_dt, t_end=args.bh_t_end,
             version=version, progress=progress, rerun=args.rerun),
         science.plot_black_hole),
    ]
    kept = _read_science_summaries(out)
    for key, fname, folder, run, plot in science_jobs:
        try:
            if args.science:
                run()
            elif not folder.exists():
                if (out / fname).exists() and key in kept:
                    _say(f"kept {fname} from its earlier run (no snapshots in {out.name}/runs/{folder.name}/ "
                         f"and --no-science given).")
                    summaries[key] = kept[key]
                    written[key] = fname
                else:
                    note(f"{fname} not written: no finished run in {out.name}/runs/{folder.name}/ and "
                         f"--no-science given.")
                continue
            _, summaries[key] = plot(folder, out / fname)
            written[key] = fname
            kept[key] = summaries[key]
            _write_science_summaries(out, kept)
        except FileNotFoundError as exc:
            status = 1
            note(f"{fname} not written: {exc}.")
        except Exception as exc:  # noqa: BLE001 - one sentence, the other artefacts still get written
            status = 1
            note(f"{fname} not written: {type(exc).__name__}: {exc}.")

    report.write_report(out, res, written, notes, shares, summaries)
    written["report"] = "REPORT.md"
    files = sorted(set(written.values()))
    _say(f"wrote {len(files)} files into {out.name or out}/ in {time.perf_counter() - start:.0f} s: {', '.join(files)}")
    return status
