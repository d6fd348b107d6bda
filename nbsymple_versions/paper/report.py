"""REPORT.md: one page with the figures, the tables, where the numbers came from and what they
show (sentences computed from the data)."""
from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path

from ..environment import os_reason
from ..runs.paths import write_file
from ..versions import GPU_LETTERS, get_version
from .data import (ALL_CORES, load_problem, GPU_RANGE, MEASURED, PAPER_GPU, PAPER_GPU_SP_OVER_DP, PAPER_PAIRWISE_SHARE,
                   REFERENCE, STEP, TASK_TIMES, MissingData, describe_machine, largest_n_shares, predicted_vs_measured,
                   series, speedups, step_intervals)
from .prediction import LAUNCH, acceleration_bytes, host_version, record_bytes
from .records import code_span, markdown_note, markdown_text
from .results import Results, join_words
from .convergence import INTERNAL_LIMIT, error_text


def _fmt_ram(ram) -> str:
    try:
        value = int(ram)
    except (TypeError, ValueError):
        return str(ram)
    # asv's default is bytes (Linux: /proc/meminfo's MemTotal; macOS: sysctl hw.memsize); hand-entered
    # values may be in kB: below 1 GiB as bytes (no machine this suite runs on) it is kB, of up to 1 TiB
    # (a hunt: 1e8 read the kB of a 128 GiB machine as bytes, "0 GiB")
    return f"{value / 1024 ** 3:.0f} GiB" if value >= 1024 ** 3 else f"{value / 1024 ** 2:.0f} GiB"


def _python(res: Results) -> str:
    """The results' Python: asv 0.6 stores its version ('3.11', for `--python=same` too), older or
    hand-made files may hold the interpreter's path; show no machine paths."""
    py = res.python or "?"
    return "the installed interpreter (asv --python=same)" if ("/" in py or "\\" in py) else py


def findings(res: Results, shares: list | None, prediction=None) -> list[str]:
    """Sentences computed from the data (`shares`: the task-share table, when there is one;
    `prediction`: the GPU versions predicted, when they are)."""
    out = []
    try:
        data = series(res, STEP["leapfrog"])
    except MissingData:
        data = {}
    if data:
        spans = step_intervals(res)
        nmax = max(n.max() for n, _ in data.values())
        at_max = {v: t[list(n).index(nmax)] for v, (n, t) in data.items() if nmax in n}
        if at_max:
            others = {v: int(n.max()) for v, (n, _) in sorted(data.items()) if v not in at_max}
            ranking = (fastest_sentence(at_max, {v: spans.get((v, int(nmax))) for v in at_max}) if len(at_max) > 1
                       else "no other version was measured at this N, so none is ranked")     # (a hunt: "fastest")
            out.append(f"At the largest N measured ({int(nmax)}), a dp leapfrog step takes "
                       + ", ".join(f"{_t(t)} ({v})" for v, t in sorted(at_max.items())) + f"; {ranking}"
                       + (" (" + ", ".join(f"{v} up to N = {m}" for v, m in others.items()) + ")" if others else "")
                       + ".")
        # slope of log t vs log N over each version's two largest N, named (they differ between versions)
        slopes = []
        for v, (n, t) in sorted(data.items()):
            if len(n) >= 2 and n[-1] > n[-2]:
                slopes.append(f"{v}: {math.log(t[-1] / t[-2]) / math.log(n[-1] / n[-2]):.2f} "
                              f"(N = {int(n[-2])} to {int(n[-1])})")
        if slopes:
            out.append("Local slope d log t / d log N between each version's two largest N ("
                       + ", ".join(slopes) + "; 2 is the O(N^2) pairwise limit).")
        try:
            sp = speedups(res)
        except MissingData:
            sp = {}
        if ALL_CORES in sp:
            n, s = sp[ALL_CORES]
            out.append(f"Speed-up of {ALL_CORES} ({markdown_text(describe_machine(res)['threads'])} threads) "
                       f"over {REFERENCE} (1 thread): "
                       + ", ".join(f"{x:.2g} at N = {int(m)}" for m, x in zip(n, s)) + ".")
        if ALL_CORES in data:
            for v in GPU_LETTERS:
                if v in data:
                    out.append(against_sentence(v, ALL_CORES, spans))
        if not any(v in data for v in GPU_LETTERS):
            device = describe_machine(res)["device"]
            why = ("it has no GPU" if device.startswith("no GPU") else       # (a hunt: said beside a named GPU)
                   f"it has a GPU ({markdown_text(device)}), but their step benchmarks were skipped or failed there")
            out.append(f"No GPU versions ({GPU_RANGE}) have results on this machine: {why}."
                       + (f" Their rows and dashed curves below are {prediction.label}." if prediction else ""))
    if shares:
        big = [(v, n, p) for v, n, p, source in largest_n_shares(shares) if source == MEASURED]
        if big:
            side = {v: _side(p, PAPER_PAIRWISE_SHARE, 2) for v, n, p in big}
            low = [v for v in side if side[v] < 0]
            waited = {r["version"] for r in shares if r.get("waited") and (r["version"], r["n"]) in
                      {(v, n) for v, n, _ in big}}          # the largest N's shares of a parallel region's wait
            plain, waits = [v for v in low if v not in waited], [v for v in low if v in waited]
            at = [v for v in side if side[v] == 0]
            out.append("At the largest N, task 1 (pairwise) takes " + ", ".join(f"{p:.2f} % of the step for {v} "
                                                                             f"(N = {n})" for v, n, p in big)
                       + f"; the paper reports above {PAPER_PAIRWISE_SHARE} % at its largest N"
                       + ("" if low or at else ", and so do all versions here")
                       + (f"; {join_words(at)} {'is' if len(at) == 1 else 'are'} at it to the 0.01 % shown"
                          if at else "")
                       + (f"; {join_words(plain)} below it: the O(N) tasks still weigh more at these N"
                          if plain else "")
                       + (f"; {join_words(waits)} below it{' too' if plain else ''}, where "
                          f"{'its' if len(waits) == 1 else 'their'} threaded host tasks waited for their threads "
                          f"(those shares measure the wait, not the O(N) work: the task shares' source)"
                          if waits else "")
                       + ".")
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


def _overlap(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _side(value: float, threshold: float, decimals: int) -> int:
    """-1, 0 or 1: `value` below, at or above `threshold` to the `decimals` shown (a figure with no
    recorded noise is told apart from another only where the report's digits tell them apart)."""
    shown = round(value, decimals)
    return (shown > threshold) - (shown < threshold)


def fastest_sentence(times: dict, spans: dict) -> str:
    """'version B is the fastest' where its 99 % interval lies below every other's, else the
    versions tied with it (overlapping intervals) named as tied."""
    best = min(times, key=times.get)
    spans = {v: spans.get(v) or (t, t) for v, t in times.items()}
    tied = sorted(v for v in times if _overlap(spans[v], spans[best]))
    if len(tied) == 1:
        return f"version {best} is the fastest (" + ("its 99 % interval lies below the others'" if all(
            lo < hi for lo, hi in spans.values()) else "no noise recorded: by the values alone") + ")"
    return f"versions {join_words(tied)} are tied for the fastest (their 99 % intervals overlap)"


def against_sentence(v: str, ref: str, spans: dict) -> str:
    """Version `v` against `ref` at each N both were measured at: faster or slower only where their
    99 % intervals (`spans`: {(version, N): (low, high)}) do not overlap, else tied."""
    ns = sorted(n for (w, n) in spans if w == v and (ref, n) in spans)
    verdict = {}
    for n in ns:
        a, b = spans[v, n], spans[ref, n]
        verdict[n] = "faster" if a[1] < b[0] else "slower" if a[0] > b[1] else "tied"
    if not ns:
        return f"Version {v} and {ref} were not measured at a common N."
    recorded = all(spans[w, n][0] < spans[w, n][1] for n in ns for w in (v, ref))
    beyond = "beyond their 99 % intervals" if recorded else "no noise recorded: by the values alone"
    if len(set(verdict.values())) == 1:
        word = verdict[ns[0]]
        return (f"Version {v} is tied with {ref} at every N measured (their 99 % intervals overlap)." if word == "tied"
                else f"Version {v} is {word} than {ref} at every N measured ({beyond}).")
    first = next((n for n in ns if all(verdict[m] == "faster" for m in ns if m >= n)), None)
    if first is not None and verdict[ns[0]] != "faster":
        return f"Version {v} is faster than {ref} ({beyond}) from N = {first} on."
    return (f"Version {v} against {ref}: " + "; ".join(
        f"{word} at N = {', '.join(str(n) for n in ns if verdict[n] == word)}"
        for word in ("faster", "tied", "slower") if word in verdict.values()) + f" ({beyond}).")


def _ratio(pair) -> str:
    predicted, measured = pair
    return f"{measured / predicted:.2f}" if math.isfinite(measured) else ""


def prediction_lines(res: Results, prediction, busy: bool = False) -> list[str]:
    """REPORT.md's section on the GPU versions predicted: the model's inputs, its task times,
    what of the paper it reproduces and what it cannot; then prediction beside measurement."""
    gpu, d, letters = prediction.gpu, prediction.gpu.device, prediction.letters
    lines = [f"## GPU versions {GPU_RANGE}: predicted for {gpu.name}", "",
             f"Where the results have no GPU version, its task-share rows and its dashed curves are "
             f"**{prediction.label}**: the issue model of `nbsymple gpu-asm` on the SASS of the kernels of that "
             f"commit, the stated link and launch figures of docs/gpu.md, and the host tasks this machine timed "
             f"(method: docs/paper.md, \"Predicted GPU versions\"). Measured results, where they exist, "
             f"replace it.", "",
             "| input | value | source |", "|---|---|---|",
             f"| GPU | {d.name}, {gpu.arch}: {d.sms} SMs at {d.clock_ghz:g} GHz, per SM and clock {d.issue} "
             f"instructions issued, {d.fp32} FP32, {d.fp64} FP64, {d.mufu} MUFU lanes | `gpu_asm.model.DEVICES` |"]
    by_kernel = {}
    for v in letters:
        by_kernel.setdefault(prediction.kernels[v], []).append(v)
    for k, vs in by_kernel.items():
        rate = d.sms * d.clock_ghz * 1e9 / k.clocks
        lines.append(f"| kernel of {', '.join(vs)} | {prediction.backend} `{k.name}`, {prediction.precision}, tile "
                     f"{k.tile}: {k.instructions:g} instructions per interaction, {k.bound}-bound, {k.clocks:g} SM "
                     f"clocks per interaction: {rate:.3g} interactions/s on the whole GPU | SASS of commit "
                     f"{prediction.commit} |")
    lines += [f"| kernel launch | {LAUNCH[prediction.backend] * 1e6:g} us ({prediction.backend}) | docs/gpu.md |",
              f"| host-device link | {gpu.link.name}: {gpu.link.bandwidth / 1e9:.1f} GB/s each way, "
              f"{gpu.link.latency * 1e6:g} us per copy | docs/gpu.md |",
              f"| bytes per body | {record_bytes(prediction.precision)} up (body record), "
              f"{acceleration_bytes(prediction.precision, False)} down (acceleration; E's fused kernel writes float64: "
              f"{acceleration_bytes(prediction.precision, True)}) | `gpu_pairwise/records.py` |",
              f"| host tasks | the table below, version {' / '.join(sorted({host_version(v) for v in letters}))}'s "
              f"host kernels ({', '.join(f'{v}: {host_version(v)}' for v in letters)}; a threaded time at most the "
              f"serial one at its N, a slower one being the parallel region's own cost or its wait for a thread) | "
              f"`{TASK_TIMES['galactic'][0]}`, `{TASK_TIMES['integrate'][0]}`, commit {res.commit_label} |", ""]
    hosts = sorted({host_version(v) for v in letters})
    ns = sorted({n for h in hosts for n in prediction.host.get(h, {})})
    lines += ["Host-task times used (seconds; integrate: one drift and one kick, a leapfrog step makes 1.5 of them, "
              "SI6A 7.5):", "",
              "| N | " + " | ".join(f"{h} galactic | {h} integrate" for h in hosts) + " |",
              "|---:|" + "---:|---:|" * len(hosts)]
    for n in ns:
        cells = [f"{_t(t.galactic)} | {_t(t.integrate)}" if (t := prediction.host.get(h, {}).get(n)) else " | "
                 for h in hosts]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", f"Predicted seconds of a dp leapfrog step, task by task ({gpu.name}):", "",
              "| version | N | 1 pairwise | 2 galactic | 3 integrate | 4 transfer | step |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for v in letters:
        for n in prediction.ns(v):
            t = prediction.tasks(v, n)
            galactic = "in task 1" if get_version(v).fused_galactic else _t(t["galactic"])
            lines.append(f"| {v} | {n} | {_t(t['pairwise'])} | {galactic} | {_t(t['integrate'])} | "
                         f"{_t(t['transfer'])} | {_t(sum(t.values()))} |")
    lines += ["", "What the prediction says of the paper's findings:", ""] + \
        [f"- {s}" for s in prediction_findings(prediction, busy)] + [""]
    compared = predicted_vs_measured(res, prediction)
    if compared:
        lines += ["## GPU versions: prediction and measurement", "",
                  f"Measured on {markdown_text(describe_machine(res)['device'])} beside {prediction.label}, dp "
                  f"leapfrog; a ratio above 1 is slower than predicted. The measured rows and curves are the ones "
                  f"shown above.",
                  "", "| version | N | step predicted | step measured | measured / predicted | task 1 predicted "
                  "| task 1 measured | measured / predicted |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in compared:
            cells = []
            for key in ("step", "pairwise"):
                predicted, measured = r[key]
                cells += [_t(predicted), _t(measured) if math.isfinite(measured) else "not measured", _ratio(r[key])]
            lines.append(f"| {r['version']} | {r['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def prediction_findings(prediction, busy: bool = False) -> list[str]:
    """Which of the paper's findings the prediction reproduces at the largest N, and which it
    cannot; with `busy` (its host-task times taken under load) no ranking of the versions."""
    letters = prediction.letters
    top = {v: max(prediction.ns(v)) for v in letters}
    shares = {v: prediction.shares(v, top[v]) for v in letters}
    low = [v for v in letters if _side(shares[v]["pairwise"], PAPER_PAIRWISE_SHARE, 2) <= 0]
    out = ["Task 1's share at the largest N: " + ", ".join(f"{shares[v]['pairwise']:.2f} % ({v}, N = {top[v]})"
                                                             for v in letters)
           + f" against the paper's above {PAPER_PAIRWISE_SHARE} %: "
           + ("reproduced." if not low else
              f"not reproduced at these N ({', '.join(low)} not above it): the GPU's pairwise forces are so fast that "
              f"the O(N) host tasks still weigh. With the host tasks scaled as N, the model puts task 1 above "
              f"{PAPER_PAIRWISE_SHARE} % from N = " + ", ".join(f"{_n(prediction.n_for_share(v))} ({v})" for v in low)
              + ".")]
    host = {v: round(shares[v]["galactic"] + shares[v]["integrate"], 1) for v in letters}   # as shown
    if len(letters) > 1:
        first = letters[0]
        largest = [v for v in letters if host[v] == max(host.values())]
        listed = "Share of the O(N) host tasks (2 galactic, 3 integrate): " + ", ".join(f"{host[v]:.1f} % ({v})"
                                                                                        for v in letters)
        if busy:
            out.append(listed + ": no ranking is drawn, since the host-task times they come from were taken "
                                "under load.")
        elif len(largest) > 1:
            out.append(listed + f": {join_words(largest)} are tied at {host[largest[0]]:.1f} %, the largest share "
                                f"outside task 1"
                       + (f" (the paper has {first}, one core, alone there)." if first in largest else "."))
        else:
            out.append(listed + (f": as in the paper, {first} (one core) spends the largest share outside task 1."
                                 if largest[0] == first
                                 else f": unlike the paper, {largest[0]}, not {first}, spends the "
                                      f"largest share outside task 1."))
    d, k = prediction.gpu.device, prediction.kernels[letters[0]]
    blocks = -(-max(top.values()) // k.tile)
    out.append(f"Not in the model, so not predicted: clocks below the {d.clock_ghz:g} GHz boost; occupancy and "
               f"latency limits (an SM is taken to issue at its full rate whatever warps it holds: at N = "
               f"{max(top.values())} {_blocks(blocks, k.tile)} {min(blocks, d.sms)} of the "
               f"{d.sms} SMs); PCIe contention; the host's packing of body records and copying of accelerations, "
               f"which a GPU run counts in task 4; E's Galaxy inside the kernel (O(N) per thread).")
    return out


def _blocks(blocks: int, tile: int) -> str:
    """'the 4 blocks of 256 threads occupy', 'the 1 block of 256 threads occupies'."""
    return f"the {blocks} blocks of {tile} threads occupy" if blocks != 1 else f"the 1 block of {tile} threads occupies"


def _n(n: float) -> str:
    """A large N to two digits: 1.6e7."""
    mantissa, exponent = f"{n:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _t(seconds: float) -> str:
    """Seconds in us, ms or s, 1 to 999 of the unit: a time whose three digits round up to 1000 of
    one unit is shown in the next (0.9996 ms was "1e+03 us", 0.9996 s "1e+03 ms")."""
    for scale, unit in ((1e6, "us"), (1e3, "ms")):
        if float(shown := f"{seconds * scale:.3g}") < 1000:
            return f"{shown} {unit}"
    return f"{seconds:.2f} s"


def science_record_line(run: dict) -> str:
    """One science run's energy errors in words, its verdict first where it is not converged."""
    internal, total = run.get("internal_energy_error"), run.get("energy_error_total")
    most = run.get("internal_energy_error_max", internal)
    value = error_text(internal)
    head = "NOT CONVERGED: " if not run.get("converged") else ""
    largest = "" if most is None or most == internal else f" (largest {error_text(most)})"
    total_text = "" if total is None else f", total {total:.1e}"
    return f"{head}internal energy error {value} at the end{largest}{total_text}"


def science_lines(record: dict) -> list[str]:
    """A science section's text: a bold warning for each run that is not converged (internal
    energy error above the limit), then the figure's summary paragraph."""
    hot = [r for r in record.get("runs", []) if not r.get("converged")]
    warn = [f"> **Not converged: {markdown_text(r['run'])}** ({science_record_line(r)[len('NOT CONVERGED: '):]}): "
            f"the time step heated the cluster by more than {INTERNAL_LIMIT:g} of its binding energy, so its tails, "
            f"escapes and passage are shaped by the integration and are not physical results." for r in hot]
    return [w + "\n" for w in warn] + [record["summary"], ""]


TITLE = "# NBSymple versions: the paper's figures and tables, regenerated"      # REPORT.md's first line
HEAD_BYTES = 256                         # what `foreign_file` reads of a file to know it


def foreign_file(path: Path, own: re.Pattern) -> str | None:
    """Why the file at `path`, which paper is to replace, is not known to be paper's ("that nbsymple paper
    did not write": its first bytes do not match `own`; one that cannot be read), else None: `--out .` of a
    project's own folder replaced its REPORT.md, in silence (a hunt); so did one larger than a Markdown
    table (a review), and any conservation.md or task_shares.* (a hunt's leftover)."""
    try:                                 # a link is replaced by the write, what it leads to kept; no file (none
        if os.path.islink(path) or not stat.S_ISREG(os.stat(path).st_mode):    # there, a folder, a loop on
            return None                                                        # its path): the write says it
    except OSError:
        return None
    try:
        with open(path, "rb") as f:      # its first bytes alone, whatever its size
            return None if own.match(f.read(HEAD_BYTES)) else "that nbsymple paper did not write"
    except OSError as e:
        return f"that cannot be read ({os_reason(e)}), so is not known to be one nbsymple paper wrote"


def write_report(out: Path, res: Results | None, written: dict, notes: list[str], shares: list | None,
                 science: dict, full=(), prediction=None) -> Path:
    """REPORT.md in `out`: `written` maps artefact name -> file name (only those written); `full`:
    [(path, text)] of the tables of full-size tidal-tail runs (`tidal_tails_n<N>.md`, from
    `nbsymple paper --full`) found in `out`, shown with their figures; `prediction`: the GPU
    versions predicted, with their inputs, beside any measurement of them."""
    lines = [TITLE, ""]
    busy = False
    if res is not None:
        m = describe_machine(res)
        m = {k: markdown_text(_fmt_ram(v) if k == "ram" else v) for k, v in m.items()}   # the files' text, as written
        lines += ["| | |", "|---|---|",
                  f"| machine | {markdown_text(res.machine)} |",
                  f"| CPU | {m['cpu']} ({m['num_cpu']} cores, {m['arch']}), {m['ram']} RAM, {m['os']} |",
                  f"| GPU | {m['device']} |",
                  f"| threads (B, D, E host work) | {m['threads']} |",
                  f"| commit | {markdown_text(res.commit)} (committed {res.commit_date_text})"
                  + (" with uncommitted changes: the working tree a run timed differed from it" if res.changed else "")
                  + " |",
                  f"| benchmarks run | {res.date_text} |",
                  f"| Python | {markdown_text(_python(res))} |",
                  f"| asv results files | {', '.join(code_span(f) for f in res.files)} |", ""]
        problem = load_problem(res)
        busy = problem is not None and problem.startswith("Taken under load")
        if problem:
            lines += [f"> **{'Figures taken under load.' if busy else 'Machine load not recorded.'}** {problem}", ""]
        found = [] if busy else findings(res, shares, prediction)
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
    if prediction is not None and res is not None:
        lines += prediction_lines(res, prediction, busy)
    if "conservation" in written:
        body = (out / written["conservation"]).read_text().splitlines()
        lines += ["## Energy and angular-momentum conservation (paper Tables 2 and 7)", ""] + body[2:] + [""]
    for key, title in (("tidal_tails", "Tidal tails (paper Figs. 6-8)"),
                       ("black_hole", "Black-hole passage (paper Table 8, Fig. 9)")):
        if key in written:
            lines += [f"## {title}", "", f"![{title}]({written[key]})", ""]
            if science.get(key):
                lines += science_lines(science[key])
    for md, text in full:
        png = md.with_suffix(".png")
        body = text.splitlines()
        lines += [body[0].replace("# ", "## ", 1), "",
                  f"*From `nbsymple paper --full` ({md.name}), not regenerated by this command: the run's own "
                  f"lines below say when, where and at which commit it ran.*", ""]
        if png.exists():
            lines += [f"![{body[0][2:]}]({png.name})", ""]
        lines += body[2:] + [""]
    if notes:
        lines += ["## Notes", ""] + [f"- {markdown_note(n)}" for n in notes] + [""]
    path = out / "REPORT.md"
    write_file(path, "\n".join(lines))            # never through a link (runs/paths.py)
    return path
