"""The science figures, drawn from the reloaded snapshots of `science_runs`: the tidal tails
(paper Figs. 6-8) and the black-hole passage (paper Table 8 / Fig. 9)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..core.diagnostics import energy, energy_change, energy_parts, internal_energy_error, relative_error
from ..core.ics import State
from ..core.galaxy import SUN_RADIUS_KPC
from . import science_runs
from .science_runs import RUN_FILE, fmt_dt, load_run, step_rule
from .style import plt, save, style, wrapped
from .tides import fraction_beyond, jacobi_radius
from .convergence import INTERNAL_LIMIT, error_text, internal_sentence, largest, not_converged


def mark_not_converged(fig, internal: float | None, what: str = "") -> bool:
    """Stamp NOT CONVERGED across `fig` (red, over the panels, gid "stamp": the one text meant to
    lie on others) when `not_converged(internal)`; returns whether it did."""
    if not not_converged(internal):
        return False
    fig.text(0.5, 0.5, f"NOT CONVERGED{what}\ninternal energy error {error_text(internal)} > {INTERNAL_LIMIT:g}",
             ha="center", va="center", fontsize=15, weight="bold", color="tab:red", alpha=0.75, rotation=12,
             bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "tab:red", "alpha": 0.6}, zorder=100,
             gid="stamp")
    return True


def source_line(run: dict) -> str:
    """The provenance footer of a science figure, from its run.json (the ISA where recorded)."""
    p = run.get("provenance", {})
    device = str(p.get("device", "?"))
    if "thread" not in device:
        device += f", {p.get('threads', '?')} threads"
    cpu = str(p.get("cpu", "?")) + (f", {p['isa']}" if p.get("isa") else "")
    return (f"simulation: machine {p.get('machine', '?')} ({cpu}, {p.get('num_cpu', '?')} cores); "
            f"device: {device}; commit {p.get('commit', '?')}; run {p.get('date', '?')}")


def density_centre(pos: np.ndarray, start_radius: float = 20.0, min_bodies: int = 32) -> np.ndarray:
    """Shrinking-sphere centre (N, 3 positions): start at the median, keep the bodies inside a
    sphere shrunk by 10 % each iteration, until fewer than `min_bodies` remain."""
    c = np.median(pos, axis=0)
    r = start_radius
    for _ in range(200):
        inside = np.sum((pos - c) ** 2, axis=1) < r * r
        if inside.sum() < min_bodies:
            break
        c = pos[inside].mean(axis=0)
        r *= 0.9
    return c


def _nice(x: float) -> float:
    """Round up to 1, 2 or 5 times a power of ten."""
    e = 10.0 ** math.floor(math.log10(x))
    return next(m * e for m in (1, 2, 5, 10) if m * e >= x)


def panel_extent(offsets_pc: np.ndarray, floor_pc: float) -> float:
    """Half-width (pc) of the tails' panels: 1.05 times the 99.5th percentile of the bodies' |x|
    and |y| from the cluster's centre (N, 3), rounded up (`_nice`), and at least `floor_pc`, the
    cluster's radius (a hunt: a damaged snapshot of every body at one point gave 1e-11 pc, and Agg
    drew the Jacobi circle, tens of pc, at 1e12 times the panel for ever; at one point exactly,
    log10(0))."""
    return _nice(max(float(np.percentile(np.abs(offsets_pc[:, :2]), 99.5)) * 1.05, floor_pc))


def run_summary(label: str, run: dict, total: float | None, internal: float | None, internal_max: float | None,
                **extra) -> dict:
    """One science run's numbers for plots/science_runs.json: its set-up, both energy errors at
    the end, the largest internal error over its snapshots, whether it converged (that largest
    internal error <= INTERNAL_LIMIT), its wall time, and its seed and provenance (machine, CPU,
    commit, date) where its run.json holds them: a chaotic run is repeated digit for digit only
    from the same seed by the same code (a one-ulp change in one force parts the runs)."""
    p = run["params"]
    where = {k: v for k, v in (("seed", p.get("seed")), ("provenance", run.get("provenance"))) if v is not None}
    return {"run": label, "n": p["n"], "dt": p["dt"], "scheme": p["scheme"], "version": p["version"],
            "precision": p["precision"], "steps": run["steps"], "wall_seconds": run["wall_seconds"],
            "energy_error_total": total, "internal_energy_error": internal, "internal_energy_error_max": internal_max,
            "converged": not not_converged(internal_max), **where, **extra}


def plot_tidal_tails(folder, path) -> tuple[Path, dict]:
    """Left: the orbit in the Galactic x-y plane (kpc) with the cluster's stars at 0, 0.5, 1 and
    1.5 orbits (each centre ringed), the last panel the run's end where it ends elsewhere. Right: each of those
    snapshots centred on the cluster (pc), in the Galactic frame, showing the leading and
    trailing tails. The title gives the energy error at the end in both definitions; a run whose
    internal error exceeds INTERNAL_LIMIT is stamped NOT CONVERGED. Returns (path, {"summary":
    one paragraph, "runs": [run_summary]})."""
    run, snaps = load_run(folder)
    p = run["params"]
    per_orbit = p["snapshots_per_orbit"]
    wanted = [i for i in (0, per_orbit // 2, per_orbit, per_orbit + per_orbit // 2) if i < len(snaps)]
    if wanted[-1] != len(snaps) - 1:          # the run's end always shown (a hunt: 0.25 orbits showed t = 0 alone)
        wanted = wanted[:3] + [len(snaps) - 1]
    chosen = [snaps[i] for i in wanted]
    units = chosen[0][0].units
    period_myr = units.to_myr(run["orbital_period"])
    parts0 = energy_parts(snaps[0][0])
    every = [energy_parts(s) for s, _ in snaps[1:]] or [parts0]
    e_last = relative_error(every[-1].total, parts0.total)
    internals = [internal_energy_error(p_, parts0, units) for p_ in every]
    internal, worst = internals[-1], largest(internals)
    pc = units.r_cl_pc
    centres = [density_centre(s.positions) for s, _ in chosen]
    offsets = [(s.positions - c) * pc for (s, _), c in zip(chosen, centres)]
    extent = panel_extent(offsets[-1], pc)
    rt_pc = jacobi_radius(units, p.get("radius_kpc", SUN_RADIUS_KPC)) * pc
    with style():
        fig = plt.figure(figsize=(9.0, 4.8), layout="constrained")
        grid = fig.add_gridspec(2, 3, width_ratios=[1.25, 1, 1])
        ax0 = fig.add_subplot(grid[:, 0])
        phi = np.linspace(0, 2 * np.pi, 400)
        r_orb = p.get("radius_kpc", SUN_RADIUS_KPC)
        ax0.plot(r_orb * np.cos(phi), r_orb * np.sin(phi), color="0.75", lw=0.8, ls="--", label="circular orbit")
        ax0.plot(0, 0, marker="+", color="k", ms=8, mew=1.2)
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(chosen)))
        for i, ((s, _), col, c) in enumerate(zip(chosen, colors, centres)):
            xy = s.positions[:, :2] / units.kpc
            ax0.scatter(xy[:, 0], xy[:, 1], s=1.5, color=col, lw=0, rasterized=True,
                        label=f"t = {units.to_myr(s.t):.0f} Myr ({s.t / run['orbital_period']:.2f} orbits)")
            # a ring at its centre, smaller for each later one: whole orbits apart, clusters meet at one
            # place (1 orbit on 0, 1.5 on 0.5), where the rings stay apart and every colour shows
            ax0.plot(*(c[:2] / units.kpc), "o", mfc="none", mec=col, mew=1.1, ms=14 - 3 * i, zorder=3)
        ax0.set_aspect("equal")
        ax0.set_xlim(-10.5, 10.5)
        ax0.set_ylim(-10.5, 10.5)
        ax0.set_xlabel("x [kpc]")
        ax0.set_ylabel("y [kpc]")
        ax0.set_title("Orbit in the Galactic plane")
        ax0.legend(loc="upper center", markerscale=5, fontsize=6.5, bbox_to_anchor=(0.5, 0.44))  # inside the orbit
        for i, ((s, _), off, col) in enumerate(zip(chosen, offsets, colors)):
            ax = fig.add_subplot(grid[i // 2, 1 + i % 2])
            ax.scatter(off[:, 0], off[:, 1], s=0.6, color="k", lw=0, alpha=0.55, rasterized=True)
            ax.add_patch(plt.Circle((0, 0), rt_pc, fill=False, color="tab:red", lw=0.8, ls="--",
                                    label=f"Jacobi radius {rt_pc:.0f} pc"))
            if i == 0:
                ax.legend(loc="upper right", fontsize=6.5)
            ax.set_xlim(-extent, extent)
            ax.set_ylim(-extent, extent)
            ax.set_aspect("equal")
            ax.set_title(f"t = {units.to_myr(s.t):.0f} Myr = {s.t / run['orbital_period']:.2f} orbits",
                         fontsize=8, color=col * 0.8)
            ax.set_xlabel(r"$x - x_c$ [pc]" if i + 2 >= len(chosen) else "")     # no panel below it
            ax.set_ylabel(r"$y - y_c$ [pc]" if i % 2 == 0 else "")
        verdict = (f"NOT CONVERGED: largest {_e(worst)}" if not_converged(worst)
                   else f"converged: largest {_e(worst)} <= {INTERNAL_LIMIT:g}")
        fig.suptitle(f"Tidal tails of a cluster on a circular orbit at {r_orb:g} kpc (cf. paper Figs. 6-8)\n"
                     f"N = {p['n']}, dt = {fmt_dt(p['dt'])} T = {units.to_myr(p['dt']) * 1e3:.1f} kyr, "
                     f"{p['scheme']}, version {p['version']} {p['precision']}; orbital period {period_myr:.0f} Myr\n"
                     f"energy error at the end: internal |E-E0|/|K_int0+W0| = {_e(internal)} ({verdict}); "
                     f"total |dE/E| = {_e(e_last)}", fontsize=8.5)
        mark_not_converged(fig, worst)
        path = save(fig, path, source_line(run))
    rt = jacobi_radius(units, p.get("radius_kpc", SUN_RADIUS_KPC))
    frac = [fraction_beyond(s.positions, c, rt) for (s, _), c in zip(chosen, centres)]
    shares = (f"Fraction of stars beyond the Jacobi radius r_J = {rt * pc:.0f} pc (from the AS91 rotation curve) at "
              + ", ".join(f"{round(s.t / run['orbital_period'], 2):g}" for s, _ in chosen) + " orbits: "
              + ", ".join(f"{100 * f:.1f} %" for f in frac))
    if not_converged(worst):
        shares += " (numbers of a run that is not converged: they measure the heating as much as the tides)"
    summary = (f"N = {p['n']} stars, dt = {fmt_dt(p['dt'])} T, {p['scheme']}, version {p['version']} {p['precision']}: "
               f"{run['steps']} steps in {run['wall_seconds']:.0f} s. {internal_sentence(internal, worst)[0].upper()}"
               f"{internal_sentence(internal, worst)[1:]}; total energy error (the paper's definition) at the end "
               f"{_e(e_last)}. {shares}. "
               f"Step: {step_rule(p['n'], p['dt'])}.")
    return path, {"summary": summary, "runs": [run_summary("tidal tails", run, e_last, internal, worst,
                                                           beyond_r_j=[round(f, 6) for f in frac])]}


TITLE_POINTS = 8.5


def _title_lines(text: str, fig, points: float) -> str:
    """`text` wrapped at '; ' (else at spaces) to lines that fit the figure's width at `points`
    (a verdict per run: two runs not converged made one line wider than the figure, cut at both ends)."""
    chars = max(40, int(fig.get_figwidth() * 72 / (0.62 * points)))     # 0.62 em: DejaVu Sans with capitals
    lines, line = [], ""
    for part in text.split("; "):
        joined = f"{line}; {part}" if line else part
        if line and len(joined) > chars:
            lines.append(line + ";")
            joined = part
        line = joined
    lines.append(line)
    return wrapped("\n".join(lines), chars)


def _e(x: float | None) -> str:
    return error_text(x)


def _internal_energy_errors(states: list) -> np.ndarray:
    """|E - E0| / |K_int,0 + W_0| for each state (black hole last): the energy error of the whole
    system in units of the cluster's own initial binding energy (stars only, the black hole and
    the Galaxy left out), where |E0|, dominated by the orbit, hides it."""
    first = states[0]
    stars = State(first.x[:, :-1], first.v[:, :-1], first.m[:-1], first.eps, first.t, first.units)
    scale = abs(energy_parts(stars).internal)
    parts0 = energy_parts(first)
    return np.array([abs(energy_change(energy_parts(s), parts0, s.units)) / scale for s in states])


def plot_black_hole(folder, path, ratios=None) -> tuple[Path, dict]:
    """Left: x-y tracks (pc) of the cluster's density centre for each mass ratio, the black hole
    at the centre. Right: the energy error |E(t) - E0| vs time (Myr), computed from the reloaded
    snapshots (E includes the black hole and the Galaxy), relative to |E0| (solid) and to the
    cluster's internal energy (dashed, `_internal_energy_errors`), with INTERNAL_LIMIT drawn; the
    title gives each run's internal error at the end, and a run above the limit is stamped NOT
    CONVERGED. Returns (path, {"summary": one paragraph, "runs": [run_summary per ratio]}). With
    `ratios`, the runs of those alone (the ones just run: an earlier run of another ratio, N and
    dt in the folder was drawn beside them, under their title); else every finished run there."""
    folder = Path(folder)
    chosen = None if ratios is None else {science_runs.ratio_folder(r) for r in ratios}
    subs = sorted((d for d in folder.glob("ratio_*")
                   if (d / RUN_FILE).exists() and (chosen is None or d.name in chosen)),
                  key=lambda d: science_runs.run_record(d)["params"]["ratio"])   # whatever the folder is named
    if not subs:
        raise FileNotFoundError(f"{folder.name}/ holds no black-hole runs: run them first")
    colors = plt.cm.plasma(np.linspace(0.1, 0.75, len(subs)))
    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.6, 3.9), layout="constrained",
                                       gridspec_kw={"width_ratios": [1, 1.25]})
        zoom = ax0.inset_axes([0.56, 0.1, 0.42, 0.32])     # its tick labels above the panel's x axis
        first_run = None
        summary, records, ends, drawn = [], [], [], []
        for sub, col in zip(subs, colors):
            run, snaps = load_run(sub)
            first_run = first_run or run
            p = run["params"]
            drawn.append(p)
            units = snaps[0][0].units
            pc = units.r_cl_pc
            t = np.array([units.to_myr(s.t) for s, _ in snaps])
            e = np.array([energy(s) for s, _ in snaps])
            err = np.abs(e - e[0]) / abs(e[0])
            internal = _internal_energy_errors([s for s, _ in snaps])
            centres = np.array([density_centre(s.positions[:-1]) for s, _ in snaps]) * pc
            bh = np.array([s.positions[-1] for s, _ in snaps]) * pc
            r = np.linalg.norm(centres - bh, axis=1)
            i_peri = _first_passage(r, [k for _, k in snaps], run)
            passed = 0 < i_peri < len(r) - 1      # else the run ended before its pericentre (a hunt: "passage"),
            receding = i_peri == 0 < len(r) - 1    # or the centre was closest at the start: it moved away
            mass = p["ratio"] * units.mass_msun
            label = rf"$M_{{BH}}/M_{{cl}}$ = {p['ratio']:g} ({mass:.1e} M$_\odot$)"
            wide = 2.4 if sub == subs[0] else 1.2         # the first track a rim around the next where they meet
            ax0.plot(centres[:, 0], centres[:, 1], color=col, label=label, lw=wide)
            zoom.plot(centres[:, 0] - bh[i_peri, 0], centres[:, 1] - bh[i_peri, 1], color=col, marker=".", ms=2)
            if passed:
                ax0.plot(*centres[i_peri, :2], marker="o", color=col, ms=4)
                zoom.plot(*(centres[i_peri, :2] - bh[i_peri, :2]), marker="o", color=col, ms=4)
            last = snaps[-1][0].positions[:-1] * pc
            ax0.scatter(last[:, 0], last[:, 1], s=0.6, color=col, alpha=0.35, lw=0, rasterized=True)
            ax1.plot(t[1:], np.maximum(err[1:], 1e-17), color=col, label=label + (
                f", closest {r[i_peri]:.0f} pc" if passed else f", no passage: {r[i_peri]:.0f} pc at the "
                + ("start" if receding else "end")))
            ax1.plot(t[1:], np.maximum(internal[1:], 1e-17), color=col, ls="--", lw=1.0)
            end, most = float(internal[-1]), float(np.max(internal))
            if passed:
                ax1.axvline(t[i_peri], color=col, lw=0.7, ls=":")
                summary.append(f"M_BH/M_cl = {p['ratio']:g}: closest approach {r[i_peri]:.1f} pc at {t[i_peri]:.1f} "
                               f"Myr; {internal_sentence(end, most)}, {internal[max(i_peri - 2, 1)]:.1e} just before "
                               f"the passage; total energy error {err[max(i_peri - 2, 1)]:.1e} before and "
                               f"{err[-1]:.1e} at the end")
            else:
                where = (f"its centre was closest to the black hole at the start, {r[0]:.1f} pc, and moved away "
                         f"(it ended at {t[-1]:.1f} Myr, {r[-1]:.1f} pc from it)" if receding else
                         f"it ended at {t[-1]:.1f} Myr, {r[-1]:.1f} pc from the black hole and still falling")
                summary.append(f"M_BH/M_cl = {p['ratio']:g}: no passage within the run: {where}; "
                               f"{internal_sentence(end, most)}; total energy error {err[-1]:.1e} at the end")
            records.append(run_summary(f"black hole M_BH/M_cl = {p['ratio']:g}", run, float(err[-1]), end, most,
                                       ratio=p["ratio"], closest_pc=round(float(r[i_peri]), 2)))
            ends.append((p["ratio"], end, most))
        ax0.plot(0, 0, marker="*", color="k", ms=10, ls="none", label="black hole (Galactic centre)")
        ax0.set_xlabel("x [pc]")
        ax0.set_ylabel("y [pc]")
        ax0.set_title("Track of the cluster centre (dots: pericentre; stars at the end)", fontsize=8.5)
        ax0.legend(loc="upper left", fontsize=6.5, markerscale=1)
        ax0.set_aspect("equal", adjustable="datalim")     # a track in the plane: x and y to one scale
        zoom.plot(0, 0, marker="*", color="k", ms=8, ls="none")
        zoom.set_xlim(-30, 30)
        zoom.set_ylim(-30, 30)
        zoom.set_aspect("equal")
        zoom.tick_params(labelsize=6)
        zoom.set_title("around the black hole [pc]", fontsize=6.5)
        ax1.axhline(INTERNAL_LIMIT, color="tab:red", lw=0.8, ls="-.")
        ax1.text(0.99, INTERNAL_LIMIT, f"internal {INTERNAL_LIMIT:g}: above it not converged", color="tab:red",
                 fontsize=6.5, ha="right", va="bottom", transform=ax1.get_yaxis_transform())
        ax1.set_yscale("log")
        ax1.set_ylim(top=max(ax1.get_ylim()[1], 30 * INTERNAL_LIMIT))      # room for the legends above the limit
        ax1.set_xlabel("time [Myr]")
        ax1.set_ylabel(r"energy error $|E - E_0|$ over ...")
        ax1.set_title("Energy error, total and internal (dotted: closest approach)", fontsize=8.5)
        ax1.add_artist(ax1.legend(loc="lower right", fontsize=6.5))
        ax1.legend(handles=[plt.Line2D([], [], color="0.3", ls="-", label=r"... $|E_0|$ (total, the paper's)"),
                            plt.Line2D([], [], color="0.3", ls="--", lw=1.0,
                                       label=r"... $|K_{int,0} + W_0|$ of the stars (internal)")],
                   loc="upper left", fontsize=6.5)
        u = snaps[0][0].units
        shared, own = _setting(drawn)
        if any(own):                     # runs of other settings in the folder, redrawn (--no-science): each said
            summary = [line.replace(":", f" ({_setting_text(mine, u)}):", 1) for line, mine in zip(summary, own)]
        fig.suptitle(f"Nearly radial passage through a central black hole (cf. paper Table 8, Fig. 9)\n"
                     f"{_setting_text(shared, u, kyr=True)}\n"
                     + _title_lines("internal energy error at the end: " + "; ".join(
                         f"M_BH/M_cl = {ratio:g}: {_e(end)} (largest {_e(most)}: "
                         f"{'NOT CONVERGED' if not_converged(most) else 'converged'})" for ratio, end, most in ends),
                         fig, TITLE_POINTS), fontsize=TITLE_POINTS)
        hot = [(ratio, most) for ratio, _, most in ends if not_converged(most)]
        if hot:
            mark_not_converged(fig, max(most for _, most in hot),
                               " (M_BH/M_cl = " + ", ".join(f"{ratio:g}" for ratio, _ in hot) + ")")
        path = save(fig, path, source_line(first_run))
    head = _setting_text({k: v for k, v in shared.items() if k not in ("radius_kpc", "speed_kms")}, u)
    return path, {"summary": (f"{head}. " if head else "") + "; ".join(summary) + ".", "runs": records}


def _first_passage(r: np.ndarray, steps: list[int], run: dict) -> int:
    """The snapshot of the cluster's closest approach at its first passage: the least distance `r`
    among the snapshots taken every step around the run's predicted first pericentre (where its
    record has it), else among all (a hunt: a longer `--bh-t-end` reported the deepest of four)."""
    peri, dense = run.get("predicted_pericentre_step"), run["params"].get("dense_steps", 0)
    near = [i for i, k in enumerate(steps) if peri is not None and abs(k - peri) <= dense]
    return near[int(np.argmin(r[near]))] if near else int(np.argmin(r))


BLACK_HOLE_SETTING = ("n", "radius_kpc", "speed_kms", "dt", "scheme", "version", "precision")


def _setting(params: list[dict]) -> tuple[dict, list[dict]]:
    """(the settings every black-hole run drawn shares, each run's own where they differ): a hunt
    found `--no-science` titling a run of N = 32 at 2^-6 T with the first run's N = 64, 2^-7 T."""
    shared = {k: params[0][k] for k in BLACK_HOLE_SETTING if all(p[k] == params[0][k] for p in params)}
    return shared, [{k: p[k] for k in BLACK_HOLE_SETTING if k not in shared} for p in params]


def _setting_text(s: dict, units, kyr: bool = False) -> str:
    """'N = 64, start 3 kpc with 20 km/s tangential, dt = 2^-7 T, leapfrog, version A dp' of the
    settings in `s` (those it holds; `kyr`: the step in kyr too)."""
    parts = [f"N = {s['n']}"] if "n" in s else []
    if "radius_kpc" in s or "speed_kms" in s:
        parts.append("start" + (f" {s['radius_kpc']:g} kpc" if "radius_kpc" in s else "")
                     + (f" with {s['speed_kms']:g} km/s tangential" if "speed_kms" in s else ""))
    if "dt" in s:
        parts.append(f"dt = {fmt_dt(s['dt'])} T" + (f" = {units.to_myr(s['dt']) * 1e3:.1f} kyr" if kyr else ""))
    parts += [s["scheme"]] if "scheme" in s else []
    code = " ".join(filter(None, (f"version {s['version']}" if "version" in s else "", s.get("precision", ""))))
    return ", ".join(parts + ([code] if code else []))

