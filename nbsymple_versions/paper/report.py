"""REPORT.md: one page with the figures, the tables, where the numbers came from and what they
show (sentences computed from the data)."""
from __future__ import annotations

import math
from pathlib import Path

from ..versions import GPU_LETTERS
from .data import (ALL_CORES, load_problem, GPU_RANGE, PAPER_GPU, PAPER_GPU_SP_OVER_DP, PAPER_PAIRWISE_SHARE, REFERENCE, STEP,
                   MissingData, describe_machine, largest_n_shares, series, speedups)
from .results import Results


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
    """Sentences computed from the data (`shares`: the task-share table, when there is one)."""
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
        if ALL_CORES in sp:
            n, s = sp[ALL_CORES]
            out.append(f"Speed-up of {ALL_CORES} ({describe_machine(res)['threads']} threads) "
                       f"over {REFERENCE} (1 thread): "
                       + ", ".join(f"{x:.2g} at N = {int(m)}" for m, x in zip(n, s)) + ".")
        if ALL_CORES in data:
            nb, tb = data[ALL_CORES]
            tbd = dict(zip(nb, tb))
            for v in GPU_LETTERS:
                if v in data:
                    n, t = data[v]
                    over = [x for x, y in zip(n, t) if x in tbd and y < tbd[x]]
                    out.append(f"Version {v} overtakes {ALL_CORES} from N = {int(over[0])} on." if over else
                               f"Version {v} stays slower than {ALL_CORES} at every N measured.")
        if not any(v in data for v in GPU_LETTERS):
            out.append(f"No GPU versions ({GPU_RANGE}) have results on this machine: it has no GPU.")
    if shares:
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
                   + f" (the paper's {PAPER_GPU} had {PAPER_GPU_SP_OVER_DP}x more sp than dp throughput, "
                     f"so dsp was much faster there).")
    return out


def _t(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


def write_report(out: Path, res: Results | None, written: dict, notes: list[str], shares: list | None,
                 science: dict, full=()) -> Path:
    """REPORT.md in `out`: `written` maps artefact name -> file name (only those written); `full`:
    the tables of full-size tidal-tail runs (`tidal_tails_n<N>.md`, from `nbsymple paper --full`)
    found in `out`, shown with their figures."""
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
        problem = load_problem(res)
        busy = problem is not None and problem.startswith("Taken under load")
        if problem:
            lines += [f"> **{'Figures taken under load.' if busy else 'Machine load not recorded.'}** {problem}", ""]
        found = [] if busy else findings(res, shares)
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
    for md in full:
        png = md.with_suffix(".png")
        body = md.read_text(encoding="utf-8").splitlines()
        lines += [body[0].replace("# ", "## ", 1), ""]
        if png.exists():
            lines += [f"![{body[0][2:]}]({png.name})", ""]
        lines += body[2:] + [""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
