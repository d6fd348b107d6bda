"""The regression gate: this checkout (HEAD plus any uncommitted change) against BASE, on this
machine, in two tiers:

- counts (deterministic, `code_counts`): the instructions per interaction of every CPU kernel for
  cpu-asm's fixed targets and of every GPU kernel for sm_90; any rise fails, whatever the load:
  the same code gives the same counts on every machine;
- timings: every timed task at the largest N the grid runs for each version, failing on a
  slowdown beyond its factor (below), which is also the smallest slowdown it can resolve here.

    make gate [BASE=main] [GATE_ARGS=...]     (or: python -m tools.gate --base main)

`--tiers counts` or `--tiers timings` runs one tier; `--report-timings` prints the timing tier
without letting it fail the gate (what a pull request's CI does on a shared runner).

Exit status: 0 no regression; 1 a regression (a count that rose, a gate benchmark slower
by more than the factor and significantly so by asv's statistics, or failing where BASE ran); 2
a usage problem (not a git checkout, unknown BASE, bad option); 3 a set-up problem (asv, the
counts or the benchmarks could not run, another gate of this checkout is running, nothing to
compare, or a slowdown that a machine this busy cannot tell from noise). A non-zero status comes
with one sentence. (`make gate` can only
exit 0, 1 or 2: both problems are 2 there.)

The timing tier's factor follows the timing and the load measured during the run: FACTOR (THREADED_FACTOR for
a kernel on all cores) on a quiet machine, BUSY_FACTOR when the median 1-minute load exceeded
the cores (`--factor` fixes one for all).

How: BASE's tree (`git archive`) and this checkout are each timed by `asv run --python=same`
into scratch results under .asv/ (results/ and results/benchmarks.json are not touched), the
benchmark processes importing the package of the tree being timed (ASV_PYTHONPATH); the
benchmarks are always this checkout's, as with `asv continuous`. BASE and HEAD alternate for
ROUNDS rounds, samples appended, so that a change of load on a shared machine hits both; then
asv's own comparison decides (the factor and its confidence-interval test).
"""
import errno
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from nbsymple_versions.entry import sentence
from nbsymple_versions.environment import os_reason
from nbsymple_versions.runs.paths import FileRefused, failed_write

from . import code_counts, tracking
from .arguments import Parser, commit as commit_argument, number_above, regex, whole_number_argument

# Slowdowns the gate fails on, from the spread of repeated runs of the same code on a shared 2-core
# machine (`--noise`; docs/tracking_performance.md). Quiet (median 1-minute load at most the cores):
# single-threaded timings differed by up to 1.05x (A's pairwise, galactic) and 1.25x (its 40 us
# integrate task; 1.28x in a HEAD-vs-HEAD gate), so FACTOR; timings on all cores (B's pairwise)
# by up to 2.06x, significantly by asv's test, so THREADED_FACTOR. Busy (load 7-26 on 2 cores):
# up to 2.8x, so BUSY_FACTOR for all.
FACTOR = 1.5
THREADED_FACTOR = 2.5
BUSY_FACTOR = 3.0
ROUNDS = 2
USAGE, SETUP = 2, 3
TIERS = ("counts", "timings")


class GateError(Exception):
    def __init__(self, status, sentence):
        super().__init__(sentence)
        self.status = status


class Inconclusive(GateError):
    """The timing tier could not decide on a machine this busy (status SETUP): with
    --report-timings, reported like its other verdicts, not gated (a hunt: it failed hosted CI)."""

    def __init__(self, sentence):
        super().__init__(SETUP, sentence)


def _commit(name: str) -> str:
    if (found := tracking.commit_hash(name)) is None:
        raise GateError(USAGE, f"gate: BASE {tracking.not_a_commit(name, repr(name))} (give BASE=<commit>).")
    return found


def _extract(commit: str, dest: Path):
    """BASE's tree, as committed, into `dest` (a folder under .asv/)."""
    shutil.rmtree(dest, ignore_errors=True)           # never through a link (rmtree refuses one)
    tracking.scratch_folder(dest.name, "BASE's tree")
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=tracking.ROOT, capture_output=True,
                             check=True).stdout
    import io
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(dest, filter="data")
    except OSError as e:                 # a full disk: the next gate removes what was extracted
        if e.errno in (errno.EMFILE, errno.ENFILE):      # out of files: `entry.command`'s sentence
            raise
        raise GateError(SETUP, _cannot_write(e.filename or dest, e)) from None


def _cannot_write(path, error: OSError) -> str:
    return sentence(f"gate: cannot write {path}: {os_reason(error)}; the gate stopped before its verdict.")


def _results(config: Path, machine: str, commit: str):
    """(name, params, value, stats, samples, version, machine, env) rows, as `asv continuous` reads them."""
    from asv.results import iter_results_for_machine_and_hash
    for res in iter_results_for_machine_and_hash(str(config.parent / "results"), machine, commit):
        for key in res.get_all_result_keys():
            params = res.get_result_params(key)
            yield (key, params, res.get_result_value(key, params), res.get_result_stats(key, params),
                   res.get_result_samples(key, params), res.benchmark_version.get(key), machine, "same")


def _unrolled(rows) -> dict:
    from asv.commands.compare import unroll_result
    out = {}
    for key, params, value, stats, samples, *_ in rows:
        for name, v, st, sa in unroll_result(key, params, value, stats, samples):
            out[name] = (v, (st, sa))
    return out


def on_all_cores(letter: str) -> bool:
    """The version's pairwise forces run on all CPU cores (B; F's CPU node version), not on one
    core or a GPU."""
    from nbsymple_versions.versions import get_version
    version = get_version(letter)
    return not version.gpu and version.host_kernels == "threaded"


def is_busy(load: dict) -> bool:
    """A machine is busy when the median of its 1-minute load averages during the rounds is above
    its cores (`tracking.LoadSampler.summary`): other work then takes cores from the timings."""
    return load["median"] > load["cores"]


def factor_for(name: str, busy: bool) -> float:
    """The gate's factor for one benchmark, e.g. "tasks.Tasks.time_pairwise('B', 16384, 'dp')"."""
    letter = re.search(r"\('([A-Z])'", name)
    threaded = letter is not None and "time_pairwise" in name and on_all_cores(letter.group(1))
    return max(THREADED_FACTOR if threaded else FACTOR, BUSY_FACTOR if busy else 1.0)


def verdict(base: dict, head: dict, factor):
    """(compared, regressed, failed, improved) names, with asv's own test (compare.py) at
    `factor(name)` for each benchmark."""
    from asv.commands.compare import _is_result_better, _isna
    compared, regressed, failed, improved = [], [], [], []
    for name in sorted(set(base) & set(head)):
        (b, bs), (h, hs) = base[name], head[name]
        if b is not None and not _isna(b) and h is None:
            failed.append(name)
        elif not (_isna(b) or _isna(h)):
            compared.append(name)
            if _is_result_better(b, h, bs, hs, factor(name)):
                regressed.append(name)
            elif _is_result_better(h, b, hs, bs, factor(name)):
                improved.append(name)
    return compared, regressed, failed, improved


def hidden_by_load(base: dict, head: dict, busy: bool, factor: float | None) -> list:
    """The benchmarks slower by more than their quiet-machine factor, which a busy machine's factor
    let pass: the timing tier is then inconclusive, not passed. Empty where the machine was quiet or
    `--factor` fixed one (the verdict stands)."""
    return verdict(base, head, lambda name: factor_for(name, False))[1] if busy and not factor else []


def table(base: dict, head: dict, regressed, failed, improved, factor):
    """The compared rows: BASE, HEAD, ratio, factor, and + (slower), - (faster), ! (fails at HEAD)."""
    from asv.util import human_value
    print(f"{'':2}{'BASE':>10} {'HEAD':>10} {'ratio':>6} {'factor':>6}  benchmark")
    for name in sorted(set(base) & set(head)):
        (b, _), (h, _) = base[name], head[name]
        if (b is None or math.isnan(b)) and (h is None or math.isnan(h)):
            continue
        mark = "+" if name in regressed else "!" if name in failed else "-" if name in improved else " "
        ratio = f"{h / b:6.2f}" if b and h and not (math.isnan(b) or math.isnan(h)) else "   n/a"
        fmt = lambda v: "failed" if v is None else "n/a" if math.isnan(v) else human_value(v, "seconds")  # noqa: E731
        print(f"{mark:2}{fmt(b):>10} {fmt(h):>10} {ratio} {factor(name):6.2f}  {name}")


def gate(base_name: str = "main", factor: float | None = None, rounds: int = ROUNDS, bench: str | None = None,
         tiers=TIERS, report_timings: bool = False) -> int:
    root = tracking.ROOT
    if (problem := tracking.checkout_problem(root)) is not None:
        raise GateError(USAGE, f"gate: {problem}.")
    base, head = _commit(base_name), _commit("HEAD")
    if bench is not None and "timings" not in tiers:
        raise GateError(USAGE, "gate: --bench chooses the timing tier's benchmarks, and --tiers counts has none; "
                               "drop one of them.")
    if "timings" in tiers:
        gate_patterns(bench)        # nothing to time is said before the counts tier's minute
        tracking.load_config()      # nor an asv.conf.json asv cannot use, before the base tree is extracted
    dirty = bool(tracking.git("status", "--porcelain", "--untracked-files=no"))
    label = f"HEAD {head[:8]}{' + uncommitted changes' if dirty else ''} against BASE {base_name} ({base[:8]})"
    with tracking.exclusive("gate", "the gate's scratch folders (.asv/gate-*)"):
        return _tiers(base, head, label, tiers, factor, rounds, bench, report_timings)


def _tiers(base, head, label, tiers, factor, rounds, bench, report_timings) -> int:
    """BASE's tree extracted, then the tiers asked for; the gate's exit status."""
    tree = tracking.SCRATCH / "gate-base-tree"
    _extract(base, tree)
    status = 0
    if "counts" in tiers:
        status = max(status, counts_tier(tree, tracking.ROOT, label))
    if "timings" in tiers:
        try:
            timed = timing_tier(base, head, tree, label, factor, rounds, bench)
        except GateError as e:           # no verdict of the timings: said, where the counts' regression stands
            if status != 1 and not (report_timings and isinstance(e, Inconclusive)):    # (a hunt: their 3 hid
                raise                                                                   # it) or is only reported
            tracking.log(str(e))
            timed = 0 if status == 1 else e.status
        if timed and report_timings:
            tracking.log("gate: the timing tier is reported, not gated (--report-timings).")
        else:
            status = max(status, timed)
    return status


def counts_tier(tree: Path, root: Path, label: str) -> int:
    """The deterministic tier: 1 where a count rose (`code_counts.TOLERANCE`: at all), or where HEAD's
    kernels of a kind (CPU, GPU) could not be counted while BASE's were, else 0."""
    tracking.log(f"gate, counts: {label}: instructions per interaction for fixed targets (any load)")
    start = time.monotonic()
    try:
        (base, missing_base), (head, missing_head) = code_counts.count_trees(tree, root, names=("BASE", "HEAD"))
    except code_counts.CountsFailed as e:
        raise GateError(SETUP, f"gate: {e}.") from None
    for side, missing in (("BASE", missing_base), ("HEAD", missing_head)):
        for kind, why in missing.items():
            tracking.log(f"gate, counts: {side} has no {kind.upper()} counts: {why}")
    rows, risen = code_counts.compare(base, head)
    # the same tools count both trees: a kind BASE's code gave and HEAD's does not is HEAD's failure (a kernel
    # that no longer compiles passed as "renamed or removed", a hunt found; HEAD's CPU kernels failing to
    # compile were "could not be counted", status 3, another)
    lost = {kind: why for kind, why in missing_head.items() if any(name.startswith(f"{kind}-asm ") for name in base)}
    if not head and not lost:
        raise GateError(SETUP, "gate: HEAD's kernels could not be counted (the lines above say why).")
    if not rows and not lost:       # (a hunt: "0 kernels compared ... no count rose", status 0)
        raise GateError(SETUP, "gate: no kernel was counted at both BASE and HEAD, so there is nothing to compare "
                               "(the lines above say why).")
    code_counts.table(rows, risen)
    gone = sorted(set(base) - set(head))
    tracking.log(f"gate, counts: {len(rows)} kernels compared in {time.monotonic() - start:.0f} s"
                 + (f"; counted at BASE only (renamed or removed): {', '.join(gone)}" if gone else ""))
    for kind, why in lost.items():
        tracking.log(f"gate: REGRESSION: HEAD's {kind.upper()} kernels could not be counted, where BASE's were: {why}")
    if risen:
        what = "; ".join(f"{n} rose" for n in risen)
        tracking.log(f"gate: REGRESSION in the instruction counts: {what}.")
    if risen or lost:
        return 1
    tracking.log("gate, counts: no count rose.")
    return 0


def gate_patterns(bench: str | None) -> list[str]:
    """asv's -b patterns of the gate's benchmarks that run here and that `bench` matches; none is
    a mistake in `--bench` (USAGE) or a machine and grid that run none of them (SETUP), said
    before anything runs (asv without a pattern would run the whole suite)."""
    patterns = tracking.selection(gate=True, bench=bench)
    if not patterns and bench is not None and tracking.selection(gate=True):
        raise GateError(USAGE, f"gate: --bench {bench!r} matches none of the gate's benchmarks that run here "
                               f"(`python -m tools.tracking select --gate` lists them).")
    if not patterns:
        raise GateError(SETUP, "gate: no gate benchmark runs on this machine and grid (see NBSYMPLE_BENCH_GRID, "
                               "NBSYMPLE_BENCH_VERSIONS).")
    return patterns


def timing_tier(base, head, tree, label, factor, rounds, bench) -> int:
    """The timing tier: BASE (its tree in `tree`) and HEAD timed by asv in alternating rounds; 1
    on a slowdown beyond the factor, else 0."""
    root = tracking.ROOT
    try:
        machine = tracking.register_machine()
        patterns = gate_patterns(bench)
    except (GateError, FileRefused):
        raise
    except Exception as e:      # noqa: BLE001 - one sentence, not a traceback
        raise GateError(SETUP, f"gate: the suite or the machine description could not be loaded "
                               f"({type(e).__name__}: {e}).")
    sides = {"base": (base, tree), "head": (head, root)}
    configs = {}
    for side in sides:
        shutil.rmtree(tracking.SCRATCH / f"gate-{side}", ignore_errors=True)
        configs[side] = tracking.scratch_config(f"gate-{side}")
    from benchmarks.grid import grid_name
    grid = grid_name()
    chosen = os.environ.get("NBSYMPLE_BENCH_VERSIONS", "").strip()     # left unsaid, the others were not timed
    tracking.log(f"gate, timings: {label} on {machine}, grid {grid}, {rounds} rounds"
                 + (f", versions {chosen} alone (NBSYMPLE_BENCH_VERSIONS)" if chosen else ""))
    start = time.monotonic()
    with tracking.LoadSampler() as load:
        for r in range(rounds):
            for side, (commit, path) in sides.items():
                # asv drops PYTHONPATH from the processes it starts and passes ASV_PYTHONPATH on as it
                env = dict(os.environ, ASV_PYTHONPATH=str(path))
                args = ["run", "--python=same", "--set-commit-hash", commit, "--machine", machine,
                        "--record-samples", *(["--append-samples"] if r else [])]
                for p in patterns:
                    args += ["-b", p]
                log_file = configs[side].parent / f"round{r + 1}.log"
                tracking.log(f"gate: round {r + 1}/{rounds}, {side.upper()} ({commit[:8]}): asv's output in "
                             f"{os.path.relpath(log_file, root)}")
                tracking.asv(*args, config=configs[side], env=env, log_file=log_file)
                if r == 0 and not any(_results(configs[side], machine, commit)):
                    raise GateError(SETUP, f"gate: asv saved no results for {side.upper()} ({commit[:8]}): the tail "
                                           f"of its output above says why (a BASE whose package lacks what this "
                                           f"checkout's benchmarks use is compared with `asv continuous`).")
    rows = {side: _unrolled(_results(configs[side], machine, commit)) for side, (commit, _) in sides.items()}

    la = load.summary()
    busy = is_busy(la)
    chosen = (lambda name: factor) if factor else (lambda name: factor_for(name, busy))
    compared, regressed, failed, improved = verdict(rows["base"], rows["head"], chosen)
    table(rows["base"], rows["head"], regressed, failed, improved, chosen)
    limits = "factor " + (f"{factor}" if factor else f"{BUSY_FACTOR} (busy)" if busy else
                          f"{FACTOR}, {THREADED_FACTOR} for timings on all cores")
    tracking.log(f"gate, timings: {len(compared)} benchmarks compared in {time.monotonic() - start:.0f} s; "
                 f"load average (1 min) {la['min']}-{la['max']}, median {la['median']} on {la['cores']} cores: "
                 f"{'busy' if busy else 'quiet'}, {limits}: the smallest slowdown this tier resolves here")
    if regressed or failed:
        what = "; ".join([f"{n} slower" for n in regressed] + [f"{n} fails" for n in failed])
        tracking.log(f"gate: REGRESSION beyond its factor: {what}.")
        return 1
    if not compared:
        raise GateError(SETUP, "gate: nothing ran on both sides, so nothing was compared (asv's messages above "
                               "say why).")
    hidden = hidden_by_load(rows["base"], rows["head"], busy, factor)
    if hidden:
        raise Inconclusive(f"gate: inconclusive: {len(hidden)} benchmarks slower by more than their quiet-machine "
                           f"factor but within the noise of a machine this busy ({BUSY_FACTOR}x); run it again "
                           f"when the load is lower.")
    tracking.log(f"gate, timings: no regression ({len(improved)} faster).")
    return 0


def noise(runs: int, bench: str | None = None) -> int:
    """Time the gate's benchmarks `runs` times on this checkout (separate asv runs, as the gate's
    sides are) and print each one's spread: the largest ratio of two runs' medians, and the
    largest ratio that asv's test calls significant, i.e. what FACTOR must exceed."""
    from asv.commands.compare import _is_result_better
    root, head = tracking.ROOT, _commit("HEAD")
    patterns = gate_patterns(bench)
    machine = tracking.register_machine()
    rows = []
    with tracking.exclusive("gate", "the gate's scratch folders (.asv/gate-*)"), tracking.LoadSampler() as load:
        for i in range(runs):
            shutil.rmtree(tracking.SCRATCH / f"gate-noise-{i}", ignore_errors=True)
            config = tracking.scratch_config(f"gate-noise-{i}")
            args = ["run", "--python=same", "--set-commit-hash", head, "--machine", machine, "--record-samples"]
            for p in patterns:
                args += ["-b", p]
            tracking.log(f"gate noise: run {i + 1}/{runs}")
            tracking.asv(*args, config=config, env=dict(os.environ, ASV_PYTHONPATH=str(root)),
                         log_file=config.parent / "run.log")
            rows.append(_unrolled(_results(config, machine, head)))
    worst = 1.0
    print(f"{'min':>10} {'max':>10} {'spread':>7} {'signif.':>7}  benchmark")
    for name in sorted(rows[0]):
        vals = [r[name] for r in rows if name in r and r[name][0] is not None and not math.isnan(r[name][0])]
        if len(vals) < 2:
            continue
        spread = max(v for v, _ in vals) / min(v for v, _ in vals)
        signif = max([a / b for (a, sa), (b, sb) in itertools.permutations(vals, 2)
                      if _is_result_better(b, a, sb, sa, 1.0)], default=1.0)
        worst = max(worst, signif)
        print(f"{min(v for v, _ in vals):10.4g} {max(v for v, _ in vals):10.4g} {spread:7.3f} {signif:7.3f}  {name}")
    la = load.summary()
    tracking.log(f"gate noise: {runs} runs, load average (1 min) {la['min']}-{la['max']}, median {la['median']} on "
                 f"{la['cores']} cores; the largest significant same-code ratio is {worst:.3f} (FACTOR {FACTOR}, "
                 f"THREADED_FACTOR {THREADED_FACTOR}, BUSY_FACTOR {BUSY_FACTOR})")
    return 0


def main(argv=None) -> int:
    p = Parser(prog="python -m tools.gate", doc=__doc__)
    p.add_argument("--base", type=commit_argument, help="the commit to compare with (default: main)")
    p.add_argument("--factor", type=number_above(1), help=f"slowdown that fails the gate, above 1, for every "
                                                          f"benchmark (default {FACTOR}, {THREADED_FACTOR} for timings "
                                                          f"on all cores, {BUSY_FACTOR} on a busy machine)")
    p.add_argument("--rounds", type=whole_number_argument(1),
                   help=f"BASE/HEAD alternations, at least 1 (default {ROUNDS})")
    p.add_argument("--bench", "-b", type=regex, help="only gate benchmarks whose name(params) matches this regex")
    p.add_argument("--noise", type=whole_number_argument(2), metavar="RUNS",
                   help="measure the spread of RUNS runs of HEAD instead (at least 2)")
    p.add_argument("--tiers", help="the tiers to run, comma-separated: counts (instructions per interaction), "
                                   "timings (default: both)")
    p.add_argument("--report-timings", action="store_true", help="print the timing tier without letting it fail")
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return USAGE if e.code else 0
    try:
        tiers = tuple(t.strip() for t in (args.tiers or ",".join(TIERS)).split(",") if t.strip())
        if not tiers or set(tiers) - set(TIERS):
            raise GateError(USAGE, f"gate: --tiers takes {' and/or '.join(TIERS)}, comma-separated; "
                                   f"got {args.tiers!r}.")
        if args.noise:                          # HEAD's timings alone: nothing compared, nothing to fail
            comparing = (("--base", args.base), ("--factor", args.factor), ("--rounds", args.rounds),
                         ("--tiers", args.tiers), ("--report-timings", args.report_timings))
            if ignored := [flag for flag, given in comparing if given]:
                raise GateError(USAGE, f"gate: --noise measures the spread of HEAD's timings, with nothing to compare "
                                       f"or fail, so {', '.join(ignored)} cannot be given with it.")
            return noise(args.noise, args.bench)
        return gate(args.base or "main", args.factor, args.rounds or ROUNDS, args.bench, tiers, args.report_timings)
    except GateError as e:
        tracking.log(str(e))
        return e.status
    except FileRefused as e:                    # asv's configuration or machine file (`tracking`)
        tracking.log(f"gate: {e}.")
        return SETUP
    except OSError as e:            # a write that failed (a full disk, a folder made read-only under .asv/)
        if e.errno in (errno.EMFILE, errno.ENFILE) or (where := failed_write(e)) is None:   # out of files, or no
            raise                   # write: as every command says it (a review: "cannot write .asv" was said of a
                                    # folder removed, of a read refused)
        tracking.log(_cannot_write(where, e))
        return SETUP


if __name__ == "__main__":
    from nbsymple_versions.entry import command
    sys.exit(command("python -m tools.gate", main))
