"""Planning past one machine: a performance model of version F, and its plot (docs/mpi.md).

Per force evaluation on K nodes of rate R (pair interactions per second, measured: this CPU's B
by `--measure`, E on an H200 by its committed asv results):

    compute      N^2 / (K R)                                   each node its N/K targets
    communicate  (K - 1) alpha + (K - 1)/K * 24 N / beta       Allgatherv of float64 positions:
                                                               a ring of K - 1 rounds, each rank
                                                               receiving 24 N (K-1)/K bytes

over a network of latency alpha and bandwidth beta (NETWORKS; assumed figures, not measured
here). The O(N) work (galactic force, drifts and kicks) splits K ways too and is left out (under
1 % of a step at N >= 4096 on one node). A leapfrog step is one evaluation, SI6A seven.

Two thresholds per K: `n_break`, below which K nodes are slower than one (the exchange costs
more than the compute it saves), and `n_half`, below which the parallel efficiency
compute / (compute + communicate) drops under one half.

    python -m nbsymple_versions.instruments.mpi_model                      # the tables of docs/mpi.md
    python -m nbsymple_versions.instruments.mpi_model --measure out.json   # F with 1 and 2 ranks here
    python -m nbsymple_versions.instruments.mpi_model --plot docs/mpi_model.png --measured out.json
"""
import io
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..arguments import Parser, file_argument, number_above, output_file_argument
from ..core.work import FASTEST_RATE
from ..environment import os_reason
from ..runs.errors import fault_status, writable
from ..runs.locks import PathBusy, hold
from ..runs.paths import FileRefused, odd_kind, parse_json, read_bytes, text_lines, write_file, written_name

JOB = "nbsymple_versions.instruments.mpi_timing"      # F's timing job, run under mpiexec with -m
BYTES_PER_BODY = 24                 # float64 x, y, z
NETWORKS = {                        # (bandwidth bytes/s, latency s): assumed, typical MPI figures
    "100 Gb/s InfiniBand": (12.5e9, 1.5e-6),
    "25 Gb/s Ethernet": (3.125e9, 20e-6),
}
GPU_NODE = "H200 (E, measured)"
NODE_RATES = {                      # dp pair interactions per second per node, besides the CPU's (measured or --rate)
    # E's dp pairwise task at N = 262144, 89.3 ms, in the H200's committed asv results (results/intel-r-xeon-r-
    # processor-emeraldrapids-avx512-16cores-1x-nvidia-h200/): 0.73 of `nbsymple gpu-asm`'s 1.05e12 (docs/gpu.md)
    GPU_NODE: 7.7e11,
}
KS = (2, 8, 64)
RATES = (1e3, FASTEST_RATE)         # dp pair interactions per second a node may do (core/work.py's fastest)


def compute_seconds(n, k, rate):
    return float(n) ** 2 / (k * rate)


def communicate_seconds(n, k, network):
    bandwidth, latency = NETWORKS[network] if isinstance(network, str) else network
    return 0.0 if k == 1 else (k - 1) * latency + (k - 1) / k * BYTES_PER_BODY * n / bandwidth


def step_seconds(n, k, rate, network):
    """Predicted seconds of a step (one force evaluation) on k nodes."""
    return compute_seconds(n, k, rate) + communicate_seconds(n, k, network)


def _bisect(f, lo=1.0, hi=1e12):
    """The N in [lo, hi] where the increasing f crosses 0 (geometric bisection)."""
    if f(lo) >= 0:
        return lo
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return hi


def n_break(k, rate, network):
    """N below which k nodes are slower per step than one."""
    return _bisect(lambda n: step_seconds(n, 1, rate, network) - step_seconds(n, k, rate, network))


def n_half(k, rate, network):
    """N below which the parallel efficiency on k nodes drops under 1/2 (compute = communicate)."""
    return _bisect(lambda n: compute_seconds(n, k, rate) - communicate_seconds(n, k, network))


def cpu_node(measured: list[dict], rate_given: bool) -> str:
    """The CPU node's name in the tables and the plot: the threads of the 1-rank runs its rate
    came from (a file of another machine's runs names that machine's), or --rate's."""
    threads = sorted({r["threads_per_rank"] for r in measured if r["ranks"] == 1})
    if rate_given or not threads:
        return "the CPU of --rate (B)"
    return f"the measured CPU (B, {'/'.join(map(str, threads))} thread{'s' if threads != [1] else ''})"


def tables(rate_cpu: float, node: str = "the CPU of --rate (B)") -> str:
    """The model's markdown tables (docs/mpi.md) for a CPU node (`node`, its name) of dp rate `rate_cpu`."""
    rates = {node: rate_cpu, **NODE_RATES}
    lines = ["| node | network | " + " | ".join(f"K = {k}: N_break / N_half" for k in KS) + " |",
             "|---|---|" + "---:|" * len(KS)]
    for node, rate in rates.items():
        for net in NETWORKS:
            cells = [f"{n_break(k, rate, net):,.0f} / {n_half(k, rate, net):,.0f}" for k in KS]
            lines.append(f"| {node} | {net} | " + " | ".join(cells) + " |")
    lines += ["", "| node | network | N | 1 node [s] | 8 nodes [s] | speed-up | communicate share |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for node, rate in rates.items():
        for net in NETWORKS:
            for n in (16384, 131072, 1048576):
                t1, t8 = step_seconds(n, 1, rate, net), step_seconds(n, 8, rate, net)
                share = 100 * communicate_seconds(n, 8, net) / t8
                lines.append(f"| {node} | {net} | {n:,} | {t1:.3g} | {t8:.3g} | {t1 / t8:.2f} | {share:.1f} % |")
    return "\n".join(lines)


def mpiexec() -> str | None:
    """mpiexec beside this Python (the MPI extra's mpich), else the one on the PATH, else None."""
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.is_file() else shutil.which("mpiexec")


def measure(path, ns=(1024, 4096, 16384), ranks=(1, 2), repeats=3):
    """Run `mpi_timing` under mpiexec -n 1 and -n 2 here, `repeats` times each, interleaved
    (a shared machine's load then hits both alike); append the JSON lines to `path`."""
    runs = _measured_text(path) if os.path.lexists(path) else ""
    if runs and not runs.endswith("\n"):      # a last line without its line feed: the next run joined it
        runs += "\n"
    for _ in range(repeats):
        for n in ns:
            for k in ranks:
                p = subprocess.run([mpiexec(), "-n", str(k), sys.executable, "-m", JOB, "--n", str(n),
                                    "--min-seconds", "2", "--node-version", "B"],     # the model's CPU node
                                   stdin=subprocess.DEVNULL,     # mpiexec passes its stdin on: data ended the job
                                   capture_output=True, text=True, errors="replace", timeout=900, check=True)
                runs += p.stdout.strip().splitlines()[-1] + "\n"
                write_file(path, runs)          # each run kept as it ends; never through a link at `path`


def _kept(path) -> str:
    """What a --measure that stopped leaves in `path` (each run's write replaces the file whole):
    the runs before it, where there are some (a hunt: said where the first write failed)."""
    try:
        some = os.path.getsize(path) > 0
    except OSError:
        some = False
    return f"the runs before it are in {path}" if some else f"no run was written to {path}"


MEASURED = "measured-runs file"


def _whole(least: int):
    return (lambda v: type(v) is int and least <= v < 2**53), f"a whole number from {least}"


POSITIVE = (lambda v: type(v) in (int, float) and math.isfinite(v) and v > 0), "a positive number"
# what `best`, `cpu_rate` and the tables read of each run (dotted: a key inside a key), and what it must be
RECORD = {"ranks": _whole(1), "n": _whole(2), "steps": _whole(1), "threads_per_rank": _whole(1),
          # the model's rate is of dp leapfrog steps, N^2 pair forces each (an si6a step makes several:
          # its rate read 16 times too low, a hunt found)
          "scheme": ((lambda v: v == "leapfrog"), "leapfrog, whose step is the one force evaluation the model counts"),
          "precision": ((lambda v: v == "dp"), "dp, the precision of the model's rate"),
          # a GPU node's run (E, the default on a GPU machine) was taken as the CPU's rate
          "node_version": ((lambda v: v == "B"), "B, the CPU node the model's rate is of"),
          "seconds_per_step": POSITIVE, "task_seconds.pairwise": POSITIVE,
          "task_shares.communicate": ((lambda v: type(v) in (int, float) and 0 <= v <= 100), "a share from 0 to 100")}


def _record_problem(record) -> str | None:
    """What makes one measured run unusable, in a few words, else None."""
    if not isinstance(record, dict):
        return f"is {type(record).__name__}, not a JSON object"
    for key, (valid, words) in RECORD.items():
        value = record
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if not valid(value):
            return f"has no valid {key} ({words})"
    return _disagreement(record)


def _disagreement(record) -> str | None:
    """Where a run's times disagree with each other (as `mpi_timing` writes them, its seconds per
    step are its task times' sum over its steps, its shares each task's part of that sum): what,
    else None. (A hunt: a run of 1e-300 s per step, its task times those of seconds, was taken
    as the fastest.)"""
    seconds, shares = record["task_seconds"], record["task_shares"]
    if set(shares) != set(seconds) or not all(type(v) in (int, float) and math.isfinite(v) and v >= 0
                                              for v in (*seconds.values(), *shares.values())):
        return "has task times or shares that are not one number from 0 up for each task"
    total = sum(seconds.values())           # (above 0: its pairwise time is)
    if not math.isclose(total / record["steps"], record["seconds_per_step"], rel_tol=1e-9):
        return (f"gives {record['seconds_per_step']:.4g} s per step where its task times sum to "
                f"{total / record['steps']:.4g} s per step")
    if any(not math.isclose(shares[k], 100 * seconds[k] / total, abs_tol=1e-3) for k in seconds):
        return "has task shares that are not its task times' parts of their sum"
    return None


def _measured_text(path) -> str:
    """The text of a measured-runs file (`runs.paths.read_bytes`: a regular file, bounded)."""
    try:
        return read_bytes(path, MEASURED).decode("utf-8")
    except UnicodeDecodeError:
        raise FileRefused(f"{MEASURED} {path} is not UTF-8 text") from None


def read_measured(path) -> list[dict]:
    """The runs of a measured-runs file (`mpi_timing`'s JSON lines), each checked
    (`_record_problem`); FileRefused (a ValueError) in one sentence naming the file and the
    line where one cannot be read or used."""
    runs = []
    for number, line in enumerate(text_lines(_measured_text(path)), 1):     # (splitlines: at a U+2028 in a string)
        if line.strip():
            record = parse_json(line, MEASURED, f"{path} (line {number})")
            if (problem := _record_problem(record)) is not None:
                raise FileRefused(f"{MEASURED} {path}: the run on line {number} {problem}")
            runs.append(record)
    return runs


def best(measured: list[dict]) -> dict:
    """{(ranks, n): the fastest run} (on a shared machine the minimum is the least disturbed)."""
    out = {}
    for r in measured:
        key = (r["ranks"], r["n"])
        if key not in out or r["seconds_per_step"] < out[key]["seconds_per_step"]:
            out[key] = r
    return out


def cpu_rate(measured: list[dict]) -> float | None:
    """This CPU's dp rate from the fastest 1-rank run at the largest N: N^2 / pairwise seconds
    (None without a 1-rank run)."""
    one = [r for r in best(measured).values() if r["ranks"] == 1]
    if not one:
        return None
    r = max(one, key=lambda r: r["n"])
    return r["n"] ** 2 * r["steps"] / r["task_seconds"]["pairwise"]


def plot(path, measured: list[dict], rate_cpu: float, cpu: str = "the CPU of --rate (B)"):
    from ..loading import pyplot
    plt = pyplot()
    import matplotlib
    import numpy as np

    ns = np.logspace(np.log10(256), np.log10(4e6), 200)
    with matplotlib.style.context("default"):      # matplotlib's defaults, none of the user's matplotlibrc
        _draw(path, plt, ns, measured, rate_cpu, cpu)


def _draw(path, plt, ns, measured: list[dict], rate_cpu: float, cpu: str):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True, layout="constrained")
    for ax, (node, rate) in zip(axes, ((cpu, rate_cpu), (GPU_NODE, NODE_RATES[GPU_NODE]))):
        ax.plot(ns, [step_seconds(n, 1, rate, next(iter(NETWORKS))) for n in ns], "k-", label="1 node")
        for k, color in zip(KS, ("#1f77b4", "#2ca02c", "#d62728")):
            for net, style in zip(NETWORKS, ("-", "--")):
                ax.plot(ns, [step_seconds(n, k, rate, net) for n in ns], style, color=color,
                        label=f"{k} nodes, {net}")
        if node == cpu:
            pts = best(measured)
            for k, marker in ((1, "o"), (2, "s")):
                if not (xs := sorted(n for (kk, n) in pts if kk == k)):
                    continue                     # (a hunt: a legend entry for points never drawn)
                ax.plot(xs, [pts[k, n]["seconds_per_step"] for n in xs], marker, color="k" if k == 1 else "#ff7f0e",
                        mfc="none", ms=7, label=f"measured: {k} rank{'s' if k > 1 else ''}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("N")
        ax.set_title(f"nodes: {node}, {rate:.3g} dp interactions/s each", fontsize=9)   # as the tables
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("seconds per dp leapfrog step")
    axes[1].legend(fontsize=6.5, loc="upper left")
    axes[0].legend(fontsize=6.5, loc="lower right")
    fig.suptitle("Version F: predicted step time on K nodes (Allgatherv of 24 N bytes)"
                 + (" and measured points" if best(measured) else ""), fontsize=10)
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=150)
    plt.close(fig)
    write_file(path, image.getvalue())


def main(argv=None) -> int:
    p = Parser(prog="python -m nbsymple_versions.instruments.mpi_model", doc=__doc__)
    p.add_argument("--measure", type=output_file_argument, metavar="JSONL",
                   help="time F with 1 and 2 ranks here, appending to JSONL")
    p.add_argument("--measured", type=file_argument, metavar="JSONL",
                   help="measured runs (from --measure) for the rate and the plot")
    p.add_argument("--rate", type=number_above(0), default=None,
                   help="this CPU's dp interactions/s (default: from --measured)")
    p.add_argument("--plot", type=output_file_argument, metavar="PNG", help="write the figure")
    a = p.parse_args(argv)
    if a.plot is not None and any(other is not None and os.path.realpath(other) == os.path.realpath(a.plot)
                                  for other in (a.measure, a.measured)):       # the runs replaced by a PNG
        p.refuse(f"--plot {a.plot} names the measured-runs file; give the figure another name")
    for option, path in (("--measure", a.measure), ("--plot", a.plot)):     # before minutes of measuring
        if path is not None:
            if (kind := odd_kind(path)) is not None:
                p.refuse(f"{option} {path} is {kind}, not a file")
            writable(path.parent, "files", p.refuse)
    if a.plot is not None and a.plot.suffix.lower() != ".png":     # a hunt: plot.pdf held a PNG
        p.refuse(f"--plot {a.plot} does not end in .png; the figure is a PNG: give it a name that says so")
    if a.measure:
        if mpiexec() is None:
            p.refuse("--measure runs F under mpiexec, which is neither beside this Python nor on the PATH: "
                     "install the MPI extra (pip install -e '.[mpi]')")
        if os.path.lexists(a.measure):
            _checked(p, read_measured, a.measure)
        try:
            # one measuring at a time: two appended to one file, each writing it whole, and the last kept its
            # own runs alone (their timings, on one machine at once, were each other's load; a hunt)
            with hold(a.measure, "the measured-runs file (--measure)") as unlocked:
                if unlocked is not None:
                    print(f"{p.prog}: {unlocked}", file=sys.stderr, flush=True)
                measure(a.measure)
        except PathBusy as e:
            p.refuse(f"{e}; nothing was measured")
        except subprocess.CalledProcessError as e:
            last = (e.stderr or "").strip().splitlines()[-1:] or ["no output"]
            p.refuse(f"a timing job failed with status {e.returncode} ({last[0]}); {_kept(a.measure)}", 1)
        except OSError as e:            # a full disk, a folder made read-only while it measured
            p.refuse(f"--measure stopped: {os_reason(e)} ({written_name(e) or a.measure}); {_kept(a.measure)}",
                     fault_status(e, started=True))
    source = a.measured or a.measure
    measured = _checked(p, read_measured, source) if source else []
    rate = a.rate or (cpu_rate(measured) if measured else None)
    if rate is None:
        p.error("give --rate, or measured runs with a 1-rank run (--measure, --measured)")
    if not RATES[0] <= rate <= RATES[1]:
        given = "--rate" if a.rate else f"the fastest 1-rank run of {source}"
        p.refuse(f"{given} gives {rate:.3g} dp interactions/s, which no node does: the model takes "
                 f"{RATES[0]:g} to {RATES[1]:g}")
    for (k, n), r in sorted(best(measured).items()):
        print(f"measured: {k} rank(s), N = {n}: {r['seconds_per_step']:.4g} s per step, "
              f"communicate {r['task_shares']['communicate']:.2f} %, {r['threads_per_rank']} thread(s) per rank")
    node = cpu_node(measured, a.rate is not None)
    print(f"{node}: {rate:.3g} dp interactions/s\n")
    print(tables(rate, node))
    if a.plot:
        try:
            plot(a.plot, measured, rate, node)
        except OSError as e:
            p.refuse(f"cannot write --plot {a.plot}: {os_reason(e)}", fault_status(e))
    return 0


def _checked(p, read, path):
    try:
        return read(path)
    except FileRefused as e:
        p.refuse(str(e))


if __name__ == "__main__":
    from ..entry import command
    sys.exit(command("python -m nbsymple_versions.instruments.mpi_model", main, draws=True))   # --plot
