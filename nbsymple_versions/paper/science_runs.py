"""The science runs of the shared core, written as snapshots (`nbsymple_versions.runs.snapshots`)
so that a figure can be redrawn without re-running:

* tidal tails (paper Figs. 6-8): a cluster on its quasi-circular orbit at 8.5 kpc for 1.5 orbits;
* black-hole passage (paper Table 8 / Fig. 9): a cluster on a nearly radial orbit through a
  massive black hole at the Galactic centre, for several black-hole-to-cluster mass ratios.

Each run folder holds `snap_<step>.npz` files and `run.json` (the run's parameters and
provenance: machine, CPU and its vector ISA, device, threads, commit, date); runs are
checkpointed and resume where they stopped (`resumable`).
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .. import Simulation, add_black_hole, make_cluster
from ..core import galaxy
from ..core.diagnostics import cluster_problem
from ..core.ics import default_softening
from ..core.units import Units
from ..core.work import check_memory, check_time
from ..instruments.provenance import cpu_model, git_commit, machine_name, vector_isa
from ..runs.checkpoint import CheckpointError
from ..runs.paths import FileRefused
from ..runs.snapshots import by_step, read_snapshot
from ..versions import simulated
from . import resumable
from .resumable import RUN_FILE, run_record, snapshots_lacking

STEPS_PER_ENCOUNTER = 4


def encounter_time(n: int) -> float:
    """sqrt(eps^3 / (G m)) in T: how long two of the N stars (m = 1/N; G = M = r_cl = 1) take to
    pass each other at the softening length eps = `default_softening(N)`. eps^3 N does not depend
    on N, so this is 2.05e-3 T (7.8 kyr) at any N. Fixed steps longer than it do not resolve the
    close encounters, and the cluster heats steadily."""
    return math.sqrt(default_softening(n) ** 3 * n)


def encounter_step(n: int, per: int = STEPS_PER_ENCOUNTER) -> float:
    """The step rule of the default tidal-tail run: the largest power of two <= encounter_time / per
    (2^-11 T for per = 4: 4.2 steps per encounter at the softening length)."""
    return 2.0 ** math.floor(math.log2(encounter_time(n) / per))


def step_rule(n: int, dt: float) -> str:
    """The rule and the numbers it used, in one sentence, for `dt` (the rule's or one given)."""
    t_enc, eps = encounter_time(n), default_softening(n)
    ruled = encounter_step(n)
    return (f"encounter time at the softening length sqrt(eps^3 / (G m)) = {t_enc:.3g} T (eps = {eps:.3g} r_cl, "
            f"m = 1/{n}); rule dt = largest power of two <= t_enc / {STEPS_PER_ENCOUNTER} = {ruled:.4g} T "
            + (f"(used: dt = {dt:.4g} T = t_enc / {t_enc / dt:.1f})" if dt == ruled else
               f"(not used: dt = {dt:.4g} T = t_enc / {t_enc / dt:.2g} was given)"))


# The default tidal-tail figure (`make paper`): N = 2048 and the encounter step (2^-11 T) keep the
# cluster's internal-energy error below 1e-2 over 1.5 orbits for a few minutes on two cores (at
# N = 4096 the same step takes four times as long; 2^-10 T ends near 1e-2; see docs/paper.md)
TIDAL_DEFAULTS = {"n": 2048, "dt": encounter_step(2048), "orbits": 1.5, "version": "B", "precision": "dp"}
# the paper's Figs. 6-8 at full size (`nbsymple paper --full`): dsp keeps float64-like
# coordinates at 850 cluster radii for 0.6 of dp's cost on a CPU (sp's float32 positions
# are as coarse as a tenth of the softening there); dt = 2^-10 T keeps the internal-energy error
# at 5.1e-3 of the binding energy after 1.5 orbits (2^-9 T: 3.4e-2, 2^-8 T: 0.11; the committed
# series); over 1 T from one snapshot dp gives dsp's error to three digits (longer, the chaotic
# runs part), so the step, not the precision, sets it
TIDAL_FULL = {"n": 15360, "dt": 2.0 ** -10, "orbits": 1.5, "precision": "dsp"}
TIDAL_FULL_N = TIDAL_FULL["n"]
FULL_ORBITS = (0.5, 1.0, 1.5)     # when the full-size figure, its table and its dt series look
# the black-hole passages: dt = 2^-14 T, the encounter time at the softening length with a black
# hole of the cluster's mass (sqrt(eps^3 / (G M_BH)) = 6.4e-5 T at N = 1024), measured to keep the
# internal-energy error below 1e-2 at both ratios (2^-10 T: 7.9e-2 and 0.58; see docs/paper.md)
BH_DEFAULTS = {"n": 1024, "dt": 2.0 ** -14, "ratios": (1.0, 10.0), "radius_kpc": 1.0, "speed_kms": 2.0,
               "t_end": 3.5, "version": "B", "scheme": "leapfrog"}


def provenance(sim: Simulation) -> dict:
    """Where and how a run ran, for its run.json."""
    return {"machine": machine_name(), "cpu": cpu_model(), "isa": vector_isa(),
            "num_cpu": os.cpu_count(), "device": sim.device, "threads": sim.threads, "commit": git_commit(),
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def _same_run(folder: Path, params: dict) -> bool:
    """True if `folder` already holds a finished run with these parameters."""
    try:
        run = run_record(folder)
    except FileRefused:
        return False
    if run is None or run.get("params") != json.loads(json.dumps(params)) or not run.get("finished"):
        return False
    return snapshots_lacking(folder, run) is None


def _run(folder: Path, build, params: dict, snapshot_steps, label: str, progress: bool, extra: dict | None = None,
         rerun: bool = False, checkpoint_every: int = 500) -> dict:
    """`resumable.run` with this module's provenance."""
    return resumable.run(folder, build, params, snapshot_steps, label, progress, extra, checkpoint_every, rerun,
                         provenance)


def orbital_period(units, radius_kpc: float = galaxy.SUN_RADIUS_KPC,
                   speed_kms: float = galaxy.SUN_SPEED_KMS) -> float:
    """Period of the circular orbit in cluster time units (about 62 T at 8.5 kpc, 220 km/s)."""
    return 2.0 * math.pi * radius_kpc * units.kpc / units.from_kms(speed_kms)


SNAPSHOT_TOLERANCE = 0.01    # a tidal run's snapshot spacing (whole steps) within 1 % of its share of an orbit


def tidal_schedule(dt: float, orbits: float, snapshots_per_orbit: int = 4) -> tuple[int, int]:
    """(steps between snapshots, total steps) of a tidal-tail run; ValueError (one sentence) for
    settings that give no snapshot (at most 1/(2 x snapshots_per_orbit) orbits: round() takes a
    half to 0), a step count
    no integer holds (a time step too small for the orbits asked for) or a step so long that whole
    steps miss the snapshot spacing by more than SNAPSHOT_TOLERANCE (the run would not span the
    orbits asked for: at most 2 SNAPSHOT_TOLERANCE of the spacing, 0.31 T, is always within it)."""
    period = orbital_period(Units())
    try:
        every = max(1, round(period / snapshots_per_orbit / dt))
        snaps = round(orbits * snapshots_per_orbit)
    except (OverflowError, ValueError, ZeroDivisionError):
        raise ValueError(f"a tidal-tail run with dt = {dt:g} and {orbits:g} orbits has more steps than can be "
                         f"counted; choose a larger --tidal-dt or fewer --tidal-orbits") from None
    if snaps < 1:
        raise ValueError(f"a tidal-tail run of {orbits:g} orbits takes no snapshot (one every "
                         f"1/{snapshots_per_orbit} orbit), so it has no steps; choose --tidal-orbits of "
                         f"{1 / snapshots_per_orbit:g} or more")
    spacing = period / snapshots_per_orbit
    if abs(every * dt - spacing) > SNAPSHOT_TOLERANCE * spacing:     # (dt = 100: "1.5 orbits" ran 9.6, drawn as 1.5)
        raise ValueError(f"--tidal-dt {dt:g} is too long for a snapshot every 1/{snapshots_per_orbit} orbit "
                         f"({spacing:.3g} T): its snapshots would fall every {every * dt:.3g} T, so the run would not "
                         f"span the {orbits:g} orbits asked for; choose --tidal-dt of at most "
                         f"{2 * SNAPSHOT_TOLERANCE * spacing:.2g} T (any such step fits it; a longer one only where "
                         f"whole steps do)")        # (a hunt: "at most 0.31 T" of a command that takes 0.5 T)
    if abs(orbits * snapshots_per_orbit - snaps) > 1e-9 * snaps:      # (a hunt: run as the nearest, recorded as asked)
        lower, upper = math.floor(orbits * snapshots_per_orbit), math.ceil(orbits * snapshots_per_orbit)
        nearest = " or ".join(f"{k / snapshots_per_orbit:g}" for k in (lower, upper) if k >= 1)
        raise ValueError(f"a tidal-tail run of {orbits:g} orbits is no whole number of snapshots (one every "
                         f"1/{snapshots_per_orbit} orbit); choose --tidal-orbits {nearest}")
    return every, every * snaps


def black_hole_steps(dt: float, t_end: float) -> int:
    """Steps of a black-hole run; ValueError (one sentence) when t_end / dt is too large to count,
    or when whole steps end the run more than SNAPSHOT_TOLERANCE of t_end away from it (a step
    of at most 2 SNAPSHOT_TOLERANCE t_end always ends within it)."""
    try:
        steps = max(1, round(t_end / dt))
    except (OverflowError, ValueError, ZeroDivisionError):
        raise ValueError(f"a black-hole run with dt = {dt:g} to t = {t_end:g} has more steps than can be "
                         f"counted; choose a larger --bh-dt or a smaller --bh-t-end") from None
    if abs(steps * dt - t_end) > SNAPSHOT_TOLERANCE * t_end:     # (dt = 100: one step to 100 T, recorded as 3.5)
        raise ValueError(f"--bh-dt {dt:g} is too long for --bh-t-end {t_end:g}: whole steps would end the run at "
                         f"{steps * dt:.3g} T, not {t_end:g} T; choose --bh-dt of at most "
                         f"{2 * SNAPSHOT_TOLERANCE * t_end:.2g} T (any such step fits it; a longer one only where "
                         f"whole steps do)")
    return steps


def check_tidal_work(n: int, dt: float, orbits: float, snapshots_per_orbit: int = 4,
                     version: str = TIDAL_DEFAULTS["version"]) -> tuple[int, int]:
    """`tidal_schedule`, once the run's n bodies fit in memory and its steps can end within
    `core.work`'s limit on `version`; ValueError (one sentence with the estimate) otherwise."""
    every, total = tidal_schedule(dt, orbits, snapshots_per_orbit)
    check_memory(n, "--tidal-n")
    check_time(n, total, f"a tidal-tail run with --tidal-dt {dt:g} over --tidal-orbits {orbits:g}",
               "a larger --tidal-dt, fewer --tidal-orbits or a smaller --tidal-n", simulated(version))
    return every, total


def fmt_dt(dt: float) -> str:
    """'2^-7' for powers of two, else '%g'."""
    e = math.log2(dt) if dt > 0 else math.nan
    return f"2^{int(e)}" if math.isfinite(e) and e == int(e) else f"{dt:g}"


def fmt_wall(seconds: float) -> str:
    """A wall time: seconds below 90 s, minutes below 90 min, else hours."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def _precision_kept(folder: Path) -> str | None:
    """The precision of the science run kept in `folder`: a finished one's (its run.json), a
    stopped one's (its checkpoint); None where there is none that can be read."""
    try:
        params, _ = resumable.kept_params(folder)
    except (FileRefused, CheckpointError):
        return None
    return params.get("precision") if isinstance(params, dict) else None


def run_folder(out, n: int, dt: float, orbits: float = TIDAL_FULL["orbits"], seed: int = 1,
               precision: str = TIDAL_FULL["precision"]) -> Path:
    """Where `nbsymple paper --full` keeps the run of N bodies at step dt: one folder per dt, and
    per number of orbits, precision and seed where they are not the defaults (1.5 orbits, dsp,
    seed 1). The folder without the precision in its name is dsp's, and that of any precision's
    run an earlier version kept there, finished or stopped (its checkpoint resumed, its snapshots
    read): such a run stays in it, and a dsp run then takes `_dsp`."""
    runs = Path(out) / "runs"
    base = f"tidal_tails_n{n}_dt{fmt_dt(dt)}" + ("" if orbits == TIDAL_FULL["orbits"] else f"_{orbits:g}orb")
    last = "" if seed == 1 else f"_seed{seed}"
    plain = runs / (base + last)
    kept = _precision_kept(plain)
    if kept == precision or (kept is None and precision == TIDAL_FULL["precision"]):
        return plain
    return runs / f"{base}_{precision}{last}"


def finished_runs(out, n: int) -> list[Path]:
    """The folders in OUT/runs holding a finished full-size run of N bodies, at any dt (the
    folder of an earlier version, `tidal_tails_n<N>`, included)."""
    runs = Path(out) / "runs"
    names = re.compile(rf"tidal_tails_n{n}(_dt.+)?")
    found = []
    for d in sorted(runs.iterdir()) if runs.is_dir() else ():
        try:
            run = run_record(d) or {}
        except FileRefused:
            continue
        if names.fullmatch(d.name) and run.get("finished") and run.get("params", {}).get("n") == n:
            found.append(d)
    return found


def ratio_folder(ratio: float) -> str:
    """The run folder of a black hole of `ratio` x the cluster's mass (6 significant digits)."""
    return f"ratio_{ratio:g}"


def check_black_hole_work(n: int, dt: float, t_end: float, ratios, version: str = BH_DEFAULTS["version"]) -> int:
    """`black_hole_steps` of each run, once its n bodies and the black hole fit in memory and the
    steps of all `ratios` can end within `core.work`'s limit on `version`; ValueError (one
    sentence) otherwise, where two ratios would share a run folder (`ratio_folder`), or where a black
    hole would outweigh the Galaxy's bulge (AS91's 1.4e10 Msun: over 9e5 cluster masses)."""
    units = Units()
    heaviest = galaxy.M1 * units.galaxy_mass_unit_msun / units.mass_msun     # the bulge's mass, in cluster masses
    if too_heavy := [r for r in ratios if r > heaviest]:       # (a hunt: 1e150 ran, and overflowed)
        raise ValueError(f"--bh-ratios {too_heavy[0]:g}: a black hole of {too_heavy[0]:g} cluster masses "
                         f"({too_heavy[0] * units.mass_msun:.3g} Msun) outweighs the Galaxy's bulge "
                         f"({heaviest * units.mass_msun:.3g} Msun), which the runs hold fixed around it; give "
                         f"ratios up to {heaviest:.3g}")
    names = [ratio_folder(r) for r in ratios]
    if shared := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"--bh-ratios {' '.join(f'{r!r}' for r in ratios)} gives two runs the folder "
                         f"{shared[0]} (ratios that agree to 6 digits, or one given twice): give distinct ratios")
    steps = black_hole_steps(dt, t_end)
    check_memory(n + 1, "--bh-n")
    check_time(n + 1, steps * len(ratios), f"{len(ratios)} black-hole runs (--bh-ratios) with --bh-dt {dt:g} to "
               f"--bh-t-end {t_end:g}", "a larger --bh-dt, a smaller --bh-t-end or a smaller --bh-n",
               simulated(version))
    return steps


def tidal_params(n: int = TIDAL_DEFAULTS["n"], dt: float = TIDAL_DEFAULTS["dt"],
                 orbits: float = TIDAL_DEFAULTS["orbits"], version: str = TIDAL_DEFAULTS["version"],
                 precision: str = TIDAL_DEFAULTS["precision"], scheme: str = "leapfrog", seed: int = 1,
                 snapshots_per_orbit: int = 4) -> dict:
    """A tidal-tail run's parameters (`run_tidal_tails`), as its run.json and checkpoint keep them:
    what a run kept in its folder is compared with."""
    return {"kind": "tidal_tails", "n": int(n), "dt": float(dt), "orbits": float(orbits), "version": str(version),
            "precision": precision, "scheme": scheme, "seed": int(seed),
            "snapshots_per_orbit": int(snapshots_per_orbit)}


def run_tidal_tails(folder, progress: bool = True, rerun: bool = False, checkpoint_every: int = 500, **given) -> dict:
    """The paper's set-up (Figs. 6-8): a uniform sphere of `n` equal-mass stars (total 15360 Msun,
    r_cl = 10 pc, Q = 0.3) at (8.5 kpc, 0, 0) moving at 220 km/s in the disk plane, for `orbits`
    orbital periods (~62 T = 237 Myr each), with a snapshot every 1/`snapshots_per_orbit` orbit.

    Defaults (N = 2048, dt = 2^-11 T = 1.9 kyr, leapfrog, version B, dp) take a few minutes on two
    CPU cores: with sub-virial (Q = 0.3) initial conditions the cluster collapses, re-virialises and
    loses stars through its Lagrange points, which drift along the orbit into leading and trailing
    tails. dt is `encounter_step`: a quarter of the time two stars take to pass at the softening
    length (eps ~ 1e-3 r_cl), so that those encounters are resolved and the cluster's heating stays
    below 1e-2 of its binding energy over 1.5 orbits (longer steps heat it steadily).
    The paper's N = 15360 is `TIDAL_FULL` (dt = 2^-10 T: about 28 times the work). Checkpoints every
    `checkpoint_every` steps: an interrupted run resumes where it stopped when called again
    with the same parameters (`given`: those of `tidal_params`)."""
    folder = Path(folder)
    params = tidal_params(**given)
    n, dt, orbits, version, precision, scheme, seed, snapshots_per_orbit = (params[k] for k in (
        "n", "dt", "orbits", "version", "precision", "scheme", "seed", "snapshots_per_orbit"))
    if not rerun and _same_run(folder, params):
        if progress:
            print(f"tidal tails: reusing the finished run in {folder.name}/ (N = {n}, dt = {dt:g})",
                  file=sys.stderr)
        return run_record(folder)
    period = orbital_period(Units())
    every, total = check_tidal_work(n, dt, orbits, snapshots_per_orbit, version)

    def build():
        return Simulation(make_cluster(n, seed=seed), version=version, scheme=scheme, precision=precision, dt=dt,
                          diagnostics=False)
    return _run(folder, build, params, range(every, total + 1, every), f"tidal tails N={n}", progress,
                {"orbital_period": period}, rerun, checkpoint_every)


def black_hole_params(ratio: float, n: int = BH_DEFAULTS["n"], dt: float = BH_DEFAULTS["dt"],
                      t_end: float = BH_DEFAULTS["t_end"], radius_kpc: float = BH_DEFAULTS["radius_kpc"],
                      speed_kms: float = BH_DEFAULTS["speed_kms"], version: str = BH_DEFAULTS["version"],
                      scheme: str = BH_DEFAULTS["scheme"], precision: str = "dp", seed: int = 2, snapshots: int = 112,
                      dense_steps: int = 40) -> dict:
    """The parameters of the black-hole run of `ratio` (`run_black_hole`), as its run.json and
    checkpoint keep them: what a run kept in its folder is compared with."""
    return {"kind": "black_hole", "n": int(n), "ratio": float(ratio), "dt": float(dt), "t_end": float(t_end),
            "radius_kpc": float(radius_kpc), "speed_kms": float(speed_kms), "version": str(version),
            "scheme": scheme, "precision": precision, "seed": int(seed), "snapshots": int(snapshots),
            "dense_steps": int(dense_steps)}


def run_black_hole(folder, ratios=BH_DEFAULTS["ratios"], progress: bool = True, rerun: bool = False,
                   **given) -> list[dict]:
    """Paper Table 8 / Fig. 9: a cluster falls on a nearly radial orbit through a black hole of
    mass `ratio` x the cluster mass, at rest at the Galactic centre (one run per ratio, in
    `folder/ratio_<r>/`).

    Choices: the cluster starts at `radius_kpc` = 1 kpc on the x axis with a tangential
    `speed_kms` = 2 km/s (1 % of the circular speed there), so its orbit is nearly radial: it
    reaches the centre after ~1.4 T (5 Myr) at ~450 km/s (~175 velocity units) and its centre
    passes within about one cluster radius of the black hole, so that many stars cross the hole's
    immediate neighbourhood. It is a stiff test: the energy error jumps at pericentre, more for
    the heavier black hole. At dt = 2^-10 T (3.7 kyr; the cluster moves 0.17 r_cl per step) the
    internal-energy error ends at 7.9e-2 (M_BH/M_cl = 1) and 0.58 (10); at the default 2^-14 T
    (0.23 kyr, 0.011 r_cl per step, the passage resolved by ~100 steps) at 5e-4 and 5e-3.
    `t_end` = 3.5 T covers the fall, the passage and the climb out on the far side.
    Snapshots: `snapshots` evenly spaced, plus one every step for `dense_steps` steps either side
    of the pericentre predicted by `predicted_pericentre_step`, so the passage is sampled.
    The default ratios (1 and 10) bracket a black hole as massive as the cluster and one ten
    times heavier (1.5e4 and 1.5e5 Msun). `given`: the parameters of `black_hole_params` but the ratio."""
    folder = Path(folder)
    common = black_hole_params(1.0, **given)
    n, dt, t_end, radius_kpc, speed_kms, version, scheme, precision, seed, snapshots, dense_steps = (
        common[k] for k in ("n", "dt", "t_end", "radius_kpc", "speed_kms", "version", "scheme", "precision", "seed",
                            "snapshots", "dense_steps"))
    check_black_hole_work(n, dt, t_end, ratios, version)
    runs = []
    for ratio in ratios:
        sub = folder / ratio_folder(ratio)
        params = black_hole_params(ratio, **given)
        if not rerun and _same_run(sub, params):
            if progress:
                print(f"black hole: reusing the finished run in {sub.name}/ (N = {n}, M_BH/M_cl = {ratio:g})",
                      file=sys.stderr)
            runs.append(run_record(sub))
            continue
        state = add_black_hole(make_cluster(n, seed=seed, radius_kpc=radius_kpc, speed_kms=speed_kms), ratio)
        total = black_hole_steps(dt, t_end)
        every = max(1, total // snapshots)
        peri = predicted_pericentre_step(state, dt, total)
        dense = range(max(1, peri - dense_steps), min(total, peri + dense_steps) + 1)
        steps = sorted(set(range(every, total + 1, every)) | set(dense) | {total})

        def build(state=state):
            return Simulation(state, version=version, scheme=scheme, precision=precision, dt=dt, diagnostics=False)
        runs.append(_run(sub, build, params, steps, f"black hole M_BH/M_cl={ratio:g} N={n}", progress,
                         {"predicted_pericentre_step": peri}, rerun))
    return runs


def predicted_pericentre_step(state, dt: float, steps: int) -> int:
    """Step at which the cluster's centre of mass, moved as a point in the Galaxy plus the black
    hole (body N, held at its start), first comes closest to the black hole (leapfrog, same dt):
    its first pericentre, else (still falling at the end) its last step. A hunt: with a longer
    `t_end` the deepest of four passages was taken, the first (the paper's) sampled every 13 steps."""
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
        if r >= best:                    # moving away: the first pericentre was the step before
            return best_k
        best, best_k = r, k
    return best_k


def load_run(folder) -> tuple[dict, list]:
    """(run.json, [(state, step), ...]) of a finished run, from the snapshots its run.json lists: a stray one
    in the folder, another run's, is not the run's (a hunt: it was read among them, and drawn). The
    snapshots must be the run's: each listed once, of its N bodies, the last at its last step."""
    folder = Path(folder)
    run = run_record(folder)
    if run is None:
        raise FileNotFoundError(f"{folder.name}/{RUN_FILE} is missing: run the simulation first")
    if (lacking := snapshots_lacking(folder, run)) is not None:
        raise FileNotFoundError(f"{folder.name}/ {lacking}: run it again (--rerun)")
    if len(set(run["snapshots"])) < len(run["snapshots"]):     # (a hunt: one snapshot three times, "converged")
        raise FileRefused(f"run record {folder / RUN_FILE} lists a snapshot twice, which nbsymple paper never does")
    paths = by_step(folder / name for name in run["snapshots"])
    snaps = [read_snapshot(p) for p in paths]
    if not snaps:
        raise FileNotFoundError(f"{folder.name}/ holds no snapshots: run the simulation first")
    bodies = run["params"]["n"] + (run["params"]["kind"] == "black_hole")     # (a hunt: "N = 10^20 stars" drawn)
    if (other := next(((p, s) for p, (s, _) in zip(paths, snaps) if s.n != bodies), None)) is not None:
        raise FileRefused(f"snapshot {folder.name}/{other[0].name} holds {other[1].n} bodies, not the {bodies} its "
                          f"{RUN_FILE} gives")
    if snaps[-1][1] != run["steps"]:
        raise FileRefused(f"{folder.name}/{RUN_FILE} gives {run['steps']} steps, but its last snapshot is of step "
                          f"{snaps[-1][1]}: the run's record and its snapshots disagree")
    for path, (state, _) in zip(paths, snaps):    # bodies no run steps to (a hunt: a coordinate of 1e300 drawn with
        if (problem := cluster_problem(state)) is not None:    # NumPy's warnings, every body at one point hung Agg)
            raise FileRefused(f"snapshot {folder.name}/{path.name}: {problem}; no run of nbsymple writes it")
    return run, snaps

