"""What the paper's figures and tables are made of: the asv benchmarks they read, the numbers
taken out of them (series, speed-ups, task shares, conservation errors), the machine they ran
on, and the paper's own numbers to set beside them. No plotting and no writing here."""
from __future__ import annotations

import math
import re

import numpy as np

from ..core.schemes import LEAPFROG
from ..core.vocabulary import TASKS
from ..versions import CPU_LETTERS, GPU_LETTERS, LETTERS, get_version
from .results import Results

# ----------------------------------------------------------------------------- benchmarks read

STEP = {"leapfrog": "steps.Step.time_step_leapfrog", "si6a": "steps.Step.time_step_si6a"}
SHARE = "steps.TaskShares.track_share"
# each task's own timing, and whether it has a precision parameter (read at dp); a task a
# version does not have (transfer on a CPU, communicate off MPI) counts as zero
TASK_TIMES = {"pairwise": ("tasks.Tasks.time_pairwise", True), "galactic": ("tasks.HostTasks.time_galactic", False),
              "integrate": ("tasks.HostTasks.time_integrate", False),
              "transfer": ("tasks.Transfer.time_transfer", True)}
ENERGY = "accuracy.Conservation.track_energy_error"
ENERGY_STEP = "accuracy.Conservation.track_energy_error_per_step"
INTERNAL = "accuracy.Conservation.track_internal_energy_error"
ANGULAR = "accuracy.Conservation.track_angular_momentum_error"
THREADS = "throughput.Threads.track_threads"      # the suite records numba's thread count
# what `accuracy.Conservation` (its version "1") integrates: the paper's set-up at this N and seed,
# version B on one thread, 1000 steps of dt = 5e-4 T (benchmarks/grid.py; tests hold them equal; the
# smoke grid of d1608f4 up to 87bd841 ran N = 256)
CONSERVATION_SETUP = {"n": 1024, "seed": 1, "version": "B", "steps": 1000, "dt": 5e-4}

# what the benchmark figures and tables need, each a tuple of alternatives: the step timings (Fig. 2,
# speed-up, Fig. 5), the task shares or the pairwise timing they are taken from (Tables 4-6), an
# accuracy benchmark (Tables 2, 7); `nbsymple paper` reads the newest commit that holds them all
PAPER_NEEDS = ((STEP["leapfrog"],), (SHARE, TASK_TIMES["pairwise"][0]), (ENERGY, ENERGY_STEP, INTERNAL, ANGULAR))

REFERENCE = LETTERS[0]          # A, 1 CPU core: the speed-ups are over it
ALL_CORES = CPU_LETTERS[-1]     # B, all CPU cores: where the GPU versions must beat it
GPU_RANGE = f"{GPU_LETTERS[0]}-{GPU_LETTERS[-1]}"   # 'C-E', for sentences

# ----------------------------------------------------------------------------- the paper's numbers

# Reported ranges for SI6A in dp (its text; the table bodies are not public).
PAPER_SI6A_DP_ENERGY_PER_STEP = (1.4e-14, 8.8e-14)
PAPER_SI6A_DP_LXY = (1.4e-13, 6e-11)
PAPER_SI6A_SP_DP_ORDERS = (7, 8)    # orders of magnitude dp gains over sp after 1000 steps
PAPER_PAIRWISE_SHARE = 99.8         # task 1's share of a step at its largest N is above this (%)
PAPER_GPU = "Tesla C1060"
PAPER_GPU_SP_OVER_DP = 12           # its sp over dp throughput


MEASURED = "measured"                # the source of a task-share row from the results (else: a prediction's label)


class MissingData(LookupError):
    """The results lack what a figure or table needs (one sentence says what)."""


# ----------------------------------------------------------------------------- series

def series(res: Results, name: str, precision: str = "dp") -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{version: (N array, value array)} of a (version, n, precision) benchmark, sorted by N."""
    if name not in res:
        raise MissingData(f"the results of commit {res.commit[:8]} have no benchmark {name}")
    by_version: dict[str, list] = {}
    for (version, n, prec), value in res.get(name).items():
        if prec == precision and value > 0:
            by_version.setdefault(str(version), []).append((int(n), value))
    out = {}
    for v in sorted(by_version):
        pts = sorted(by_version[v])
        out[v] = (np.array([p[0] for p in pts], dtype=float), np.array([p[1] for p in pts]))
    return out


def step_intervals(res: Results, scheme: str = "leapfrog", precision: str = "dp") -> dict[tuple, tuple]:
    """{(version, N): (low, high)}: the 99 % confidence interval asv recorded for each step time
    (the time itself at both ends where none was recorded)."""
    if STEP[scheme] not in res:
        return {}
    return {(str(v), int(n)): span for (v, n, prec), span in res.interval(STEP[scheme]).items()
            if prec == precision and span[1] > 0}


def speedups(res: Results, scheme: str = "leapfrog", precision: str = "dp", curves: dict | None = None) -> dict:
    """{version: (N, t_A / t_version)} at the N where both were measured; with `curves`
    ({version: (N, t)}, e.g. predicted steps), of those at the N where A was measured."""
    data = series(res, STEP[scheme], precision)
    if REFERENCE not in data:
        raise MissingData(f"the results of commit {res.commit[:8]} have no version {REFERENCE} step timings "
                          f"({STEP[scheme]}, {precision}) to compute speed-ups from")
    na, ta = data[REFERENCE]
    ref = dict(zip(na, ta))
    out = {}
    for v, (n, t) in (data if curves is None else curves).items():
        if v == REFERENCE:
            continue
        keep = [i for i, x in enumerate(n) if x in ref]
        if keep:
            out[v] = (n[keep], np.array([ref[n[i]] / t[i] for i in keep]))
    return out


# ----------------------------------------------------------------------------- task shares

def task_share_table(res: Results) -> tuple[list[dict], str]:
    """Rows {version, n, pairwise, galactic, integrate, transfer, communicate, source} in % of a dp
    leapfrog step (and `waited`, where a threaded host task waited: `_waited`), and where they
    came from. From `steps.TaskShares.track_share` (the TaskClock); if that benchmark is absent,
    from the four task timings of `TASK_TIMES` (`tasks.Tasks.time_pairwise` and
    `tasks.Transfer.time_transfer` in dp, `tasks.HostTasks.time_galactic` and `time_integrate`,
    which have no precision), each times the number a leapfrog step makes of it (share of their
    sum: one force evaluation, 1.5 of integrate's drift and kick)."""
    rows: dict[tuple, dict] = {}
    if SHARE in res:
        cells: dict[tuple, dict] = {}
        for (version, n, task), value in res.get(SHARE, keep_missing=True).items():
            if task in TASKS:
                cells.setdefault((str(version), int(n)), {})[task] = value
        kept = {task for shares in cells.values() for task, v in shares.items() if math.isfinite(v)}
        partial: dict[str, list] = {}       # a row with a share missing, or none where others were measured,
        for key, shares in cells.items():   # is said to be left out (a hunt: they vanished in silence); a task
            # no row has is not this commit's TaskClock's (communicate, before F): its cells stay blank
            measured = {k: v for k, v in shares.items() if k in kept}
            if missing := [k for k, v in measured.items() if not math.isfinite(v)]:
                if len(missing) < len(measured):
                    partial.setdefault(key[0], []).append(f"{key[1]} ({', '.join(missing)})")
            else:
                rows[key] = shares
        absent: dict[str, list] = {}        # (an N no version reached, beyond the grid's budget, is not one)
        for key, shares in cells.items():
            if not any(map(math.isfinite, shares.values())) and any(k[0] == key[0] for k in rows) \
                    and any(k[1] == key[1] for k in rows):
                absent.setdefault(key[0], []).append(str(key[1]))
        origin = f"{SHARE} (TaskClock shares of a dp leapfrog step)" + "".join(
            f"; {v} left out at N = {', '.join(ns)}: {why}" for notes, why in ((partial, "a share not measured"),
                                                                            (absent, "not measured"))
            for v, ns in sorted(notes.items()))
    elif TASK_TIMES["pairwise"][0] in res:
        times: dict[tuple, dict] = {}
        per_step = {"integrate": LEAPFROG.drift_kick_pairs}           # the others: one per force evaluation
        for task, (name, has_precision) in TASK_TIMES.items():
            for key, value in (res.get(name).items() if name in res else ()):
                if not has_precision or key[2] == "dp":
                    times.setdefault((str(key[0]), int(key[1])), {})[task] = value * per_step.get(task, 1.0)
        incomplete = {}
        for key, t in times.items():
            missing = [k for k in get_version(key[0]).tasks if k in TASK_TIMES and k not in t]
            total = sum(t.values())
            if missing:            # a task not timed (not run) is not a task that takes no time
                incomplete.setdefault(key[0], []).append(f"{key[1]} ({', '.join(missing)})")
            elif total > 0:
                rows[key] = {k: 100.0 * t.get(k, 0.0) / total for k in TASKS}
        notes, waited = _waited(times)
        for key in waited & rows.keys():
            rows[key]["waited"] = True
        origin = "the tasks.* timings in dp, as many of each as a leapfrog step makes (share of their sum)" + "".join(
            f"; {v} left out at N = {', '.join(ns)}: no timing of that task" for v, ns in sorted(incomplete.items())) \
            + "".join(f"; {note}" for note in notes)

    else:
        raise MissingData(f"the results of commit {res.commit[:8]} have neither {SHARE} nor "
                          f"{TASK_TIMES['pairwise'][0]}")
    table = []
    for (version, n), shares in sorted(rows.items()):
        table.append({"version": version, "n": n, **{k: shares.get(k, math.nan) for k in TASKS}, "source": MEASURED,
                      **({"waited": True} if shares.get("waited") else {})})
    if not table:
        raise MissingData(f"the results of commit {res.commit[:8]} have no task shares (all skipped)")
    return table, origin


WAITED = 3.0       # a threaded host task this many times the serial one's: it waited, it did not compute


def _waited(times: dict[tuple, dict]) -> tuple[list[str], set]:
    """A sentence per version whose threaded host task (galactic, integrate) took more than WAITED
    times the serial kernel's at the same N: the same source on more cores, so a parallel region
    that waited for its threads (the prediction caps such times; measured rows showed them as
    shares without a word: a hunt); and the (version, N) where one did (`waited` in the table's
    rows)."""
    out, cells = [], set()
    for v in sorted({k[0] for k in times}):
        if get_version(v).host_kernels != "threaded":
            continue
        slow = []
        for (w, n), t in sorted(times.items()):
            if w != v:
                continue
            serial = {u: times[u, n] for u in sorted({k[0] for k in times}) if (u, n) in times
                      and get_version(u).host_kernels == "serial"}
            for task in ("galactic", "integrate"):
                best = min(((s[task], u) for u, s in serial.items() if s.get(task, 0) > 0), default=None)
                if best and t.get(task, 0) > WAITED * best[0]:
                    slow.append(f"{task} at N = {n} {t[task] / best[0]:.0f}x {best[1]}'s")
                    cells.add((v, n))
        if slow:
            out.append(f"{v}'s threaded host tasks took more than the serial kernel's ({', '.join(slow)}), the same "
                       f"source on more cores: its parallel regions waited (threads woken or descheduled), so those "
                       f"shares measure the wait, not its kernels' work")
    return out, cells


def with_predicted(table: list[dict], predicted: list[dict]) -> list[dict]:
    """The measured rows, and the predicted rows of every (version, N) not measured."""
    measured = {(r["version"], r["n"]) for r in table}
    rows = table + [r for r in predicted if (r["version"], r["n"]) not in measured]
    return sorted(rows, key=lambda r: (r["version"], r["n"]))


def largest_n_shares(table: list[dict]) -> list[tuple[str, int, float, str]]:
    """[(version, largest N, pairwise %, source)]."""
    out = []
    for v in sorted({r["version"] for r in table}):
        r = max((r for r in table if r["version"] == v), key=lambda r: r["n"])
        if math.isfinite(r["pairwise"]):
            out.append((v, r["n"], r["pairwise"], r.get("source", MEASURED)))
    return out


# ----------------------------------------------------------------------------- conservation

def conservation_table(res: Results) -> dict[tuple, dict]:
    """{(scheme, precision): {'per_step', 'after_1000', 'internal', 'angular'}} relative errors
    (NaN where not measured; 'internal' is absent from results older than that benchmark)."""
    names = {"per_step": ENERGY_STEP, "after_1000": ENERGY, "internal": INTERNAL, "angular": ANGULAR}
    present = {k: n for k, n in names.items() if n in res}
    if not present:
        raise MissingData(f"the results of commit {res.commit[:8]} have no accuracy.Conservation benchmarks")
    out: dict[tuple, dict] = {}
    for key, name in present.items():
        for (scheme, precision), value in res.get(name, keep_missing=True).items():
            out.setdefault((str(scheme), str(precision)), {k: math.nan for k in names})[key] = value
    return out


# ----------------------------------------------------------------------------- the machine

def _busiest_load(res: Results) -> dict | None:
    """The load-average record (max, median, cores) of the busiest run in the results, None if
    no run recorded one. A field the reader took as null (`results.LOAD_FIELDS`) is not known: a
    record without its max says nothing of the load (a hunt: `"max": null` ended in a TypeError)."""
    loads = [la for p in res.provenance if isinstance(la := p.get("load_average"), dict) and la.get("max") is not None]
    return max(loads, key=lambda la: la["max"]) if loads else None


def _busy(la: dict) -> bool:
    return la["max"] > (la.get("cores") or 1)


def _cores(la: dict):
    """The cores of a load-average record, '?' where not known."""
    return la.get("cores") or "?"


def load_problem(res: Results) -> str | None:
    """A sentence when the benchmarks ran on a busy machine (the 1-minute load average above the
    core count at some point of a run, as `make bench` records it), or when nobody recorded how
    busy it was; None for a quiet run. Timings taken under load say little about the code."""
    worst = _busiest_load(res)
    if worst is None:
        return ("These results do not record how busy the machine was (load average), so the timings "
                "cannot be told apart from a quiet run's: read the speed comparisons with care.")
    if _busy(worst):
        median = f" (median {worst['median']:g})" if worst.get("median") is not None else ""
        return (f"Taken under load: the 1-minute load average reached {worst['max']:g}{median} on {_cores(worst)} "
                f"cores while the benchmarks ran, so other work shared the CPU; the timings and speed-ups below are "
                f"not clean and no conclusion is drawn from them. Re-run `make bench` on a quiet machine.")
    return None


def _count(value):
    """machine.json's `value` (num_cpu, ram) as written where it is a positive whole number, or a positive
    number and its unit ("24 GiB", as asv's machine.json of this repository holds ram), else "?": not
    recorded ("-5 cores", "-0 GiB" were shown as written, a hunt's leftover)."""
    if isinstance(value, bool):
        return "?"
    number, unit = re.fullmatch(r"\s*(.*?)\s*([KMGT]i?B)?\s*", str(value)).groups()
    try:
        number = float(number)
    except ValueError:
        return "?"
    return value if number >= 1 and (unit or number.is_integer()) and math.isfinite(number) else "?"


def describe_machine(res: Results) -> dict:
    """{'cpu', 'num_cpu', 'ram', 'os', 'arch', 'threads', 'device'} from machine.json and the results.

    asv's machine.json has no GPU field: the device is the machine file's 'gpu' (else 'device')
    entry if the suite wrote one ('none' read as 'no GPU (CPU only)'), else what follows 'cores-'
    in the machine's name where that is not 'nogpu', else 'GPU (model not recorded in
    machine.json)' if the GPU versions (C-E) have results, else 'no GPU (CPU only)'."""
    # machine.json first; the results file's environment params (asv copies the machine there) fill gaps
    info = {k: v for k, v in (res.env_params or {}).items() if k != "python"}
    info.update({k: v for k, v in (res.machine_info or {}).items() if v not in (None, "")})
    threads = None
    if THREADS in res:
        counts = list(res.get(THREADS).values())
        threads = f"{max(counts):g}" if counts else None    # as recorded: 2.5 was shown as 2 (a hunt)
    num_cpu = _count(info.get("num_cpu"))
    threads = threads or res.env_vars.get("NBSYMPLE_BENCH_THREADS") or res.env_vars.get("NUMBA_NUM_THREADS") \
        or num_cpu
    gpu = str(info.get("gpu") or info.get("device") or "")
    if gpu.strip().lower() in ("none", "no", "nogpu", "no gpu", "-"):
        gpu = "no GPU (CPU only)"
    if not gpu:
        has_gpu = False
        for name in (*STEP.values(), TASK_TIMES["pairwise"][0], TASK_TIMES["transfer"][0]):   # (the name,
            if name in res and any(str(k[0]) in GPU_LETTERS for k in res.get(name)):         # not its tuple: a hunt)
                has_gpu = True
        # `make bench` names machines <arch>-<n>cores-<gpu name or nogpu>
        tail = res.machine.split("cores-", 1)[1] if "cores-" in res.machine else ""
        if tail and tail != "nogpu":
            gpu = tail
        else:
            gpu = "GPU (model not recorded in machine.json)" if has_gpu else "no GPU (CPU only)"
    return {"cpu": info.get("cpu") or "CPU not recorded", "num_cpu": num_cpu, "ram": _count(info.get("ram")),
            "os": info.get("os", "?"), "arch": info.get("arch", "?"),
            "threads": threads, "device": gpu}


def source_line(res: Results) -> str:
    """The provenance footer of a benchmark figure or table: machine, CPU, threads, device, commit, date."""
    m = describe_machine(res)
    return (f"asv results: machine {res.machine} ({m['cpu']}, {m['threads']} threads); device: {m['device']}; "
            f"commit {res.commit_label}; run {res.date_text}; {load_phrase(res)}")


def load_phrase(res: Results) -> str:
    """The machine's load in a figure's footer, so that a figure taken out of its report still
    says whether its timings are clean."""
    la = _busiest_load(res)
    if la is None:
        return "machine load not recorded"
    what = f"1-min load up to {la['max']:g} on {_cores(la)} cores"
    return f"TAKEN UNDER LOAD ({what}): timings not clean" if _busy(la) else f"quiet ({what})"


# ----------------------------------------------------------------------------- prediction and measurement

def predicted_vs_measured(res: Results, prediction) -> list[dict]:
    """Rows {version, n, step, pairwise}, each a (predicted, measured) pair of seconds (dp
    leapfrog step, task 1), for the GPU versions and N that `prediction` (a
    `prediction.Prediction`) covers and the results measured (NaN where one was not)."""
    measured = {}
    for key, name in (("step", STEP["leapfrog"]), ("pairwise", TASK_TIMES["pairwise"][0])):
        if name in res:
            for k, t in res.get(name).items():
                if len(k) == 3 and k[2] == "dp" and t > 0:
                    measured[key, str(k[0]), k[1]] = t
    rows = []
    for v in prediction.letters:
        for n in prediction.ns(v):
            got = {key: measured.get((key, v, n), math.nan) for key in ("step", "pairwise")}
            if any(math.isfinite(t) for t in got.values()):
                rows.append({"version": v, "n": n, "step": (prediction.step(v, n), got["step"]),
                             "pairwise": (prediction.tasks(v, n)["pairwise"], got["pairwise"])})
    return rows
