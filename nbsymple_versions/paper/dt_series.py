"""The time-step series of a tidal-tail run (`nbsymple paper --full --tidal-dt ... [--tidal-seed ...]`):
is the share of stars beyond the Jacobi radius a property of the cluster or of the step?

Each finished run's numbers at every snapshot (every quarter orbit) are kept in
`tidal_tails_n<N>_series.json` beside the figures, one entry per run (dt and seed), so that a
series gathered over several sessions (and machines) is drawn and judged without the runs'
snapshots. From it: a Markdown table (per run: stars beyond r_J, the internal-energy error and
whether it stays below `INTERNAL_LIMIT`), `<stem>_dt_series.png` (`stem`), and a verdict computed
from the numbers by `share_test`: a chi^2 test of "the share does not depend on dt" against the
noise of one run. Runs of a chaotic system from other seeds, or at other steps, are different
realisations, so that noise is the run-to-run scatter of the seeds at one dt (pooled over the dts,
which also holds the counting noise sqrt(f (1 - f) / N)); with one seed per dt only the counting
noise is known, and the test says so."""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..runs.paths import FileRefused, read_json, write_file
from . import records
from .convergence import INTERNAL_LIMIT, error_text, largest, not_converged
from .science_runs import FULL_ORBITS, TIDAL_FULL, fmt_dt, fmt_wall
from .stats import chi2_sf, f_sf
from .style import plt, save, style

ALPHA = 0.05                     # "depends on dt" where the test's p-value is below this
LEAPFROG_ORDER = 2


# what `--full`'s runs are, beside N and dt: their series' files carry N alone in their names
FULL_SERIES = {"orbits": TIDAL_FULL["orbits"], "scheme": "leapfrog", "precision": TIDAL_FULL["precision"],
               "snapshots_per_orbit": 4}


def series_path(out, n: int) -> Path:
    """The file of every finished run of N bodies, of any series."""
    return Path(out) / f"tidal_tails_n{n}_series.json"


def stem(params: dict) -> str:
    """The name of the figures and table of the series of runs like `params` (`like`):
    `tidal_tails_n<N>`, then what sets the series apart from `--full`'s (`FULL_SERIES`), as
    `tidal_tails_n4096_0.5orb_dp`, so that a run of other orbits or precision writes its own files."""
    shown = {"orbits": "{:g}orb", "scheme": "{}", "precision": "{}", "snapshots_per_orbit": "{}spo"}
    return "_".join([f"tidal_tails_n{params['n']}"] + [shown[k].format(params[k]) for k, v in FULL_SERIES.items()
                                                       if params.get(k, v) != v])


def figure_name(params: dict) -> str:
    return f"{stem(params)}_dt_series.png"


def like(params: dict) -> tuple:
    """What must agree for runs to be one series in dt: everything but dt and the seed."""
    return tuple(params.get(k) for k in ("n", "orbits", "scheme", "precision", "snapshots_per_orbit"))


def entry(summary: dict) -> dict:
    """The series entry of one finished run: its parameters, cost, provenance and the numbers at
    every snapshot (`full_size.summarise`)."""
    run = summary["run"]
    return {"params": run["params"], "steps": run["steps"], "wall_seconds": run["wall_seconds"],
            "sessions": run.get("sessions", 1), "interrupted": run.get("interrupted", 0),
            "provenance": run.get("provenance", {}), "r_j_pc": summary["r_j_pc"],
            "dt_kyr": summary["units"].to_myr(run["params"]["dt"]) * 1e3, "rows": summary["all_rows"]}


def _key(params: dict) -> str:
    return (f"{params['scheme']} {params['precision']} seed {params['seed']} {params['orbits']:g} orbits "
            f"dt {fmt_dt(params['dt'])}")


def _stored(path) -> dict:
    """The file's entries as stored ({} for a missing or unreadable file)."""
    try:
        data = read_json(path, "run record")       # a regular file of bounded JSON
    except FileRefused:
        return {}
    return data if isinstance(data, dict) else {}


def _checked(data: dict) -> dict:
    return {k: v for k, v in data.items() if records.problem(v, records.SERIES_ENTRY) is None}


def read(path) -> dict:
    """The stored entries that are what paper wrote (`records.SERIES_ENTRY`): {} for a missing
    or unreadable file, whose runs present rebuild it; an entry that is not is not drawn."""
    return _checked(_stored(path))


def update(path, entries: list[dict]) -> dict:
    """Merge `entries` into the file at `path` (a run of the same parameters replaces its entry;
    the others are kept as they were) and return its entries that are what paper wrote. A file
    there that cannot be read as one is refused (FileRefused), not replaced: it may hold the only
    numbers of runs whose snapshots are gone (a hunt found them lost to one stray comma)."""
    if os.path.lexists(path):
        try:
            data = read_json(path, "run record")
        except FileRefused as e:
            raise FileRefused(f"{e}; it is kept, not rewritten: mend it, or move it away to start the series "
                              f"again") from None
        if not isinstance(data, dict):
            raise FileRefused(f"{path} holds a JSON {type(data).__name__}, not the series paper writes; it is kept, "
                              f"not rewritten: move it away to start the series again")
    else:
        data = {}
    for e in entries:
        data[_key(e["params"])] = e
    write_file(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return _checked(data)


def series_like(data: dict, params: dict) -> list[dict]:
    """The entries that differ from `params` in dt and seed only: largest dt first, then by seed."""
    return sorted((e for e in data.values() if like(e["params"]) == like(params)),
                  key=lambda e: (-e["params"]["dt"], e["params"]["seed"]))


def _at(e: dict, orbits: float) -> dict | None:
    return next((r for r in e["rows"] if abs(r["orbits"] - orbits) < 1e-6), None)


def noise(e: dict, share: float) -> float:
    """Counting noise of a share of the run's N stars: sqrt(f (1 - f) / N)."""
    return math.sqrt(max(share * (1.0 - share), 0.0) / e["params"]["n"])


def worst_internal(e: dict) -> float | None:
    """The largest internal-energy error of the run over its snapshots (None if one is unknown)."""
    return largest(r["internal_energy_error"] for r in e["rows"] if r["orbits"] > 0)


def _marks(series: list[dict]) -> list[float]:
    return [k for k in FULL_ORBITS if any(_at(e, k) for e in series)]


def common_mark(series: list[dict]) -> float | None:
    """The latest of the FULL_ORBITS every run of the series reached: where the test looks."""
    return max((k for k in FULL_ORBITS if all(_at(e, k) for e in series)), default=None)


@dataclass(frozen=True)
class ShareTest:
    """The test of "the share beyond r_J does not depend on dt" at `orbits`.

    chi2 = sum_j n_j (mean_j - mean)^2 / sigma^2 on dof = J - 1 (J steps, n_j seeds at step j),
    sigma the noise of one run: the pooled run-to-run scatter of the seeds (estimated from
    `sigma_dof` = runs - J degrees of freedom, so p is the F(J - 1, sigma_dof) tail of chi2 / dof),
    or, with one seed per step (or seeds that all ended on their step's share), each run's counting
    noise (p the chi^2 tail; sigma_dof = 0)."""

    orbits: float
    dts: tuple                   # the steps, largest first
    means: tuple                 # mean share per step
    errors: tuple                # standard error of each mean
    seeds: tuple                 # runs per step
    sigma: float                 # noise of one run (share); the counting noise's rms where sigma_dof = 0
    counting: float              # rms counting noise of one run, sqrt(f (1 - f) / N)
    sigma_dof: int
    chi2: float
    dof: int
    p: float

    @property
    def depends_on_dt(self) -> bool:
        return self.p < ALPHA

    @property
    def scatter_over_counting(self) -> float | None:
        """The run-to-run scatter in units of the counting noise (None where not measured)."""
        return self.sigma / self.counting if self.sigma_dof and self.counting > 0 else None

    def scaled(self, ratio: float, ratio_dof: int) -> tuple[float, float]:
        """(chi2, p) of a counting-noise-only test were the run-to-run scatter `ratio` times the
        counting noise, that ratio estimated (at another N) from `ratio_dof` degrees of freedom:
        p is then the F(dof, ratio_dof) tail of chi2 / dof."""
        chi2 = self.chi2 / ratio ** 2
        return chi2, f_sf(chi2 / self.dof, self.dof, ratio_dof)


def share_test(series: list[dict]) -> ShareTest | None:
    """`ShareTest` of the series at their `common_mark`; None with fewer than two steps or no
    common snapshot."""
    orbits = common_mark(series)
    if orbits is None:
        return None
    groups: dict[float, list[tuple[float, int]]] = {}
    for e in series:
        row = _at(e, orbits)
        if row is not None:
            groups.setdefault(e["params"]["dt"], []).append((row["beyond"], e["params"]["n"]))
    if len(groups) < 2:
        return None
    dts = sorted(groups, reverse=True)
    shares = [np.array([f for f, _ in groups[dt]]) for dt in dts]
    counting_var = [np.array([max(f * (1 - f), 1.0 / n) / n for f, n in groups[dt]]) for dt in dts]
    runs, steps = sum(len(s) for s in shares), len(dts)
    counting = float(np.sqrt(np.mean(np.concatenate(counting_var))))
    means = np.array([s.mean() for s in shares])
    within = sum(float(((s - s.mean()) ** 2).sum()) for s in shares)
    if runs > steps and within > 0:
        var = within / (runs - steps)
        sizes = np.array([len(s) for s in shares])
        grand = float((sizes * means).sum() / runs)
        chi2 = float((sizes * (means - grand) ** 2).sum() / var)
        p = f_sf(chi2 / (steps - 1), steps - 1, runs - steps)
        errors = np.sqrt(var / sizes)
        sigma, sigma_dof = math.sqrt(var), runs - steps
    else:
        var_mean = np.array([v.mean() / len(v) for v in counting_var])
        weights = 1.0 / var_mean
        grand = float((weights * means).sum() / weights.sum())
        chi2 = float(((means - grand) ** 2 * weights).sum())
        p = chi2_sf(chi2, steps - 1)
        errors = np.sqrt(var_mean)
        sigma, sigma_dof = counting, 0
    return ShareTest(orbits, tuple(dts), tuple(means.tolist()), tuple(errors.tolist()),
                     tuple(len(s) for s in shares), sigma, counting, sigma_dof, chi2, steps - 1, p)


def _converged_cell(e: dict) -> str:
    worst = worst_internal(e)
    return "**not converged**" if not_converged(worst) else "yes"


def table(series: list[dict]) -> list[str]:
    """One row per run (dt, seed): share beyond r_J (with its counting noise) and internal-energy
    error at the FULL_ORBITS the runs reach, the total-energy error at the last, whether the internal
    error stays at or below INTERNAL_LIMIT, steps and wall time."""
    marks = _marks(series)
    names = [f"{k:g}" for k in marks]
    head = (["dt [T]", "dt [kyr]", "seed", "steps"] + [f"beyond r_J, {k} orb." for k in names]
            + [f"internal error, {k} orb." for k in names]
            + [f"total error, {names[-1]} orb.", f"internal <= {INTERNAL_LIMIT:g}", "wall time", "machine"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * (len(head) - 3) + "---|---:|---|"]
    for e in series:
        rows = [_at(e, k) for k in marks]
        beyond = [f"{100 * r['beyond']:.2f} ± {100 * noise(e, r['beyond']):.2f} %" if r else "-" for r in rows]
        internal = [error_text(r["internal_energy_error"]) if r and r["internal_energy_error"] is not None else "-"
                    for r in rows]
        total = f"{rows[-1]['energy_error']:.1e}" if rows[-1] and rows[-1]["energy_error"] is not None else "-"
        cells = ([fmt_dt(e["params"]["dt"]), f"{e['dt_kyr']:.1f}", str(e["params"]["seed"]), str(e["steps"])]
                 + beyond + internal + [total, _converged_cell(e)]
                 + [f"{fmt_wall(e['wall_seconds'])} ({e['sessions']} session{'s' if e['sessions'] != 1 else ''})",
                    records.markdown_text(e["provenance"].get("machine", "?"))])
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _pct(x: float) -> str:
    return f"{100 * x:.2f}"


def share_test_lines(test: ShareTest, scatter: tuple[float, int, int] | None = None) -> list[str]:
    """The test's numbers in words: per step the mean share and its error, chi^2, dof, p, and
    against which noise; with one seed per step and `scatter` = (run-to-run scatter over counting
    noise, the N it was measured at, its degrees of freedom), also the test were that scatter to
    hold here."""
    per_dt = "; ".join(f"{fmt_dt(dt)} T: {_pct(m)} ± {_pct(s)} % ({n} seed{'s' if n != 1 else ''})"
                       for dt, m, s, n in zip(test.dts, test.means, test.errors, test.seeds))
    if test.sigma_dof:
        against = (f"the run-to-run scatter of the seeds, pooled over the steps: ±{_pct(test.sigma)} points per run "
                   f"from {test.sigma_dof} degrees of freedom ({test.scatter_over_counting:.2f} times the counting "
                   f"noise ±{_pct(test.counting)}), so p is the F({test.dof}, {test.sigma_dof}) tail of chi^2 / "
                   f"{test.dof}")
    elif max(test.seeds) > 1:      # more seeds than steps, and each step's seeds ended on one share
        against = ("each run's counting noise sqrt(f (1 - f) / N) (each step's seeds ended on the same share: "
                   "the run-to-run scatter measured here is zero, no noise to test against)")
    else:
        against = ("each run's counting noise sqrt(f (1 - f) / N) (one seed per step: the run-to-run scatter is "
                   "not measured at this N)")
    out = [f"- Test of \"the share beyond r_J does not depend on dt\" at {test.orbits:g} orbits: {per_dt}. "
           f"chi^2 = {test.chi2:.2f} on {test.dof} degree{'s' if test.dof != 1 else ''} of freedom against "
           f"{against}: p = {test.p:.3g}."]
    if scatter and not test.sigma_dof:
        ratio, n_measured, ratio_dof = scatter
        chi2, p = test.scaled(ratio, ratio_dof)
        out.append(f"- Were the run-to-run scatter at this N, as measured at N = {n_measured}, {ratio:.2f} times the "
                   f"counting noise (estimated from {ratio_dof} degrees of freedom), chi^2 would be {chi2:.2f} and p "
                   f"the F({test.dof}, {ratio_dof}) tail of chi^2 / {test.dof}: p = {p:.3g}; that scaling is an "
                   f"assumption, not a measurement at this N.")
    return out


def _heating(series: list[dict]) -> tuple[list[dict], list[dict]]:
    """(runs whose internal error stays at or below INTERNAL_LIMIT, runs above it)."""
    ok = [e for e in series if not not_converged(worst_internal(e))]
    return ok, [e for e in series if e not in ok]


def _runs(series: list[dict]) -> str:
    """'2^-8 (seeds 1, 2: 0.11, 0.12)' per dt: the worst internal error of each run."""
    by_dt: dict[float, list[dict]] = {}
    for e in series:
        by_dt.setdefault(e["params"]["dt"], []).append(e)
    parts = []
    for dt, runs in sorted(by_dt.items(), reverse=True):
        errs = ", ".join("?" if worst_internal(e) is None else error_text(worst_internal(e), ".2g") for e in runs)
        seeds = ", ".join(str(e["params"]["seed"]) for e in runs)
        parts.append(f"{fmt_dt(dt)} T (seed{'s' if len(runs) > 1 else ''} {seeds}: {errs})")
    return "; ".join(parts)


def verdict(series: list[dict], scatter: tuple[float, int, int] | None = None) -> list[str]:
    """Sentences, from the numbers, on whether the share beyond r_J depends on dt (`share_test`),
    which runs heated the cluster by more than INTERNAL_LIMIT of its binding energy, and how the
    internal-energy error falls with dt (leapfrog: as dt^2)."""
    steps = sorted({e["params"]["dt"] for e in series}, reverse=True)
    if len(steps) < 2:
        return [f"- One step only (dt = {fmt_dt(steps[0])} T): no verdict on convergence; run "
                f"`nbsymple paper --full --tidal-dt` at half the step to get one."] if steps else []
    test = share_test(series)
    if test is None:
        return ["- The runs share no snapshot at 0.5, 1 or 1.5 orbits: no verdict on convergence."]
    ok, hot = _heating(series)
    out = share_test_lines(test, scatter)
    heating = (f"- Heating (the largest internal-energy error over the run, in units of the cluster's binding "
               f"energy): {_runs(series)}. ")
    if hot:
        heating += (f"Above {INTERNAL_LIMIT:g}, not converged: {_runs(hot)}; their tails and shares beyond r_J are "
                    f"shaped by numerical heating and are not physical results.")
    else:
        heating += f"Every run stays at or below {INTERNAL_LIMIT:g}."
    out.append(heating)
    k, last = test.orbits, len(test.dts) - 1
    # the steps all of whose runs stay at or below the limit: a step whose seeds straddle it is not quoted
    ok_steps = sorted({e["params"]["dt"] for e in ok} - {e["params"]["dt"] for e in hot}, reverse=True)
    scaled_p = test.scaled(scatter[0], scatter[2])[1] if scatter and not test.sigma_dof else None
    if test.depends_on_dt and not test.sigma_dof and (scaled_p is None or scaled_p >= ALPHA):
        one = max(test.seeds) == 1
        out.append(f"- Verdict: not decided. Against the counting noise alone the shares differ (p = {test.p:.3g} < "
                   f"{ALPHA:g}), but that noise is a lower bound: runs of a chaotic cluster also scatter from run to "
                   "run, which " + ("one seed per step does not measure" if one else
                                    "these seeds, each step's ending on one share, do not resolve")
                   + (f" (with the scatter measured at N = {scatter[1]}, p = {scaled_p:.3g})" if scaled_p else "")
                   + ". So the series neither shows that the share has converged in dt nor that the step sets it; "
                   + ("runs of several" if one else "more") + " seeds per step at this N (`--tidal-seed`) would decide."
                   + _quoted(ok_steps, set(test.dts)))
    elif test.depends_on_dt:
        beyond = "" if test.sigma_dof else (f", and p = {scaled_p:.3g} even allowing for the run-to-run scatter "
                                            f"measured at N = {scatter[1]}" if scaled_p is not None else "")
        out.append(f"- Verdict: the share beyond r_J at {k:g} orbits depends on dt (p = {test.p:.3g} < {ALPHA:g}"
                   f"{beyond}): not converged in the time step at this N; the step, not the cluster, sets part of it.")
    elif not ok_steps:
        which = (f"every run heated the cluster by more than {INTERNAL_LIMIT:g}" if not ok else
                 f"no step kept every one of its runs at or below {INTERNAL_LIMIT:g}")
        out.append(f"- Verdict: no dependence on dt is seen (p = {test.p:.3g} >= {ALPHA:g}), but {which}: this shows "
                   f"only that the heating at these steps moves the share by less than the noise, not that the "
                   f"share is physical.")
    else:
        smallest = ok_steps[-1]
        i = test.dts.index(smallest) if smallest in test.dts else last
        resolvable = 2.0 * math.hypot(test.errors[0], test.errors[last])
        out.append(f"- Verdict: converged in dt within the noise: no dependence on dt is seen (p = {test.p:.3g} >= "
                   f"{ALPHA:g}); at dt = {fmt_dt(smallest)} T, whose runs stay at or below {INTERNAL_LIMIT:g}, the "
                   f"share at {k:g} orbits is {_pct(test.means[i])} ± {_pct(test.errors[i])} %. A change between the "
                   f"largest and the smallest step below about {_pct(resolvable)} points (twice the noise of that "
                   f"difference) would not have shown.")
    e_int = []
    for dt in test.dts:
        errs = [_at(e, k)["internal_energy_error"] for e in series if e["params"]["dt"] == dt]
        e_int.append(float(np.mean(errs)) if errs and all(x for x in errs) else None)
    if all(e_int):                       # steps any factor apart: the fall per halving is the factor's log2-th root
        ratios = ", ".join(f"{(a / b) ** (1 / math.log2(da / db)):.1f}"      # (a hunt: 2^-8 and 2^-10 T said
                           for a, b, da, db in zip(e_int, e_int[1:], test.dts, test.dts[1:]))   # 22 "per halving")
        halvings = all(math.isclose(da / db, 2.0) for da, db in zip(test.dts, test.dts[1:]))
        values = "; ".join(f"{x:.1e}" if halvings else f"{x:.1e} at {fmt_dt(dt)} T" for x, dt in zip(e_int, test.dts))
        out.append(f"- The internal-energy error at {k:g} orbits (mean over seeds) falls by {ratios} per halving of "
                   f"dt ({values}); a leapfrog error that scales as dt^{LEAPFROG_ORDER} would fall by "
                   f"{2 ** LEAPFROG_ORDER}.")
    return out


def _quoted(ok_steps: list[float], steps: set) -> str:
    """The not-decided verdict's last sentence: which steps kept the internal error at or below the
    limit and which run is the one to quote, the smallest of them (a hunt: "only 2^-8 T, 2^-9 T,
    2^-10 T kept ...; that run is" of a series whose every step kept it)."""
    if not ok_steps:
        return ""
    named = ", ".join(fmt_dt(dt) + " T" for dt in ok_steps)
    if len(ok_steps) == 1:
        return (f" What it does show: only {named} kept the internal-energy error at or below {INTERNAL_LIMIT:g}; "
                f"that run is the one to quote.")
    which = "every step" if set(ok_steps) >= steps else named
    return (f" What it does show: {which} kept the internal-energy error at or below {INTERNAL_LIMIT:g}; the "
            f"smallest, {fmt_dt(ok_steps[-1])} T, is the one to quote.")


def _largest_at(series: list[dict], dt: float) -> str:
    """The largest internal error of the runs at step dt, formatted ('?' where one is unknown)."""
    worst = [worst_internal(e) for e in series if e["params"]["dt"] == dt]
    return "?" if None in worst else error_text(max(worst))


def _provenance(series: list[dict]) -> str:
    """The figure's footer: the runs' machines, devices, commits and dates (each once)."""
    machines = sorted({e["provenance"].get("machine", "?") for e in series})
    devices = sorted({str(e["provenance"].get("device", "?")) for e in series})      # (a hunt: none named)
    commits = sorted({str(e["provenance"].get("commit", "?")) for e in series})
    dates = sorted(str(e["provenance"].get("date", "?")) for e in series)
    return (f"simulations on {', '.join(machines)}; device{'s' if len(devices) > 1 else ''} {', '.join(devices)}; "
            f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits)}; "
            f"run {dates[0]}" + (f" to {dates[-1]}" if dates[-1] != dates[0] else ""))


def plot(series: list[dict], path) -> Path:
    """Left: share beyond r_J against time, one line per run (colour: dt; marker: seed), with its
    counting noise. Middle: the internal-energy error against time, the INTERNAL_LIMIT above
    which a run is not converged shaded. Right: the share at the test's orbit against dt, each
    seed and the mean with its error, the test's chi^2 and p; runs above the limit hollow."""
    steps = sorted({e["params"]["dt"] for e in series}, reverse=True)
    colour = dict(zip(steps, plt.cm.viridis(np.linspace(0.0, 0.8, len(steps)))))
    seeds = sorted({e["params"]["seed"] for e in series})
    marker = dict(zip(seeds, "osD^v<>"))
    test = share_test(series)
    with style():
        fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(11.0, 3.8), layout="constrained")
        for e in series:
            dt, seed = e["params"]["dt"], e["params"]["seed"]
            rows = [r for r in e["rows"] if r["orbits"] > 0]
            t = np.array([r["orbits"] for r in rows])
            f = np.array([r["beyond"] for r in rows])
            label = f"dt = {fmt_dt(dt)} T" if seed == seeds[0] else None
            ax0.errorbar(t, 100 * f, yerr=[100 * noise(e, x) for x in f], color=colour[dt], marker=marker[seed],
                         ms=3.0, capsize=1.5, lw=0.9, label=label)
            keep = [(a, r["internal_energy_error"]) for a, r in zip(t, rows) if r["internal_energy_error"]]
            if keep:
                ax1.plot(*zip(*keep), color=colour[dt], marker=marker[seed], ms=3.0, lw=0.9, label=label)
        ax0.set_xlabel("time [orbits]")
        ax0.set_ylabel("stars beyond r_J [%]")
        ax0.set_title("Tail share (bars: counting noise)", fontsize=8.5)
        ax0.legend(loc="upper left", fontsize=7)
        ax1.set_yscale("log")
        top = max(ax1.get_ylim()[1], 3 * INTERNAL_LIMIT)
        ax1.axhspan(INTERNAL_LIMIT, top, color="tab:red", alpha=0.12, lw=0)
        ax1.axhline(INTERNAL_LIMIT, color="tab:red", lw=0.9, ls="--")
        ax1.text(0.02, 0.97, f"not converged: internal error > {INTERNAL_LIMIT:g}", transform=ax1.transAxes,
                 va="top", fontsize=7, color="tab:red", weight="bold")
        ax1.set_ylim(top=top)
        ax1.set_xlabel("time [orbits]")
        ax1.set_ylabel(r"$|E - E_0|\,/\,|K_{int,0} + W_0|$")
        ax1.set_title("Internal-energy error (heating)", fontsize=8.5)
        if len(seeds) > 1:
            ax1.legend(handles=[plt.Line2D([], [], color="0.3", marker=marker[s], ls="none", ms=3.5,
                                           label=f"seed {s}") for s in seeds], loc="lower right", fontsize=7)
        if test is not None:
            k = test.orbits
            for e in series:
                row = _at(e, k)
                if row is None:
                    continue
                dt, seed, hot = e["params"]["dt"], e["params"]["seed"], not_converged(worst_internal(e))
                nudge = 2 ** (0.06 * (seeds.index(seed) - (len(seeds) - 1) / 2))      # seeds side by side
                ax2.plot(dt * nudge, 100 * row["beyond"], marker=marker[seed], ls="none", ms=5, color=colour[dt],
                         mfc="none" if hot else colour[dt])
            ax2.errorbar(test.dts, [100 * m for m in test.means], yerr=[100 * s for s in test.errors], color="k",
                         marker="_", ms=14, capsize=3, lw=1.0, label="mean ± its error")
            ax2.plot([], [], marker="o", mfc="none", color="0.3", ls="none",
                     label=f"hollow: not converged (internal > {INTERNAL_LIMIT:g})")
            if test.sigma_dof:
                reading = "run-to-run scatter: " + ("depends on dt" if test.depends_on_dt else
                                                    "no dependence on dt seen")
            else:
                reading = "counting noise only: " + ("differs, but that noise is a lower bound" if test.depends_on_dt
                                                     else "no dependence on dt seen")
            ax2.set_title(f"Share at {k:g} orbits: chi$^2$ = {test.chi2:.2f}, {test.dof} dof, p = {test.p:.2g}\n"
                          f"({reading})", fontsize=8)
            ax2.legend(loc="best", fontsize=6.5)
        ax2.set_xscale("log", base=2)
        ax2.set_xlabel("dt [T]")
        ax2.set_ylabel("stars beyond r_J [%]")
        p = series[-1]["params"]
        worst = ", ".join(f"{fmt_dt(dt)}: {_largest_at(series, dt)}" for dt in steps)
        fig.suptitle(f"Tidal tails at N = {p['n']}: convergence in the time step ({p['scheme']}, {p['precision']}, "
                     f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}, {p['orbits']:g} orbits)\n"
                     f"internal energy error, largest over seeds and time: {worst}", fontsize=9)
        return save(fig, path, _provenance(series))


def section(series: list[dict], scatter: tuple[float, int, int] | None = None) -> list[str]:
    """The Markdown of the series: heading, figure, table, test and verdict (`verdict`'s `scatter`)."""
    n = series[-1]["params"]["n"]
    steps = sorted({e["params"]["dt"] for e in series}, reverse=True)
    if len(steps) < 2:
        return verdict(series)
    dts = ", ".join(fmt_dt(dt) for dt in steps)
    seeds = sorted({e["params"]["seed"] for e in series})
    return ([f"### The time-step series (dt = {dts} T; seed{'s' if len(seeds) > 1 else ''} "
             f"{', '.join(map(str, seeds))})", "", f"![time-step series]({figure_name(series[-1]['params'])})", ""]
            + table(series) + [""]
            + [f"- Stars beyond r_J: share of the {n} stars farther than r_J from the density centre, ± its "
               f"counting noise sqrt(f (1 - f) / N); internal error: the energy error in units of the cluster's "
               f"binding energy, as above; a run whose internal error exceeds {INTERNAL_LIMIT:g} at any snapshot is "
               f"marked not converged. Runs of one seed start from the same initial conditions."]
            + verdict(series, scatter))
