"""Tables from asv results: task shares (paper Tables 4-6) and conservation (Tables 2 and 7)."""
from __future__ import annotations

import csv
import math
from pathlib import Path

from .figures import SHARE, TASK_TIMES, MissingData
from .results import Results
from .style import TASKS

ENERGY = "accuracy.Conservation.track_energy_error"
ENERGY_STEP = "accuracy.Conservation.track_energy_error_per_step"
ANGULAR = "accuracy.Conservation.track_angular_momentum_error"
# The paper's reported ranges for SI6A in dp (its text; the table bodies are not public).
PAPER_SI6A_DP_ENERGY_PER_STEP = (1.4e-14, 8.8e-14)
PAPER_SI6A_DP_LXY = (1.4e-13, 6e-11)
PAPER_PAIRWISE_SHARE = 99.8


def task_share_table(res: Results) -> tuple[list[dict], str]:
    """Rows {version, n, pairwise, galactic, integrate, transfer} in % of a dp leapfrog step, and
    where they came from. From `steps.TaskShares.track_share` (the TaskClock); if that benchmark
    is absent, from the four `tasks.Tasks.time_*` timings in dp (share of their sum)."""
    rows: dict[tuple, dict] = {}
    if SHARE in res:
        for (version, n, task), value in res.get(SHARE).items():
            if task in TASKS:
                rows.setdefault((str(version), int(n)), {})[task] = value
        origin = f"{SHARE} (TaskClock shares of a dp leapfrog step)"
    elif all(name in res for name in TASK_TIMES.values()):
        times: dict[tuple, dict] = {}
        for task, name in TASK_TIMES.items():
            for (version, n, prec), value in res.get(name).items():
                if prec == "dp":
                    times.setdefault((str(version), int(n)), {})[task] = value
        for key, t in times.items():
            total = sum(t.get(k, 0.0) for k in TASKS)
            if total > 0:
                rows[key] = {k: 100.0 * t.get(k, 0.0) / total for k in TASKS}
        origin = "tasks.Tasks.time_* in dp (share of the four tasks' sum)"
    else:
        raise MissingData(f"the results of commit {res.commit[:8]} have neither {SHARE} nor the four "
                          f"tasks.Tasks.time_* benchmarks")
    table = []
    for (version, n), shares in sorted(rows.items()):
        table.append({"version": version, "n": n, **{k: shares.get(k, math.nan) for k in TASKS}})
    if not table:
        raise MissingData(f"the results of commit {res.commit[:8]} have no task shares (all skipped)")
    return table, origin


def fmt_share(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:.6g}"


def write_task_shares(table: list[dict], origin: str, csv_path: Path, md_path: Path, source: str):
    """CSV (full precision, one row per version and N) and Markdown (two decimals)."""
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["version", "n", *(f"{t}_percent" for t in TASKS)])
        for r in table:
            w.writerow([r["version"], r["n"], *(fmt_share(r[t]) for t in TASKS)])
    lines = ["# Task shares of a time step (cf. paper Tables 4-6)", "",
             f"Per cent of a double-precision leapfrog step spent in each task; source: `{origin}`.",
             f"Results: {source}.", "",
             "Tasks: 1 pairwise forces (O(N^2)), 2 galactic force, 3 integration (drifts and kicks on the host), "
             "4 host-device transfers (zero on CPU versions; E computes the galactic force inside task 1).", "",
             "| version | N | 1 pairwise [%] | 2 galactic [%] | 3 integrate [%] | 4 transfer [%] |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in table:
        cells = ["" if not math.isfinite(r[t]) else f"{r[t]:.2f}" for t in TASKS]
        lines.append(f"| {r['version']} | {r['n']} | " + " | ".join(cells) + " |")
    largest = largest_n_shares(table)
    if largest:
        lines += ["", "At the largest N of each version, task 1 takes "
                  + ", ".join(f"{p:.2f} % ({v}, N = {n})" for v, n, p in largest)
                  + f" of the step (paper: above {PAPER_PAIRWISE_SHARE} % at its largest N)."]
    Path(md_path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def largest_n_shares(table: list[dict]) -> list[tuple[str, int, float]]:
    """[(version, largest N, pairwise %)]."""
    out = []
    for v in sorted({r["version"] for r in table}):
        r = max((r for r in table if r["version"] == v), key=lambda r: r["n"])
        if math.isfinite(r["pairwise"]):
            out.append((v, r["n"], r["pairwise"]))
    return out


def conservation_table(res: Results) -> dict[tuple, dict]:
    """{(scheme, precision): {'per_step', 'after_1000', 'angular'}} relative errors."""
    names = {"per_step": ENERGY_STEP, "after_1000": ENERGY, "angular": ANGULAR}
    present = {k: n for k, n in names.items() if n in res}
    if not present:
        raise MissingData(f"the results of commit {res.commit[:8]} have no accuracy.Conservation benchmarks")
    out: dict[tuple, dict] = {}
    for key, name in present.items():
        for (scheme, precision), value in res.get(name, keep_missing=True).items():
            out.setdefault((str(scheme), str(precision)), {k: math.nan for k in names})[key] = value
    return out


def _sci(x: float) -> str:
    if not math.isfinite(x):
        return "skipped"
    return "0 (exact to rounding)" if x == 0 else f"{x:.2e}"


def _within(x, lo_hi) -> str:
    lo, hi = lo_hi
    if not math.isfinite(x):
        return "not measured"
    if lo <= x <= hi:
        return "within the paper's range"
    return "below the paper's range" if x < lo else "above the paper's range"


def write_conservation(res: Results, md_path: Path, source: str) -> dict:
    table = conservation_table(res)
    order = {"leapfrog": 0, "si6a": 1}
    porder = {"sp": 0, "dp": 1, "dsp": 2}
    lines = ["# Energy and angular-momentum conservation (cf. paper Tables 2 and 7)", "",
             "Relative errors |X - X0| / |X0| of the total energy (cluster + Galaxy) after the first step and "
             "after 1000 steps of dt = 5e-4 T, and the angular-momentum error |L_z - L_z0| / |L0| about the "
             "Galactic centre after 1000 steps (the axisymmetric Galaxy conserves L_z; its torque changes "
             "L_x and L_y for real); from `accuracy.Conservation`.", f"Results: {source}.", "",
             "| scheme | precision | energy, per step | energy, after 1000 steps | angular momentum |",
             "|---|---|---:|---:|---:|"]
    for (scheme, prec), row in sorted(table.items(), key=lambda kv: (order.get(kv[0][0], 9), porder.get(kv[0][1], 9))):
        name = "SI6A" if scheme == "si6a" else scheme
        lines.append(f"| {name} | {prec} | {_sci(row['per_step'])} | {_sci(row['after_1000'])} | {_sci(row['angular'])} |")
    lo, hi = PAPER_SI6A_DP_ENERGY_PER_STEP
    llo, lhi = PAPER_SI6A_DP_LXY
    si = table.get(("si6a", "dp"), {})
    lines += ["", "| paper (text), SI6A dp | | energy per step | | L_x, L_y |", "|---|---|---:|---:|---:|",
              f"| reported range | dp | {lo:.1e} to {hi:.1e} | | {llo:.1e} to {lhi:.1e} |", ""]
    if si:
        lines.append(f"Here SI6A dp has an energy error per step of {_sci(si.get('per_step', math.nan))} "
                     f"({_within(si.get('per_step', math.nan), PAPER_SI6A_DP_ENERGY_PER_STEP)}) and an "
                     f"angular-momentum error of {_sci(si.get('angular', math.nan))} (the paper quotes L_x and "
                     f"L_y; ours is that of L_z, the component the Galaxy conserves).")
        sp = table.get(("si6a", "sp"), {}).get("after_1000", math.nan)
        dp = si.get("after_1000", math.nan)
        if math.isfinite(sp) and math.isfinite(dp) and dp > 0:
            lines.append(f"After 1000 steps SI6A dp conserves energy {math.log10(sp / dp):.1f} orders of magnitude "
                         f"better than sp (paper: 7 to 8).")
    Path(md_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return table
