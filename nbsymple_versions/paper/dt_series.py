"""The time-step series of the full-size tidal-tail run (`nbsymple paper --full --tidal-dt ...`):
is the share of stars beyond the Jacobi radius a property of the cluster or of the step?

Each finished run's numbers at every snapshot (every quarter orbit) are kept in
`tidal_tails_n<N>_series.json` beside the figures, one entry per run, so that a series gathered
over several sessions (and machines) is drawn and judged without the runs' snapshots. From it:
a Markdown table (stars beyond r_J and the internal-energy error at 0.5, 1 and 1.5 orbits per dt),
`tidal_tails_n<N>_dt_series.png`, and a verdict computed from the numbers: a change of the share
between two steps is resolved only where it exceeds the counting noise of the two runs (a share
f of N stars is counted to sqrt(f (1 - f) / N)); runs of a chaotic system at different steps are
different realisations, so no finer convergence can be seen at one N."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .science_plots import fmt_dt, fmt_wall
from .style import plt, save, style

MARKS = (0.5, 1.0, 1.5)          # the orbits the table and the verdict look at
RESOLVED = 2.0                   # a change is resolved above this many standard deviations of the noise
LEAPFROG_ORDER = 2


def series_path(out, n: int) -> Path:
    return Path(out) / f"tidal_tails_n{n}_series.json"


def figure_name(n: int) -> str:
    return f"tidal_tails_n{n}_dt_series.png"


def like(params: dict) -> tuple:
    """What must agree for two runs to be a series in dt: everything but dt."""
    return tuple(params.get(k) for k in ("n", "orbits", "scheme", "precision", "seed", "snapshots_per_orbit"))


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


def read(path) -> dict:
    """The stored entries ({} for a missing or unreadable file: the runs present rebuild it)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict) and "params" in v} if isinstance(data, dict) else {}


def update(path, entries: list[dict]) -> dict:
    """Merge `entries` into the file at `path` (a run of the same parameters replaces its entry)."""
    data = read(path)
    for e in entries:
        data[_key(e["params"])] = e
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return data


def series_like(data: dict, params: dict) -> list[dict]:
    """The entries that differ from `params` in dt only, largest dt first."""
    return sorted((e for e in data.values() if like(e["params"]) == like(params)),
                  key=lambda e: -e["params"]["dt"])


def _at(e: dict, orbits: float) -> dict | None:
    return next((r for r in e["rows"] if abs(r["orbits"] - orbits) < 1e-6), None)


def noise(e: dict, share: float) -> float:
    """Counting noise of a share of the run's N stars: sqrt(f (1 - f) / N)."""
    return math.sqrt(max(share * (1.0 - share), 0.0) / e["params"]["n"])


def table(series: list[dict]) -> list[str]:
    """One row per dt: share beyond r_J (with its counting noise) and internal-energy error at
    the MARKS, the total-energy error at the last, steps and wall time."""
    marks = [f"{k:g}" for k in MARKS]
    head = (["dt [T]", "dt [kyr]", "steps"] + [f"beyond r_J, {k} orb." for k in marks]
            + [f"internal error, {k} orb." for k in marks] + [f"total error, {marks[-1]} orb.", "wall time", "machine"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * (len(head) - 1) + "---|"]
    for e in series:
        rows = [_at(e, k) for k in MARKS]
        beyond = [f"{100 * r['beyond']:.2f} ± {100 * noise(e, r['beyond']):.2f} %" if r else "-" for r in rows]
        internal = [f"{r['internal_energy_error']:.1e}" if r and r["internal_energy_error"] is not None else "-"
                    for r in rows]
        total = f"{rows[-1]['energy_error']:.1e}" if rows[-1] and rows[-1]["energy_error"] is not None else "-"
        cells = ([fmt_dt(e["params"]["dt"]), f"{e['dt_kyr']:.1f}", str(e["steps"])] + beyond + internal
                 + [total, f"{fmt_wall(e['wall_seconds'])} ({e['sessions']} session{'s' if e['sessions'] != 1 else ''})",
                    str(e["provenance"].get("machine", "?"))])
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def verdict(series: list[dict]) -> list[str]:
    """Sentences, from the numbers, on whether the share beyond r_J has converged in dt and how
    the internal-energy error falls with dt (leapfrog: as dt^2)."""
    if len(series) < 2:
        return [f"- One step only (dt = {fmt_dt(series[0]['params']['dt'])} T): no verdict on convergence; run "
                f"`nbsymple paper --full --tidal-dt` at half the step to get one."] if series else []
    k = max((m for m in MARKS if all(_at(e, m) for e in series)), default=None)
    if k is None:
        return ["- The runs share no snapshot at 0.5, 1 or 1.5 orbits: no verdict on convergence."]
    f = [_at(e, k)["beyond"] for e in series]
    sig = [noise(e, x) for e, x in zip(series, f)]
    dts = [fmt_dt(e["params"]["dt"]) for e in series]
    changes = [b - a for a, b in zip(f, f[1:])]
    noises = [math.hypot(a, b) for a, b in zip(sig, sig[1:])]
    last, sd = changes[-1], noises[-1]
    out = [f"- Halving the step from {dts[-2]} T to {dts[-1]} T changes the share of stars beyond r_J at "
           f"{k:g} orbits from {100 * f[-2]:.2f} % to {100 * f[-1]:.2f} % ({100 * last:+.2f} points); the counting "
           f"noise of that difference is ±{100 * sd:.2f} points."]
    prev = (f" The halving before it ({dts[-3]} T to {dts[-2]} T) moved it by {100 * changes[-2]:+.2f} points "
            f"(noise ±{100 * noises[-2]:.2f})." if len(changes) > 1 else "")
    if abs(last) <= RESOLVED * sd:
        bound = max(abs(last), sd)
        out.append(f"- Verdict: the tail share has converged in dt to within the counting noise: at dt = {dts[-1]} T "
                   f"it is {100 * f[-1]:.2f} % with an uncertainty of about ±{100 * bound:.2f} points "
                   f"({100 * bound / f[-1]:.0f} % of its value) set by N = {series[-1]['params']['n']}, not by the "
                   f"step.{prev}" if f[-1] > 0 else
                   f"- Verdict: no star is beyond r_J at {k:g} orbits at either step.{prev}")
    elif len(changes) > 1 and abs(last) < abs(changes[-2]) and changes[-2] * last > 0:
        q = last / changes[-2]
        rest = last * q / (1.0 - q)
        out.append(f"- Verdict: not converged within the counting noise, but each halving moves it less (ratio "
                   f"{q:.2f}); extrapolating the geometric series, the converged share is about "
                   f"{100 * (f[-1] + rest):.2f} % ({100 * rest:+.2f} points from dt = {dts[-1]} T).{prev}")
    elif len(changes) == 1:
        out.append(f"- Verdict: the tail share has not converged in dt: halving the step moves it by more than "
                   f"twice its counting noise; a run at dt = {fmt_dt(series[-1]['params']['dt'] / 2)} T would tell "
                   f"whether it converges.")
    else:
        out.append(f"- Verdict: the tail share has not converged in dt: the last halving moves it by more than twice "
                   f"its counting noise, and no less than the halving before.{prev} A smaller step is needed.")
    e_int = [_at(e, k)["internal_energy_error"] for e in series]
    if all(x for x in e_int):
        ratios = ", ".join(f"{a / b:.1f}" for a, b in zip(e_int, e_int[1:]))
        out.append(f"- The internal-energy error at {k:g} orbits falls by {ratios} per halving of dt "
                   f"({'; '.join(f'{x:.1e}' for x in e_int)}); a leapfrog error that scales as dt^{LEAPFROG_ORDER} "
                   f"would fall by {2 ** LEAPFROG_ORDER}.")
    return out


def _provenance(series: list[dict]) -> str:
    """The figure's footer: each run's machine (once if they share one), commit and date."""
    machines = {e["provenance"].get("machine", "?") for e in series}
    runs = "; ".join(f"dt {fmt_dt(e['params']['dt'])}: "
                     + ("" if len(machines) == 1 else f"{e['provenance'].get('machine', '?')}, ")
                     + f"commit {e['provenance'].get('commit', '?')}, {e['provenance'].get('date', '?')}"
                     for e in series)
    return (f"simulations on {machines.pop()}: " if len(machines) == 1 else "simulations: ") + runs


def plot(series: list[dict], path) -> Path:
    """Left: share beyond r_J against time for each dt, with its counting noise. Middle: the
    internal-energy error against time. Right: that error at the MARKS against dt (log-log),
    with a dt^2 guide."""
    colors = plt.cm.viridis(np.linspace(0.0, 0.8, len(series)))
    with style():
        fig, (ax0, ax1, ax2) = plt.subplots(1, 3, figsize=(10.5, 3.6), layout="constrained")
        for e, col in zip(series, colors):
            rows = [r for r in e["rows"] if r["orbits"] > 0]
            t = np.array([r["orbits"] for r in rows])
            f = np.array([r["beyond"] for r in rows])
            label = f"dt = {fmt_dt(e['params']['dt'])} T"
            ax0.errorbar(t, 100 * f, yerr=[100 * noise(e, x) for x in f], color=col, marker="o", ms=3.5,
                         capsize=2, label=label)
            err = [r["internal_energy_error"] for r in rows]
            keep = [(a, b) for a, b in zip(t, err) if b]
            if keep:
                ax1.plot(*zip(*keep), color=col, marker="o", ms=3.5, label=label)
        ax0.set_xlabel("time [orbits]")
        ax0.set_ylabel("stars beyond r_J [%]")
        ax0.set_title("Tail share (bars: counting noise)", fontsize=8.5)
        ax0.legend(loc="upper left")
        ax1.set_yscale("log")
        ax1.set_xlabel("time [orbits]")
        ax1.set_ylabel(r"$|E - E_0|\,/\,|K_{int,0} + W_0|$")
        ax1.set_title("Internal-energy error", fontsize=8.5)
        dts = np.array([e["params"]["dt"] for e in series])
        for k, marker in zip(MARKS, ("o", "s", "^")):
            pts = [(e["params"]["dt"], _at(e, k)["internal_energy_error"]) for e in series
                   if _at(e, k) and _at(e, k)["internal_energy_error"]]
            if pts:
                ax2.plot(*zip(*pts), marker=marker, color="0.25", ls="-", lw=0.9, label=f"{k:g} orbit{'' if k == 1 else 's'}")
        last = [_at(series[0], k) for k in MARKS][-1]
        if last and last["internal_energy_error"]:
            guide = last["internal_energy_error"] * (dts / dts[0]) ** LEAPFROG_ORDER
            ax2.plot(dts, guide, color="tab:red", ls="--", lw=0.9, label=rf"$\propto dt^{LEAPFROG_ORDER}$")
        ax2.set_xscale("log", base=2)
        ax2.set_yscale("log")
        ax2.set_xlabel("dt [T]")
        ax2.set_title("Internal-energy error against dt", fontsize=8.5)
        ax2.legend(loc="lower right")
        p = series[-1]["params"]
        fig.suptitle(f"Tidal tails at N = {p['n']}: convergence in the time step ({p['scheme']}, {p['precision']}, "
                     f"seed {p['seed']}, {p['orbits']:g} orbits)", fontsize=9)
        return save(fig, path, _provenance(series))


def section(series: list[dict], n: int) -> list[str]:
    """The Markdown of the series: heading, figure, table, verdict."""
    if len(series) < 2:
        return verdict(series)
    dts = ", ".join(fmt_dt(e["params"]["dt"]) for e in series)
    return ([f"### The time-step series (dt = {dts} T)", "", f"![time-step series]({figure_name(n)})", ""]
            + table(series) + [""]
            + [f"- Stars beyond r_J: share of the {n} stars farther than r_J from the density centre, ± its "
               f"counting noise sqrt(f (1 - f) / N); internal error: the energy error in units of the cluster's "
               f"binding energy, as above. Every run starts from the same initial conditions."]
            + verdict(series))
