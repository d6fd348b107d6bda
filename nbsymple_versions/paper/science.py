"""Science runs of the shared core, written as snapshots and plotted from the reloaded snapshots
(so a figure can be redrawn without re-running):

* tidal tails (paper Figs. 6-8): a cluster on its quasi-circular orbit at 8.5 kpc for 1.5 orbits;
* black-hole passage (paper Table 8 / Fig. 9): a cluster on a nearly radial orbit through a
  massive black hole at the Galactic centre, for several black-hole-to-cluster mass ratios.

Each run folder holds `snap_<step>.npz` files (`nbsymple_versions.snapshots`) and `run.json`
(the run's parameters and provenance: machine, CPU, device, threads, commit, date).
"""
from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .. import Simulation, add_black_hole, make_cluster
from ..core.diagnostics import energy
from ..snapshots import list_snapshots, read_snapshot, write_snapshot
from .style import VERSION_COLORS, plt, save, style

RUN_FILE = "run.json"
TIDAL_DEFAULTS = {"n": 4096, "dt": 2.0 ** -7, "orbits": 1.5, "version": "B"}
TIDAL_FULL_N = 15360
BH_DEFAULTS = {"n": 1024, "dt": 2.0 ** -10, "ratios": (1.0, 10.0), "radius_kpc": 1.0, "speed_kms": 2.0,
               "t_end": 3.5, "version": "B", "scheme": "leapfrog"}


# ----------------------------------------------------------------------------- provenance

def git_commit() -> str:
    """Short commit of the checkout this package runs from ('+dirty' if it has local changes),
    or 'unknown' outside git."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def provenance(sim: Simulation) -> dict:
    return {"machine": platform.node() or "unknown", "cpu": cpu_name(), "num_cpu": os.cpu_count(),
            "device": sim.device, "threads": sim.threads, "commit": git_commit(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def source_line(run: dict) -> str:
    p = run.get("provenance", {})
    device = str(p.get("device", "?"))
    if "thread" not in device:
        device += f", {p.get('threads', '?')} threads"
    return (f"simulation: machine {p.get('machine', '?')} ({p.get('cpu', '?')}, {p.get('num_cpu', '?')} cores); "
            f"device: {device}; commit {p.get('commit', '?')}; run {p.get('date', '?')}")


class Progress:
    """A progress line on stderr: redrawn in place on a terminal, one line per 10 % otherwise."""

    def __init__(self, label: str, total: int, stream=None, enabled: bool = True):
        self.label, self.total, self.stream, self.enabled = label, max(int(total), 1), stream or sys.stderr, enabled
        self.start = time.perf_counter()
        self.last = -1.0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = 0

    def update(self, done: int):
        self.done = done
        if not self.enabled:
            return
        now = time.perf_counter()
        frac = done / self.total
        if self.tty:
            if now - self.last < 0.5 and done < self.total:
                return
        elif int(frac * 10) == int(self.last) and done < self.total:
            return
        self.last = now if self.tty else int(frac * 10)
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else math.nan
        msg = (f"{self.label}: step {done}/{self.total} ({100 * frac:3.0f} %), {elapsed:6.1f} s elapsed"
               + (f", ~{eta:.0f} s left" if done < self.total and math.isfinite(eta) else ""))
        self.stream.write(("\r" + msg + "\033[K") if self.tty else msg + "\n")
        if self.tty and done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


# ----------------------------------------------------------------------------- running

def _same_run(folder: Path, params: dict) -> bool:
    """True if `folder` already holds a finished run with these parameters."""
    try:
        run = json.loads((folder / RUN_FILE).read_text())
    except (OSError, ValueError):
        return False
    if run.get("params") != json.loads(json.dumps(params)) or not run.get("finished"):
        return False
    return all((folder / s).exists() for s in run.get("snapshots", []))


def _run(folder: Path, sim: Simulation, params: dict, snapshot_steps, label: str, progress: bool,
         extra: dict | None = None) -> dict:
    """Step `sim` to the last of `snapshot_steps` (sorted step numbers), writing a snapshot at
    step 0 and at each of them."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in list_snapshots(folder):
        old.unlink()
    (folder / RUN_FILE).unlink(missing_ok=True)
    targets = sorted({int(k) for k in snapshot_steps if k > 0})
    total = targets[-1]
    snaps = [write_snapshot(folder, sim.state, 0).name]
    bar = Progress(label, total, enabled=progress)
    done = 0
    t0 = time.perf_counter()
    for target in targets:
        sim.step(target - done, on_step=lambda j, base=done: bar.update(base + j))
        done = target
        snaps.append(write_snapshot(folder, sim.state, done).name)
    run = {"params": params, "steps": total, "snapshots": snaps,
           "wall_seconds": round(time.perf_counter() - t0, 2), "provenance": provenance(sim),
           "units": sim.state.units.as_dict(), "finished": True, **(extra or {})}
    (folder / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")
    return run


def orbital_period(units, radius_kpc: float = 8.5, speed_kms: float = 220.0) -> float:
    """Period of the circular orbit in cluster time units (about 62 T at 8.5 kpc, 220 km/s)."""
    return 2.0 * math.pi * radius_kpc * units.kpc / units.from_kms(speed_kms)


def run_tidal_tails(folder, n: int = TIDAL_DEFAULTS["n"], dt: float = TIDAL_DEFAULTS["dt"],
                    orbits: float = TIDAL_DEFAULTS["orbits"], version: str = TIDAL_DEFAULTS["version"],
                    precision: str = "dp", scheme: str = "leapfrog", seed: int = 1, snapshots_per_orbit: int = 4,
                    progress: bool = True, rerun: bool = False) -> dict:
    """The paper's set-up (Figs. 6-8): a uniform sphere of `n` equal-mass stars (total 15360 Msun,
    r_cl = 10 pc, Q = 0.3) at (8.5 kpc, 0, 0) moving at 220 km/s in the disk plane, for `orbits`
    orbital periods (~62 T = 237 Myr each), with a snapshot every 1/`snapshots_per_orbit` orbit.

    Defaults (N = 4096, dt = 2^-7 T = 30 kyr, leapfrog, version B, dp) take a few minutes on two
    CPU cores: with sub-virial (Q = 0.3) initial conditions the cluster collapses, re-virialises and
    loses stars through its Lagrange points, which drift along the orbit into leading and trailing
    tails. dt is 1/128 of the crossing time, small enough for the collective dynamics; close
    two-body encounters are softened (eps ~ 1e-3 r_cl) but not resolved.
    The paper's N = 15360 is `n=15360` (about 15 times the work: use a GPU version, D or E)."""
    folder = Path(folder)
    params = {"kind": "tidal_tails", "n": int(n), "dt": float(dt), "orbits": float(orbits),
              "version": str(version), "precision": precision, "scheme": scheme, "seed": int(seed),
              "snapshots_per_orbit": int(snapshots_per_orbit)}
    if not rerun and _same_run(folder, params):
        if progress:
            print(f"tidal tails: reusing the finished run in {folder.name}/ (N = {n}, dt = {dt:g})",
                  file=sys.stderr)
        return json.loads((folder / RUN_FILE).read_text())
    state = make_cluster(n, seed=seed)
    period = orbital_period(state.units)
    every = max(1, round(period / snapshots_per_orbit / dt))
    total = every * round(orbits * snapshots_per_orbit)
    sim = Simulation(state, version=version, scheme=scheme, precision=precision, dt=dt, diagnostics=False)
    return _run(folder, sim, params, range(every, total + 1, every), f"tidal tails N={n}", progress,
                {"orbital_period": period})


def run_black_hole(folder, n: int = BH_DEFAULTS["n"], ratios=BH_DEFAULTS["ratios"],
                   dt: float = BH_DEFAULTS["dt"], t_end: float = BH_DEFAULTS["t_end"],
                   radius_kpc: float = BH_DEFAULTS["radius_kpc"], speed_kms: float = BH_DEFAULTS["speed_kms"],
                   version: str = BH_DEFAULTS["version"], scheme: str = BH_DEFAULTS["scheme"],
                   precision: str = "dp", seed: int = 2, snapshots: int = 112, dense_steps: int = 40,
                   progress: bool = True, rerun: bool = False) -> list[dict]:
    """Paper Table 8 / Fig. 9: a cluster falls on a nearly radial orbit through a black hole of
    mass `ratio` x the cluster mass, at rest at the Galactic centre (one run per ratio, in
    `folder/ratio_<r>/`).

    Choices: the cluster starts at `radius_kpc` = 1 kpc on the x axis with a tangential
    `speed_kms` = 2 km/s (1 % of the circular speed there), so its orbit is nearly radial: it
    reaches the centre after ~1.4 T (5 Myr) at ~450 km/s (~175 velocity units) and its centre
    passes within about one cluster radius of the black hole, so that many stars cross the hole's
    immediate neighbourhood. At that speed the cluster moves 0.17 r_cl per
    step of dt = 2^-10 T (3.7 kyr), so the passage (~0.01 T) is resolved by a handful of steps:
    it is a stiff test, and the energy error jumps at pericentre, more for the heavier black
    hole. `t_end` = 3.5 T covers the fall, the passage and the climb out on the far side.
    Snapshots: `snapshots` evenly spaced, plus one every step for `dense_steps` steps either side
    of the pericentre predicted by `predicted_pericentre_step`, so the passage is sampled finely.
    The default ratios (1 and 10) bracket a black hole as massive as the cluster and one ten
    times heavier (1.5e4 and 1.5e5 Msun)."""
    folder = Path(folder)
    runs = []
    for ratio in ratios:
        sub = folder / f"ratio_{ratio:g}"
        params = {"kind": "black_hole", "n": int(n), "ratio": float(ratio), "dt": float(dt), "t_end": float(t_end),
                  "radius_kpc": float(radius_kpc), "speed_kms": float(speed_kms), "version": str(version),
                  "scheme": scheme, "precision": precision, "seed": int(seed), "snapshots": int(snapshots),
                  "dense_steps": int(dense_steps)}
        if not rerun and _same_run(sub, params):
            if progress:
                print(f"black hole: reusing the finished run in {sub.name}/ (N = {n}, M_BH/M_cl = {ratio:g})",
                      file=sys.stderr)
            runs.append(json.loads((sub / RUN_FILE).read_text()))
            continue
        state = add_black_hole(make_cluster(n, seed=seed, radius_kpc=radius_kpc, speed_kms=speed_kms), ratio)
        total = max(1, round(t_end / dt))
        every = max(1, total // snapshots)
        peri = predicted_pericentre_step(state, dt, total)
        dense = range(max(1, peri - dense_steps), min(total, peri + dense_steps) + 1)
        steps = sorted(set(range(every, total + 1, every)) | set(dense) | {total})
        sim = Simulation(state, version=version, scheme=scheme, precision=precision, dt=dt, diagnostics=False)
        runs.append(_run(sub, sim, params, steps, f"black hole M_BH/M_cl={ratio:g} N={n}", progress,
                         {"predicted_pericentre_step": peri}))
    return runs


def predicted_pericentre_step(state, dt: float, steps: int) -> int:
    """Step at which the cluster's centre of mass, moved as a point in the Galaxy plus the black
    hole (body N, held at its start), comes closest to the black hole (leapfrog, same dt)."""
    from ..core import galaxy
    m = state.m[:-1]
    x = (state.x[:, :-1] @ m / m.sum())[None, :]
    v = (state.v[:, :-1] @ m / m.sum())[None, :]
    bh, mbh = state.x[:, -1], state.m[-1]

    def acc(p):
        d = bh - p[0]
        return galaxy.acceleration(p, state.units) + mbh * d / (d @ d + state.eps ** 2) ** 1.5

    best, best_k = np.inf, 0
    for k in range(1, steps + 1):
        x = x + 0.5 * dt * v
        v = v + dt * acc(x)
        x = x + 0.5 * dt * v
        r = float(np.linalg.norm(x[0] - bh))
        if r < best:
            best, best_k = r, k
    return best_k


# ----------------------------------------------------------------------------- plotting

def load_run(folder) -> tuple[dict, list]:
    """(run.json, [(state, step), ...]) of a finished run, from its snapshots."""
    folder = Path(folder)
    try:
        run = json.loads((folder / RUN_FILE).read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"{folder.name}/{RUN_FILE} is missing: run the simulation first") from None
    snaps = [read_snapshot(p) for p in list_snapshots(folder)]
    if not snaps:
        raise FileNotFoundError(f"{folder.name}/ holds no snapshots: run the simulation first")
    return run, snaps


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


def fmt_dt(dt: float) -> str:
    """'2^-7' for powers of two, else '%g'."""
    e = math.log2(dt) if dt > 0 else math.nan
    return f"2^{int(e)}" if math.isfinite(e) and e == int(e) else f"{dt:g}"


def _nice(x: float) -> float:
    """Round up to 1, 2 or 5 times a power of ten."""
    e = 10.0 ** math.floor(math.log10(x))
    return next(m * e for m in (1, 2, 5, 10) if m * e >= x)


def tidal_radius(units, radius_kpc: float = 8.5) -> float:
    """Jacobi radius r_t = R (M / 3 M_gal(<R))^(1/3) in cluster radii (M_gal from V_c^2 R / G)."""
    from ..core.galaxy import circular_velocity_kms
    vc = float(circular_velocity_kms(radius_kpc))
    m_gal = vc ** 2 * radius_kpc * 1e3 / 4.300917e-3          # Msun
    return radius_kpc * units.kpc * (units.mass_msun / (3.0 * m_gal)) ** (1.0 / 3.0)


def plot_tidal_tails(folder, path) -> tuple[Path, str]:
    """Left: the orbit in the Galactic x-y plane (kpc) with the cluster's stars at 0, 0.5, 1 and
    1.5 orbits. Right: each of those snapshots centred on the cluster (pc), in the Galactic
    frame, showing the leading and trailing tails."""
    run, snaps = load_run(folder)
    p = run["params"]
    per_orbit = p["snapshots_per_orbit"]
    wanted = [0, per_orbit // 2, per_orbit, per_orbit + per_orbit // 2]
    chosen = [snaps[i] for i in wanted if i < len(snaps)]
    units = chosen[0][0].units
    period_myr = units.to_myr(run["orbital_period"])
    e0 = energy(chosen[0][0])
    e_last = abs(energy(snaps[-1][0]) - e0) / abs(e0)
    pc = units.r_cl_pc
    centres = [density_centre(s.positions) for s, _ in chosen]
    offsets = [(s.positions - c) * pc for (s, _), c in zip(chosen, centres)]
    extent = _nice(float(np.percentile(np.abs(offsets[-1][:, :2]), 99.5)) * 1.05)
    rt_pc = tidal_radius(units, p.get("radius_kpc", 8.5)) * pc
    with style():
        fig = plt.figure(figsize=(9.0, 4.8), layout="constrained")
        grid = fig.add_gridspec(2, 3, width_ratios=[1.25, 1, 1])
        ax0 = fig.add_subplot(grid[:, 0])
        phi = np.linspace(0, 2 * np.pi, 400)
        r_orb = p.get("radius_kpc", 8.5)
        ax0.plot(r_orb * np.cos(phi), r_orb * np.sin(phi), color="0.75", lw=0.8, ls="--", label="circular orbit")
        ax0.plot(0, 0, marker="+", color="k", ms=8, mew=1.2)
        colors = plt.cm.viridis(np.linspace(0.0, 0.85, len(chosen)))
        for (s, _), col in zip(chosen, colors):
            xy = s.positions[:, :2] / units.kpc
            ax0.scatter(xy[:, 0], xy[:, 1], s=1.5, color=col, lw=0, rasterized=True,
                        label=f"t = {units.to_myr(s.t):.0f} Myr ({s.t / run['orbital_period']:.2f} orbits)")
        ax0.set_aspect("equal")
        ax0.set_xlim(-10.5, 10.5)
        ax0.set_ylim(-10.5, 10.5)
        ax0.set_xlabel("x [kpc]")
        ax0.set_ylabel("y [kpc]")
        ax0.set_title("Orbit in the Galactic plane")
        ax0.legend(loc="lower center", markerscale=5, fontsize=6.5, bbox_to_anchor=(0.5, -0.02))
        for i, ((s, _), off, col) in enumerate(zip(chosen, offsets, colors)):
            ax = fig.add_subplot(grid[i // 2, 1 + i % 2])
            ax.scatter(off[:, 0], off[:, 1], s=0.6, color="k", lw=0, alpha=0.55, rasterized=True)
            ax.add_patch(plt.Circle((0, 0), rt_pc, fill=False, color="tab:red", lw=0.8, ls="--",
                                    label=f"tidal radius {rt_pc:.0f} pc"))
            if i == 0:
                ax.legend(loc="upper right", fontsize=6.5)
            ax.set_xlim(-extent, extent)
            ax.set_ylim(-extent, extent)
            ax.set_aspect("equal")
            ax.set_title(f"t = {units.to_myr(s.t):.0f} Myr = {s.t / run['orbital_period']:.2f} orbits",
                         fontsize=8, color=col * 0.8)
            ax.set_xlabel(r"$x - x_c$ [pc]" if i >= 2 else "")
            ax.set_ylabel(r"$y - y_c$ [pc]" if i % 2 == 0 else "")
        fig.suptitle(f"Tidal tails of a cluster on a circular orbit at {r_orb:g} kpc (cf. paper Figs. 6-8)\n"
                     f"N = {p['n']}, dt = {fmt_dt(p['dt'])} T = {units.to_myr(p['dt']) * 1e3:.0f} kyr, "
                     f"{p['scheme']}, version {p['version']} {p['precision']}; "
                     f"orbital period {period_myr:.0f} Myr; |dE/E| = {e_last:.1e} at the end", fontsize=8.5)
        path = save(fig, path, source_line(run))
    rt = tidal_radius(units, p.get("radius_kpc", 8.5))
    frac = [float(np.mean(np.linalg.norm(s.positions - c, axis=1) > 2 * rt)) for (s, _), c in zip(chosen, centres)]
    summary = (f"N = {p['n']} stars, dt = {fmt_dt(p['dt'])} T, {p['scheme']}, version {p['version']} {p['precision']}: "
               f"{run['steps']} steps in {run['wall_seconds']:.0f} s. Fraction of stars beyond twice the tidal radius "
               f"(r_t = {rt * pc:.0f} pc), i.e. in the tails, at "
               + ", ".join(f"{s.t / run['orbital_period']:.1f}" for s, _ in chosen) + " orbits: "
               + ", ".join(f"{100 * f:.1f} %" for f in frac)
               + f". Relative energy error at the end: {e_last:.1e}.")
    return path, summary


def plot_black_hole(folder, path) -> tuple[Path, str]:
    """Left: x-y tracks (pc) of the cluster's density centre for each mass ratio, the black hole
    at the centre. Right: relative energy error |E(t) - E0| / |E0| vs time (Myr), computed from
    the reloaded snapshots (E includes the black hole and the Galaxy)."""
    folder = Path(folder)
    subs = sorted((d for d in folder.glob("ratio_*") if (d / RUN_FILE).exists()),
                  key=lambda d: float(d.name.split("_", 1)[1]))
    if not subs:
        raise FileNotFoundError(f"{folder.name}/ holds no black-hole runs: run them first")
    colors = plt.cm.plasma(np.linspace(0.1, 0.75, len(subs)))
    with style():
        fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(8.6, 3.9), layout="constrained",
                                       gridspec_kw={"width_ratios": [1, 1.25]})
        zoom = ax0.inset_axes([0.62, 0.06, 0.35, 0.36])
        first_run = None
        summary = []
        for sub, col in zip(subs, colors):
            run, snaps = load_run(sub)
            first_run = first_run or run
            p = run["params"]
            units = snaps[0][0].units
            pc = units.r_cl_pc
            t = np.array([units.to_myr(s.t) for s, _ in snaps])
            e = np.array([energy(s) for s, _ in snaps])
            err = np.abs(e - e[0]) / abs(e[0])
            centres = np.array([density_centre(s.positions[:-1]) for s, _ in snaps]) * pc
            bh = np.array([s.positions[-1] for s, _ in snaps]) * pc
            r = np.linalg.norm(centres - bh, axis=1)
            i_peri = int(np.argmin(r))
            mass = p["ratio"] * units.mass_msun
            label = rf"$M_{{BH}}/M_{{cl}}$ = {p['ratio']:g} ({mass:.1e} M$_\odot$)"
            ax0.plot(centres[:, 0], centres[:, 1], color=col, label=label)
            ax0.plot(*centres[i_peri, :2], marker="o", color=col, ms=4)
            zoom.plot(centres[:, 0] - bh[i_peri, 0], centres[:, 1] - bh[i_peri, 1], color=col, marker=".", ms=2)
            zoom.plot(*(centres[i_peri, :2] - bh[i_peri, :2]), marker="o", color=col, ms=4)
            last = snaps[-1][0].positions[:-1] * pc
            ax0.scatter(last[:, 0], last[:, 1], s=0.6, color=col, alpha=0.35, lw=0, rasterized=True)
            ax1.plot(t[1:], np.maximum(err[1:], 1e-17), color=col, label=label + f", closest {r[i_peri]:.0f} pc")
            ax1.axvline(t[i_peri], color=col, lw=0.7, ls=":")
            summary.append(f"M_BH/M_cl = {p['ratio']:g}: closest approach {r[i_peri]:.1f} pc at {t[i_peri]:.1f} Myr, "
                           f"energy error {err[max(i_peri - 2, 1)]:.1e} before and {err[-1]:.1e} at the end")
        ax0.plot(0, 0, marker="*", color="k", ms=10, ls="none", label="black hole (Galactic centre)")
        ax0.set_xlabel("x [pc]")
        ax0.set_ylabel("y [pc]")
        ax0.set_title("Track of the cluster centre (dots: pericentre; stars at the end)", fontsize=8.5)
        ax0.legend(loc="upper left", fontsize=6.5, markerscale=1)
        ax0.set_ylim(top=ax0.get_ylim()[1] + 0.45 * np.diff(ax0.get_ylim())[0])
        zoom.plot(0, 0, marker="*", color="k", ms=8, ls="none")
        zoom.set_xlim(-30, 30)
        zoom.set_ylim(-30, 30)
        zoom.set_aspect("equal")
        zoom.tick_params(labelsize=6)
        zoom.set_title("around the black hole [pc]", fontsize=6.5)
        ax1.set_yscale("log")
        ax1.set_xlabel("time [Myr]")
        ax1.set_ylabel(r"relative energy error $|E - E_0| / |E_0|$")
        ax1.set_title("Energy error (dotted: time of closest approach)", fontsize=8.5)
        ax1.legend(loc="lower right", fontsize=6.5)
        p = first_run["params"]
        u = snaps[0][0].units
        fig.suptitle(f"Nearly radial passage through a central black hole (cf. paper Table 8, Fig. 9)\nN = {p['n']}, "
                     f"start {p['radius_kpc']:g} kpc with {p['speed_kms']:g} km/s tangential, "
                     f"dt = {fmt_dt(p['dt'])} T = {u.to_myr(p['dt']) * 1e3:.1f} kyr, {p['scheme']}, "
                     f"version {p['version']} {p['precision']}", fontsize=8.5)
        path = save(fig, path, source_line(first_run))
    return path, (f"N = {p['n']}, dt = {fmt_dt(p['dt'])} T, {p['scheme']}, version {p['version']} {p['precision']}. "
                  + "; ".join(summary) + ".")


__all__ = ["run_tidal_tails", "run_black_hole", "plot_tidal_tails", "plot_black_hole", "load_run",
           "orbital_period", "density_centre", "Progress", "VERSION_COLORS"]
