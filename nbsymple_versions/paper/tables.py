"""The tables, written as Markdown (and CSV): task shares (paper Tables 4-6) and conservation
(Tables 2 and 7). Their numbers come from `data`."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from ..core.diagnostics import at_resolution
from ..core.schemes import SCHEMES
from ..core.vocabulary import PRECISIONS, TASKS
from ..runs.paths import write_file
from .data import (CONSERVATION_SETUP, INTERNAL, MEASURED, PAPER_PAIRWISE_SHARE, PAPER_SI6A_DP_ENERGY_PER_STEP,
                   PAPER_SI6A_DP_LXY, PAPER_SI6A_SP_DP_ORDERS, conservation_table, largest_n_shares)
from .records import markdown_text
from .results import Results


def fmt_share(value: float) -> str:
    """A share at full precision for the CSV (empty if not measured)."""
    return "" if not math.isfinite(value) else f"{value:.6g}"

SHARES_TITLE = "# Task shares of a time step (cf. paper Tables 4-6)"                           # the files' first lines
CONSERVATION_TITLE = "# Energy and angular-momentum conservation (cf. paper Tables 2 and 7)"
SHARES_HEADER = ["version", "n", *(f"{t}_percent" for t in TASKS), "source"]


def write_task_shares_csv(table: list[dict], path: Path):
    """The task shares as CSV, full precision, one row per version and N; each row says where it
    came from: measured, or the label of a prediction (GPU versions without results)."""
    f = io.StringIO(newline="")
    w = csv.writer(f)
    w.writerow(SHARES_HEADER)
    for r in table:
        w.writerow([r["version"], r["n"], *(fmt_share(r[t]) for t in TASKS), r.get("source", MEASURED)])
    write_file(path, f.getvalue())            # never through a link (runs/paths.py)


def write_task_shares_md(table: list[dict], origin: str, path: Path, source: str):
    """The task shares as Markdown, two decimals, each row's source as in the CSV."""
    lines = [SHARES_TITLE, "",
             f"Per cent of a double-precision leapfrog step spent in each task; source: `{origin}`.",
             f"Results: {markdown_text(source)}.", "",
             "Tasks: 1 pairwise forces (O(N^2)), 2 galactic force, 3 integration (drifts and kicks on the host), "
             "4 host-device transfers (zero on CPU versions; E computes the galactic force inside task 1), "
             "5 MPI exchange (version F only).", "",
             "| version | N | " + " | ".join(f"{i} {t} [%]" for i, t in enumerate(TASKS, 1)) + " | source |",
             "|---|---:|" + "---:|" * len(TASKS) + "---|"]
    for r in table:
        cells = ["" if not math.isfinite(r[t]) else f"{r[t]:.2f}" for t in TASKS]
        lines.append(f"| {r['version']} | {r['n']} | " + " | ".join(cells) + f" | {r.get('source', MEASURED)} |")
    largest = largest_n_shares(table)
    if largest:
        lines += ["", "At the largest N of each version, task 1 takes "
                  + ", ".join(f"{p:.2f} % ({v}, N = {n}{'' if src == MEASURED else ', predicted'})"
                              for v, n, p, src in largest)
                  + f" of the step (paper: above {PAPER_PAIRWISE_SHARE} % at its largest N)."]
    write_file(path, "\n".join(lines) + "\n")


def _sci(x: float, missing: str = "skipped", zero: str = "0 (below E's float64 resolution)",
         resolution: bool = True) -> str:
    """x in three digits; 0 as `zero`; with `resolution` (a total energy error), a value within two
    roundings of E said to be at its resolution."""
    if not math.isfinite(x):
        return missing
    if x == 0:
        return zero
    return f"{x:.2e} (at E's float64 resolution)" if resolution and at_resolution(x) else f"{x:.2e}"


def _within(x, lo_hi) -> str:
    lo, hi = lo_hi
    if not math.isfinite(x):
        return "not measured"
    if at_resolution(x):
        return ("within two float64 roundings of E, so below the paper's range as a number, but that is the "
                "orbital term's rounding, not accuracy")
    if lo <= x <= hi:
        return "within the paper's range"
    return "below the paper's range" if x < lo else "above the paper's range"


MEASURES = [
    "Two energy errors of the same conserved total E = K + W + sum_i m_i Phi_gal(x_i) (cluster + Galaxy):",
    "- **total**: |E - E0| / |E0|, the definition the paper's code uses, so it is the one compared with the "
    "paper below. |E0| is almost all the cluster's orbital energy in the Galaxy (about 4e4 times its internal "
    "energy at 8.5 kpc), so one float64 rounding of E is ~1e-11 of the cluster's own energy: smaller errors do "
    "not show, and a 0 means the change is below E's float64 resolution, not that the step is exact.",
    "- **internal**: the same change |E - E0| in units of the cluster's initial internal energy |K_int0 + W0| "
    "(K_int in the centre-of-mass frame), computed so that float64 rounding of the orbital part does not swamp it "
    "(`accuracy.Conservation.track_internal_energy_error`): what the integration costs the cluster itself.",
]


# (build, scheme, their arithmetic as read in their leapfrog.cu, sixth.cu, nbody.h, particle.h, our row,
# what differs in ours: serial/kernels.py)
AUTHORS_BUILDS = [
    ("L", "leapfrog", "positions float32 on the host too (each drift rounds them: spacing 6e-5 r_cl at 850 r_cl), "
     "velocities float64; the kernel's separation, r^-3, pair term and sum float32; the Galaxy in the kernel "
     "(their default, POTENTIAL), float32", "leapfrog sp",
     "our positions stay float64 (only the kernel's copy is rounded to float32) and our Galaxy is float64: only "
     "the pair force is float32"),
    ("S, their \"double precision\"", "SI6A", "positions float64 on the host and the device; the separation "
     "subtracted in float64, then r^2, r^-3 and the pair term in float32, summed in float64; the Galaxy with "
     "float32 sqrtf and powf", "SI6A dp",
     "our pair term and Galaxy are float64 too (a relative rounding of ~1e-16 per term instead of ~1e-7)"),
    ("DS, double-single", "SI6A", "positions float64 on the host, sent as hi = float32(x), lo = float32(x - hi); "
     "the separation (hi_j - hi_i) + (lo_j - lo_i), r^-3, pair term and sum float32; the Galaxy in the kernel, "
     "float32 at float32(hi + lo)", "SI6A dsp", "the same pair arithmetic; our Galaxy is float64 at the float64 "
     "position"),
    ("none", "leapfrog, SI6A", "their Makefile builds no leapfrog in dp or dsp and no SI6A in sp (the paper's text "
     "still compares SI6A dp with sp), so what those paper figures computed is not known",
     "leapfrog dp, dsp; SI6A sp", "not known"),
]


AUTHORS_CONSTANTS = ("their code's (`--constants authors`: G from SI constants, the Galaxy's mass unit 2.32e7 "
                     "Msun)", "this suite's (`exact`: the Galaxy's mass unit (10 km/s)^2 kpc / G = 2.3251e7 Msun, "
                     "0.22 % heavier)")


def authors_builds_lines() -> list[str]:
    """What the comparison with the paper compares: each of the authors' builds, its arithmetic,
    its constants, the row of ours it corresponds to and what differs."""
    theirs, ours = AUTHORS_CONSTANTS
    lines = ["Like for like: the paper's figures come from the authors' builds (their Makefile's `make L=yes`, "
             "`S=yes`, `DS=yes`; arithmetic as in their `leapfrog.cu`, `sixth.cu`, `nbody.h`), ours from version B, "
             "whose precision applies to the pairwise force only: positions, velocities, drifts, kicks and the Galaxy "
             "are float64 on the host in every row. Both codes drift and kick in float64 (L then stores the positions "
             "in float32). Constants: their builds use " + theirs + ", our rows " + ours + ". The lighter Galaxy "
             "shifts the orbit (3.0e-3 r_cl after 100 steps of 1e-3 T at N = 480); no row here runs with their "
             "constants (`nbsymple run --constants authors` does: docs/cli.md).", "",
             "| authors' build | scheme | their arithmetic | constants (theirs / ours) | our row "
             "| what differs in ours |",
             "|---|---|---|---|---|---|"]
    return lines + [f"| {build} | {scheme} | {arithmetic} | {'authors / exact' if build != 'none' else 'not known'} "
                    f"| {row} | {differs} |" for build, scheme, arithmetic, row, differs in AUTHORS_BUILDS]


def write_conservation(res: Results, md_path: Path, source: str) -> dict:
    """conservation.md: both energy errors and the angular-momentum error per scheme and precision,
    beside the paper's ranges; returns the table."""
    table = conservation_table(res)
    setup = CONSERVATION_SETUP
    dt_text = f"{setup['dt']:.0e}".replace("e-0", "e-")          # 5e-4
    internal_missing = "not measured in these results" if INTERNAL not in res else "skipped"
    order = {s: i for i, s in enumerate(SCHEMES)}
    porder = {p: i for i, p in enumerate(PRECISIONS)}
    lines = [CONSERVATION_TITLE, "",
             f"Relative errors after the first step and after {setup['steps']} steps of dt = {dt_text} T, and "
             f"the angular-momentum error |L_z - L_z0| / |L0| about the Galactic centre after {setup['steps']} steps "
             f"(the axisymmetric Galaxy conserves L_z; its torque changes L_x and L_y for real); from "
             f"`accuracy.Conservation`: the paper's set-up (uniform sphere, Q = 0.3, at 8.5 kpc) with "
             f"N = {setup['n']}, seed {setup['seed']}, version {setup['version']} on one thread (N on every grid; "
             f"only the smoke grid of commits from 2026-11-30 05:45 to 13:44 UTC ran 256).", "",
             *MEASURES, "", f"Results: {markdown_text(source)}.", "",
             f"| scheme | precision | energy (total), per step | energy (total), after {setup['steps']} steps "
             f"| energy (internal), after {setup['steps']} steps | angular momentum |",
             "|---|---|---:|---:|---:|---:|"]
    for (scheme, prec), row in sorted(table.items(), key=lambda kv: (order.get(kv[0][0], 9), porder.get(kv[0][1], 9))):
        name = "SI6A" if scheme == "si6a" else scheme
        lines.append(f"| {name} | {prec} | {_sci(row['per_step'])} | {_sci(row['after_1000'])} | "
                     f"{_sci(row['internal'], internal_missing, '0', False)} | "
                     f"{_sci(row['angular'], zero='0', resolution=False)} |")
    lo, hi = PAPER_SI6A_DP_ENERGY_PER_STEP
    llo, lhi = PAPER_SI6A_DP_LXY
    si = table.get(("si6a", "dp"), {})
    lines += ["", "| paper (text), SI6A dp | | energy (total), per step | | | L_x, L_y |",
              "|---|---|---:|---:|---:|---:|",
              f"| reported range | dp | {lo:.1e} to {hi:.1e} | | | {llo:.1e} to {lhi:.1e} |", "",
              *authors_builds_lines(), ""]
    if si:
        per_step = si.get("per_step", math.nan)
        has = (f"has {_sci(per_step)} per step ({_within(per_step, PAPER_SI6A_DP_ENERGY_PER_STEP)})"
               if math.isfinite(per_step) else "has no per-step figure in these results (skipped)")  # not "has skipped"
        lines.append(f"The paper's code sums the same total E (cluster + Galaxy), so its {lo:.1e} to {hi:.1e} per step "
                     f"(their S build: float32 pair term and Galaxy) is compared with the total-energy error: here "
                     f"SI6A dp (float64 throughout) {has}; its internal-energy error after "
                     f"{setup['steps']} steps is {_sci(si.get('internal', math.nan), internal_missing, '0', False)}. "
                     f"Its angular-momentum error is {_sci(si.get('angular', math.nan), zero='0', resolution=False)} "
                     f"(the paper quotes L_x and L_y; "
                     f"ours is that of L_z, the component the Galaxy conserves).")
        sp_internal, dp_internal = table.get(("si6a", "sp"), {}).get("internal", math.nan), si.get("internal", math.nan)
        ratio_of_internal = math.isfinite(sp_internal) and math.isfinite(dp_internal) and dp_internal > 0
        for key, what in (("after_1000", "total"), ("internal", "internal")):
            sp, dp = table.get(("si6a", "sp"), {}).get(key, math.nan), si.get(key, math.nan)
            if math.isfinite(sp) and math.isfinite(dp) and dp > 0:
                floor = key == "after_1000" and at_resolution(dp)     # E's rounding: a bound, not a ratio
                lines.append(f"After {setup['steps']} steps SI6A dp conserves energy ({what}) "
                             f"{'at least ' if floor else ''}"
                             f"{math.log10(sp / dp):.1f} orders of magnitude better than sp ("
                             + ("dp's figure is within two float64 roundings of E, so this is a lower bound"
                                + (", and the internal error measures the ratio" if ratio_of_internal else "")
                                + "; " if floor else "")
                             + f"paper: {PAPER_SI6A_SP_DP_ORDERS[0]} to "
                             f"{PAPER_SI6A_SP_DP_ORDERS[1]}, from an sp build that is not public).")
    write_file(md_path, "\n".join(lines) + "\n")
    return table
