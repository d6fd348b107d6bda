"""The paper's tidal tails at full size (`nbsymple paper --full`, Figs. 6-8): from the finished
run's snapshots, `<stem>.png` (the tails near the cluster, unrolled along the orbit, and the star
counts along it, where the clumps show) and `<stem>.md`, a small table: stars beyond the Jacobi
radius at 0.5, 1 and 1.5 orbits, the energy error in both definitions, and the wall time. The stem
is `tidal_tails_n<N>` for `--full`'s orbits and precision, and names those of any other series
(`dt_series.stem`). Each dt runs in its own folder, `runs/tidal_tails_n<N>_dt<dt>...`
(`science_runs.run_folder`); the figure and the first table show the smallest dt that finished, and
`dt_series` adds the series over dt."""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..core.diagnostics import energy_parts, internal_energy_error, relative_error
from ..core.galaxy import SUN_RADIUS_KPC
from . import dt_series
from .records import markdown_text
from .convergence import INTERNAL_LIMIT, error_text, not_converged
from .science_plots import density_centre, mark_not_converged, source_line
from ..runs.paths import read_bytes, write_file
from .science_runs import FULL_ORBITS, RUN_FILE, finished_runs, fmt_dt, fmt_wall, load_run, run_record
from .style import plt, save, style
from .tides import fraction_beyond, jacobi_radius, point_mass_radius

def _orbits(k: float) -> str:
    return f"{k:g} orbit" + ("" if k == 1 else "s")


def _at_orbits(run: dict, snaps: list) -> list:
    """[(orbits, state)] of the snapshots closest to FULL_ORBITS (those the run reached)."""
    period = run["orbital_period"]
    out = []
    for k in FULL_ORBITS:
        state, _ = min(snaps, key=lambda s: abs(s[0].t / period - k))
        if abs(state.t / period - k) < 0.05:
            out.append((k, state))
    return out


def summarise(folder) -> dict:
    """The numbers of the table, from the run's snapshots: `rows` at FULL_ORBITS, `all_rows` at
    every snapshot (orbits rounded to the snapshot spacing)."""
    run, snaps = load_run(folder)
    first = snaps[0][0]
    units = first.units
    radius = run["params"].get("radius_kpc", SUN_RADIUS_KPC)
    r_j = jacobi_radius(units, radius)
    parts0 = energy_parts(first)
    per_orbit = run["params"].get("snapshots_per_orbit", 4)
    all_rows = []
    for state, _ in snaps:
        parts = energy_parts(state) if state is not first else parts0
        centre = density_centre(state.positions)
        all_rows.append({"orbits": round(state.t / run["orbital_period"] * per_orbit) / per_orbit,
                         "t_myr": units.to_myr(state.t), "beyond": fraction_beyond(state.positions, centre, r_j),
                         "energy_error": relative_error(parts.total, parts0.total),
                         "internal_energy_error": internal_energy_error(parts, parts0, units)})
    row_of = {id(state): row for (state, _), row in zip(snaps, all_rows)}
    rows = [{**row_of[id(state)], "orbits": k} for k, state in _at_orbits(run, snaps)]
    return {"run": run, "units": units, "r_j_pc": r_j * units.r_cl_pc,
            "r_point_mass_pc": point_mass_radius(units, radius) * units.r_cl_pc, "rows": rows,
            "all_rows": all_rows, "e0": parts0.total, "internal0": parts0.internal}


def table(summary: dict) -> str:
    """The Markdown table and the sentences that say what its columns measure."""
    run, u = summary["run"], summary["units"]
    p, prov = run["params"], run.get("provenance", {})
    sessions, stops = run.get("sessions", 1), run.get("interrupted", 0)
    lines = [f"# Tidal tails at N = {p['n']} (cf. paper Figs. 6-8)", "",
             f"Run: N = {p['n']} equal-mass stars (15360 Msun, r_cl = 10 pc, Q = 0.3) on the circular orbit at "
             f"8.5 kpc, {p['scheme']}, dt = {fmt_dt(p['dt'])} T = {u.to_myr(p['dt']) * 1e3:.1f} kyr, "
             f"{run['steps']} steps = {p['orbits']:g} orbits (one orbit {u.to_myr(run['orbital_period']):.0f} Myr), "
             f"version {p['version']} in {p['precision']}, seed {p['seed']}.",
             f"Wall time {fmt_wall(run['wall_seconds'])} ({run['wall_seconds']:.0f} s, summed over sessions) on "
             f"{markdown_text(prov.get('cpu', '?'))}, device {markdown_text(prov.get('device', '?'))}; "
             f"{sessions} session{'s' if sessions != 1 else ''}: stopped by a signal {stops} time"
             f"{'s' if stops != 1 else ''} and resumed from its checkpoint by the same command "
             f"{sessions - 1} time{'s' if sessions != 2 else ''}.", "",
             "| orbits | t [Myr] | stars beyond r_J | energy error, total | energy error, internal |",
             "|---:|---:|---:|---:|---:|"]
    for r in _table_rows(summary):
        mark = " (**not converged**)" if not_converged(r["internal_energy_error"]) else ""
        internal = "-" if r["internal_energy_error"] is None else error_text(r["internal_energy_error"])
        lines.append(f"| {r['orbits']:g} | {r['t_myr']:.0f} | {100 * r['beyond']:.1f} % | {r['energy_error']:.1e} | "
                     f"{internal}{mark} |")
    lines += ["",
              f"- r_J = (G M / (4 Omega^2 - kappa^2))^(1/3) = {summary['r_j_pc']:.1f} pc, with Omega and kappa from "
              f"the Allen & Santillan (1991) rotation curve at 8.5 kpc (the point-mass formula "
              f"R (M / 3 M_gal)^(1/3) gives {summary['r_point_mass_pc']:.1f} pc); distances from the cluster's "
              f"density centre.",
              f"- Energy error, total: |E - E0| / |E0|, E = K + W + sum m Phi_gal (cluster + Galaxy), the definition "
              f"the paper's code uses; E0 = {summary['e0']:.5g} is almost all the cluster's orbital energy, so "
              f"this figure cannot see changes below ~1e-11 of the cluster's own energy.",
              f"- Energy error, internal: the same change |E - E0| in units of the cluster's initial internal "
              f"energy |K_int0 + W0| = {abs(summary['internal0']):.4g} (K_int in the centre-of-mass frame), computed "
              f"so that float64 rounding of the orbital part does not swamp it: what the integration costs "
              f"the cluster itself; above {INTERNAL_LIMIT:g} the run is marked not converged.",
              *_verdict(summary),
              f"- {source_line(run)[0].upper()}{source_line(run)[1:]}."]
    return "\n".join(lines) + "\n"


def _table_rows(summary: dict) -> list[dict]:
    """The table's rows: those at FULL_ORBITS, and the run's end where it is none of them (a hunt:
    a run of 0.75 orbits had its 0.5-orbit row alone)."""
    rows, end = summary["rows"], summary["all_rows"][-1]
    return rows + [end] if not rows or end["orbits"] > rows[-1]["orbits"] + 1e-9 else rows


def _worst(summary: dict) -> dict:
    """The row of the largest internal-energy error over every snapshot after the start (its
    error None where one is unknown): what decides convergence, as for the series (a hunt: the
    0.5, 1 and 1.5-orbit rows alone called a run whose error peaked between them converged)."""
    rows = [r for r in summary["all_rows"] if r["orbits"] > 0] or summary["all_rows"][-1:]
    unknown = next((r for r in rows if r["internal_energy_error"] is None), None)
    return unknown or max(rows, key=lambda r: r["internal_energy_error"])


def _verdict(summary: dict) -> list[str]:
    """A sentence when the internal-energy error says the run is not converged."""
    row = _worst(summary)
    worst = row["internal_energy_error"]
    if not not_converged(worst):
        return []
    p = summary["run"]["params"]
    value = "an unknown value" if worst is None else error_text(worst, ".2g")
    return [f"- **Not converged.** At dt = {fmt_dt(p['dt'])} T the internal-energy error reaches {value} of the "
            f"cluster's binding energy by {_orbits(row['orbits'])} (above {INTERNAL_LIMIT:g}), while the "
            f"total-energy error stays at {row['energy_error']:.1e}: the step does not resolve the collapsed, "
            f"dense core, so the cluster's internal evolution (and with it the rate at which stars escape into the "
            f"tails) carries that heating, and the shares above are not physical results; a smaller `--tidal-dt` "
            f"lowers it."]


def _unrolled(pos: np.ndarray, centre: np.ndarray, pc: float) -> tuple[np.ndarray, np.ndarray]:
    """(s, dR): distance along the orbit ahead of the cluster (kpc of arc at the cluster's
    radius) and radial offset (pc) of each star, from Galactic x-y positions in cluster radii."""
    r, phi = np.hypot(pos[:, 0], pos[:, 1]), np.arctan2(pos[:, 1], pos[:, 0])
    rc, phic = math.hypot(centre[0], centre[1]), math.atan2(centre[1], centre[0])
    dphi = (phi - phic + np.pi) % (2 * np.pi) - np.pi
    return dphi * rc * pc / 1e3, (r - rc) * pc


def plot(summary: dict, folder, path) -> Path:
    """Top: the stars near the cluster in its orbital frame (radial outwards, along the orbit)
    with the Jacobi radius. Middle: the tails unrolled along the orbit. Bottom: stars per
    20 pc along the orbit: the tails' clumps are its peaks."""
    run, snaps = load_run(folder)
    u = summary["units"]
    pc = u.r_cl_pc
    chosen = [(k, s) for k, s in _at_orbits(run, snaps)]
    r_j = summary["r_j_pc"]
    colors = plt.cm.viridis(np.linspace(0.0, 0.8, len(chosen)))
    with style():
        fig = plt.figure(figsize=(9.0, 9.6), layout="constrained")
        grid = fig.add_gridspec(2 + len(chosen), len(chosen), height_ratios=[1.5] + [0.55] * len(chosen) + [1.0])
        zoom = 8 * r_j
        reach = 0.0
        unrolled = []
        for i, ((k, state), col) in enumerate(zip(chosen, colors)):
            pos = state.positions
            c = density_centre(pos)
            s, dr = _unrolled(pos, c, pc)
            unrolled.append((s, dr))
            lost = np.abs(s[np.linalg.norm(pos - c, axis=1) * pc > 2 * r_j])
            reach = max(reach, float(np.percentile(lost, 99.5)) if len(lost) else 0.0)
            rc = math.hypot(c[0], c[1])
            radial, along = c[:2] / rc, np.array([-c[1], c[0]]) / rc       # outwards, direction of motion
            d = (pos[:, :2] - c[:2]) * pc
            ax = fig.add_subplot(grid[0, i])
            ax.scatter(d @ radial, d @ along, s=0.4, color="k", lw=0, alpha=0.5, rasterized=True)
            ax.add_patch(plt.Circle((0, 0), r_j, fill=False, color="tab:red", lw=0.9, ls="--"))
            ax.set_xlim(-zoom, zoom)
            ax.set_ylim(-zoom, zoom)
            ax.set_aspect("equal")
            ax.set_title(f"{_orbits(k)} ({u.to_myr(state.t):.0f} Myr): {100 * summary['rows'][i]['beyond']:.1f} % "
                         f"beyond r_J", fontsize=8, color=col * 0.8)
            ax.set_xlabel("radial offset [pc] (outwards)")
            if i == 0:
                ax.set_ylabel("along the orbit [pc]")
                ax.text(0.03, 0.97, f"r_J = {r_j:.1f} pc", transform=ax.transAxes, va="top", fontsize=7,
                        color="tab:red")
        reach = max(reach * 1.1, 0.3)
        bins = np.arange(-reach, reach + 0.02, 0.02)
        dens = fig.add_subplot(grid[-1, :])
        for i, ((k, state), (s, dr), col) in enumerate(zip(chosen, unrolled, colors)):
            ax = fig.add_subplot(grid[1 + i, :])
            ax.scatter(s, dr, s=0.5, color=col, lw=0, alpha=0.7, rasterized=True)
            ax.set_xlim(-reach, reach)
            ax.set_ylim(-6 * r_j, 6 * r_j)
            ax.set_ylabel("dR [pc]")
            ax.text(0.005, 0.92, _orbits(k), transform=ax.transAxes, va="top", fontsize=7)
            if i == 0:
                ax.set_title("Tails unrolled along the orbit (leading: s > 0, inside; trailing: s < 0, outside)",
                             fontsize=8.5)
            ax.tick_params(labelbottom=False)
            counts, edges = np.histogram(s, bins=bins)
            dens.step(edges[:-1], np.maximum(counts, 0.5), where="post", color=col, lw=0.9, label=_orbits(k))
        dens.set_yscale("log")
        dens.set_ylim(0.7, None)
        dens.set_xlim(-reach, reach)
        dens.set_xlabel("s, distance along the orbit from the cluster [kpc]")
        dens.set_ylabel("stars per 20 pc")
        dens.set_title("Star counts along the tails: the peaks away from s = 0 are the clumps", fontsize=8.5)
        dens.legend(loc="upper right")
        p = run["params"]
        last = summary["all_rows"][-1]          # the run's end
        errors = (f"; energy error at {_orbits(last['orbits'])} {last['energy_error']:.1e} (total), "
                  f"{error_text(last['internal_energy_error'])} (internal)")
        mark_not_converged(fig, _worst(summary)["internal_energy_error"])
        fig.suptitle(f"Tidal tails of a cluster of N = {p['n']} on its circular orbit at 8.5 kpc "
                     f"(cf. paper Figs. 6-8)\n"
                     f"{p['scheme']}, dt = {fmt_dt(p['dt'])} T, version {p['version']} {p['precision']}, "
                     f"{run['steps']} steps, wall time {fmt_wall(run['wall_seconds'])} in {run.get('sessions', 1)} "
                     f"session(s){errors}", fontsize=8.5)
        return save(fig, path, source_line(run))


def measured_scatter(out, n: int) -> tuple[float, int, int] | None:
    """(run-to-run scatter of the share beyond r_J in units of its counting noise, the N it was
    measured at, its degrees of freedom) from another series in `out` with several seeds per
    step, for a series of N with one seed per step; None where no such series exists."""
    for path in sorted(Path(out).glob("tidal_tails_n*_series.json")):
        data = dt_series.read(path)
        groups = {dt_series.like(e["params"]) for e in data.values() if e["params"]["n"] != n}
        for key in sorted(groups, key=str):
            test = dt_series.share_test([e for e in data.values() if dt_series.like(e["params"]) == key])
            if test is not None and test.scatter_over_counting:
                return test.scatter_over_counting, key[0], test.sigma_dof
    return None


def _series_section(out, series: list[dict]) -> list[str]:
    """The series' Markdown (`dt_series.section`), with the scatter measured at another N where
    this series has one seed per step."""
    single = len({e["params"]["seed"] for e in series}) == 1
    scatter = measured_scatter(out, series[-1]["params"]["n"]) if single else None
    return dt_series.section(series, scatter)


def write_series(out, params: dict) -> list[Path]:
    """Redraw the series of runs like `params` from `tidal_tails_n<N>_series.json` alone (its runs'
    snapshots gone): `<stem>_dt_series.png` and the series section of `<stem>.md` (`dt_series.stem`)
    (the part before it kept as it is). FileNotFoundError (one sentence) without such runs."""
    out, n = Path(out), params["n"]
    path = dt_series.series_path(out, n)
    series = dt_series.series_like(dt_series.read(path), params)
    if not series:
        raise FileNotFoundError(f"neither a finished run nor an entry like it in {path.name}: run the simulation "
                                f"first")
    md = out / f"{dt_series.stem(params)}.md"
    head = read_bytes(md, "Markdown table").decode("utf-8", "replace").split("### The time-step series")[0] \
        .rstrip("\n") if os.path.lexists(md) else f"# Tidal tails at N = {n} (cf. paper Figs. 6-8)"
    written = [md]
    if len({e["params"]["dt"] for e in series}) > 1:
        written.append(dt_series.plot(series, out / dt_series.figure_name(params)))
    write_file(md, head + "\n\n" + "\n".join(_series_section(out, series)) + "\n")
    return written


def write_full_size(folder, out) -> list[Path]:
    """From the finished run in `folder` and the other finished runs of its N in OUT/runs: add
    them to the dt series (`tidal_tails_n<N>_series.json`), then write into `out` `<stem>.png`
    and `.md` of the smallest dt like it that finished (same parameters but dt and seed; its own
    seed first; `dt_series.stem` names them) and, with the series, `<stem>_dt_series.png`.
    Without the run's folder, the series alone is redrawn (`write_series`)."""
    folder, out = Path(folder), Path(out)
    params = (run_record(folder) or {}).get("params")
    if params is None:
        raise FileNotFoundError(f"{folder.name}/{RUN_FILE} is missing: run the simulation first")
    n = params["n"]
    summaries = {d: summarise(d) for d in finished_runs(out, n)}
    if folder not in summaries:
        summaries[folder] = summarise(folder)
    data = dt_series.update(dt_series.series_path(out, n), [dt_series.entry(s) for s in summaries.values()])
    like = [d for d, s in summaries.items() if dt_series.like(s["run"]["params"]) == dt_series.like(params)]
    shown = min(like, key=lambda d: (summaries[d]["run"]["params"]["dt"],
                                     summaries[d]["run"]["params"]["seed"] != params["seed"]))
    summary = summaries[shown]
    series = dt_series.series_like(data, params)
    stem = dt_series.stem(params)
    md = out / f"{stem}.md"
    written = [plot(summary, shown, out / f"{stem}.png"), md]
    if len({e["params"]["dt"] for e in series}) > 1:
        written.append(dt_series.plot(series, out / dt_series.figure_name(params)))
    written.append(dt_series.series_path(out, n))
    write_file(md, table(summary) + "\n" + "\n".join(_series_section(out, series)) + "\n")
    return written
