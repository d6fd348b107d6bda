"""REPORT.md: one page with the figures, the tables, where the numbers came from and what they
show (sentences computed from the data)."""
from __future__ import annotations

import math
from pathlib import Path

from .results import Results

GPU_VERSIONS = ("C", "D", "E")


def describe_machine(res: Results) -> dict:
    """{'cpu', 'num_cpu', 'ram', 'os', 'threads', 'device'} from machine.json and the results.

    asv's machine.json has no GPU field: the device is the machine file's 'gpu' entry if the suite
    wrote one, else 'GPU' if versions C-E have results, else 'no GPU (CPU only)'."""
    # machine.json first; the results file's environment params (asv copies the machine there) fill gaps
    info = {k: v for k, v in (res.env_params or {}).items() if k != "python"}
    info.update({k: v for k, v in (res.machine_info or {}).items() if v not in (None, "")})
    threads = None
    if "throughput.Threads.track_threads" in res:       # the suite records numba's thread count
        counts = [int(v) for v in res.get("throughput.Threads.track_threads").values()]
        threads = str(max(counts)) if counts else None
    threads = threads or res.env_vars.get("NBSYMPLE_BENCH_THREADS") or res.env_vars.get("NUMBA_NUM_THREADS") \
        or info.get("num_cpu") or "?"
    gpu = str(info.get("gpu") or info.get("device") or "")
    if gpu.strip().lower() in ("none", "no", "nogpu", "no gpu", "-"):
        gpu = "no GPU (CPU only)"
    if not gpu:
        has_gpu = False
        for name in ("steps.Step.time_step_leapfrog", "tasks.Tasks.time_pairwise"):
            if name in res and any(str(k[0]) in GPU_VERSIONS for k in res.get(name)):
                has_gpu = True
        # `make bench` names machines <arch>-<n>cores-<gpu name or nogpu>
        tail = res.machine.split("cores-", 1)[1] if "cores-" in res.machine else ""
        if tail and tail != "nogpu":
            gpu = tail
        else:
            gpu = "GPU (model not recorded in machine.json)" if has_gpu else "no GPU (CPU only)"
    return {"cpu": info.get("cpu") or "CPU not recorded", "num_cpu": info.get("num_cpu", "?"),
            "ram": info.get("ram", "?"), "os": info.get("os", "?"), "arch": info.get("arch", "?"),
            "threads": threads, "device": gpu}


def _fmt_ram(ram) -> str:
    try:
        value = int(ram)
    except (TypeError, ValueError):
        return str(ram)
    # asv's default is bytes (from /proc/meminfo or psutil); hand-entered values may be in kB
    return f"{value / 1024 ** 3:.0f} GiB" if value > 1e8 else f"{value / 1024 ** 2:.0f} GiB"


def _python(res: Results) -> str:
    """asv stores the interpreter's path for `--python=same` runs; show no machine paths."""
    py = res.python or "?"
    return "the installed interpreter (asv --python=same)" if ("/" in py or "\\" in py) else py


def findings(res: Results, shares: list | None) -> list[str]:
    """Sentences computed from the data."""
    from .figures import STEP, MissingData, series, speedups
    out = []
    try:
        data = series(res, STEP["leapfrog"])
    except MissingData:
        data = {}
    if data:
        nmax = max(n.max() for n, _ in data.values())
        at_max = {v: t[list(n).index(nmax)] for v, (n, t) in data.items() if nmax in n}
        if at_max:
            fastest = min(at_max, key=at_max.get)
            out.append(f"At the largest N measured ({int(nmax)}), a dp leapfrog step takes "
                       + ", ".join(f"{_t(t)} ({v})" for v, t in sorted(at_max.items()))
                       + f"; version {fastest} is the fastest.")
        # slope of log t vs log N over the largest N
        slopes = []
        for v, (n, t) in sorted(data.items()):
            if len(n) >= 2 and n[-1] > n[-2]:
                slopes.append(f"{v}: {math.log(t[-1] / t[-2]) / math.log(n[-1] / n[-2]):.2f}")
        if slopes:
            out.append("Local slope d log t / d log N between the two largest N ("
                       + ", ".join(slopes) + "; 2 is the O(N^2) pairwise limit).")
        try:
            sp = speedups(res)
        except MissingData:
            sp = {}
        if "B" in sp:
            n, s = sp["B"]
            out.append(f"Speed-up of B ({describe_machine(res)['threads']} threads) over A (1 thread): "
                       + ", ".join(f"{x:.2g} at N = {int(m)}" for m, x in zip(n, s)) + ".")
        if "B" in data:
            nb, tb = data["B"]
            tbd = dict(zip(nb, tb))
            for v in GPU_VERSIONS:
                if v in data:
                    n, t = data[v]
                    over = [x for x, y in zip(n, t) if x in tbd and y < tbd[x]]
                    out.append(f"Version {v} overtakes B from N = {int(over[0])} on." if over else
                               f"Version {v} stays slower than B at every N measured.")
        if not any(v in data for v in GPU_VERSIONS):
            out.append("No GPU versions (C-E) have results on this machine: it has no GPU.")
    if shares:
        from .tables import PAPER_PAIRWISE_SHARE, largest_n_shares
        big = largest_n_shares(shares)
        if big:
            low = [v for v, n, p in big if p < PAPER_PAIRWISE_SHARE]
            out.append("At the largest N, task 1 (pairwise) takes " + ", ".join(f"{p:.2f} % of the step for {v} "
                                                                             f"(N = {n})" for v, n, p in big)
                       + f"; the paper reports above {PAPER_PAIRWISE_SHARE} % at its largest N"
                       + (f" ({', '.join(low)} below it: the O(N) tasks still weigh more at these N)." if low
                          else ", and so do all versions here."))
    try:
        dsp = series(res, STEP["leapfrog"], "dsp")
    except MissingData:
        dsp = {}
    ratios = []
    for v in sorted(dsp):
        if v in data:
            common = sorted(set(data[v][0]) & set(dsp[v][0]))
            if common:
                n = common[-1]
                r = dsp[v][1][list(dsp[v][0]).index(n)] / data[v][1][list(data[v][0]).index(n)]
                ratios.append(f"{v} {r:.2f} (N = {int(n)})")
    if ratios:
        out.append("dsp / dp time per leapfrog step: " + ", ".join(ratios)
                   + " (the paper's Tesla C1060 had 12x more sp than dp throughput, so dsp was much faster there).")
    return out


def _t(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def write_report(out: Path, res: Results | None, written: dict, notes: list[str], shares: list | None,
                 science: dict) -> Path:
    """REPORT.md in `out`: `written` maps artefact name -> file name (only those written)."""
    lines = ["# NBSymple versions: the paper's figures and tables, regenerated", ""]
    if res is not None:
        m = describe_machine(res)
        lines += ["| | |", "|---|---|",
                  f"| machine | {res.machine} |",
                  f"| CPU | {m['cpu']} ({m['num_cpu']} cores, {m['arch']}), {_fmt_ram(m['ram'])} RAM, {m['os']} |",
                  f"| GPU | {m['device']} |",
                  f"| threads (B, D, E host work) | {m['threads']} |",
                  f"| commit | {res.commit} (committed {res.commit_date_text}) |",
                  f"| benchmarks run | {res.date_text} |",
                  f"| Python | {_python(res)} |",
                  f"| asv results files | {', '.join(f'`{f}`' for f in res.files)} |", ""]
        found = findings(res, shares)
        if found:
            lines += ["## What the benchmark figures show", ""] + [f"- {s}" for s in found] + [""]
    else:
        lines += ["No asv results could be used, so the benchmark figures and tables are missing "
                  "(see the notes below).", ""]
    figs = [("time_per_step", "Time per step vs N (paper Fig. 2)"),
            ("speedup", "Speed-up over version A"),
            ("dp_vs_dsp", "dp vs dsp (and sp) time per leapfrog step (paper Fig. 5)"),
            ("task_shares_png", "Task shares (paper Tables 4-6)")]
    for key, title in figs:
        if key in written:
            lines += [f"## {title}", "", f"![{title}]({written[key]})", ""]
            if key == "task_shares_png" and "task_shares_md" in written:
                body = (out / written["task_shares_md"]).read_text().splitlines()
                lines += [ln for ln in body[2:]] + ["", f"(CSV: [{written['task_shares_csv']}]"
                                                        f"({written['task_shares_csv']}))", ""]
    if "conservation" in written:
        body = (out / written["conservation"]).read_text().splitlines()
        lines += ["## Energy and angular-momentum conservation (paper Tables 2 and 7)", ""] + body[2:] + [""]
    for key, title in (("tidal_tails", "Tidal tails (paper Figs. 6-8)"),
                       ("black_hole", "Black-hole passage (paper Table 8, Fig. 9)")):
        if key in written:
            lines += [f"## {title}", "", f"![{title}]({written[key]})", ""]
            if science.get(key):
                lines += [science[key], ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
