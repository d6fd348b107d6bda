"""The `nbsymple` command: run, check, profile, info, paper, gpu-asm, cpu-asm.

Mistakes in the input (a bad N or dt, an unknown name, a GPU version without a GPU, a
snapshot folder that cannot be written) end with one sentence on stderr and exit status 2,
never a traceback.
"""
import argparse
from contextlib import contextmanager
import json
import math
import os
import re
import secrets
import signal
import sys

from .arguments import Parser, file_argument, folder_argument, output_file_argument, shortened
from .entry import HELD, command, printable, sentence, stood_still
from .instruments import provenance
from .core.checks import COUNT_LIMIT
from .core.options import add_option_arguments, seed_argument, whole_number_argument as _whole_number
from .core.schemes import SCHEMES
from .core.units import CONSTANTS
from .core.vocabulary import PRECISIONS, TASKS
from .mpi.comm import launched
from .runs.errors import RunStop, speaks, stop_on_write_fault, user_values, writable
from .runs.signals import hold_signals
from .runs.snapshots import SNAPSHOT_FORMATS
from .runs.spec import RunSpec
from .versions import LETTERS, VersionUnavailable, option_flags


CHECK_N = 1000                  # `nbsymple check`'s bodies where --n is not given
# a count a checkpoint keeps (K of --every, --checkpoint-every, --mass-classes): an int64, as `--resume` reads it back
# (a hunt: --checkpoint-every 2**63 wrote a checkpoint that its own --resume refused)
_COUNT = _whole_number(1, COUNT_LIMIT, "2**63")


class UsageError(Exception):
    """A user mistake: reported as one sentence, exit status 2."""


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be positive and finite, got {text}")
    return value


def options_markdown() -> str:
    """The versions' options as a Markdown table (docs/cli.md holds it; a test compares)."""
    rows = ["| flag | option | versions | default | what |", "|---|---|---|---|---|"]
    for name, (d, letters) in option_flags().items():
        default = "the node's best" if d["default"] is None else f"`{d['default']}`"
        rows.append(f"| `{d['flag']}` | `{name}` | {', '.join(letters)} | {default} | {d['help']} |")
    return "\n".join(rows) + "\n"


def _gpu_arguments(p):
    add_option_arguments(p.add_argument, option_flags(), ("backend", "kernel"))


def version_options(args, version) -> dict:
    """The options given on the command line that `version` takes ({} when none was given)."""
    given = {name: getattr(args, name, None) for name in option_flags()}
    return {k: v for k, v in given.items() if v is not None and k in version.option_names}


def _parser():
    """The command line. `run`'s flags have no defaults here (they are `RunSpec`'s): what parsing
    returns is what was given, abbreviations included."""
    p = Parser(prog="nbsymple", doc=__doc__)
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)

    r = sub.add_parser("run", help="integrate a cluster on its Galactic orbit and report conservation and timing")

    def add(*flags, default=None, **kw):     # the defaults are RunSpec's (an option flag's None too)
        r.add_argument(*flags, default=argparse.SUPPRESS, **kw)

    add("--version", type=str.upper, choices=LETTERS,
            help="paper version A-E, or F across MPI ranks (default A)")
    add("--n", type=_whole_number(2), help="number of bodies (default 1024)")
    add("--scheme", type=str.lower, choices=tuple(SCHEMES), help="leapfrog (default) or si6a")
    add("--precision", type=str.lower, choices=PRECISIONS, help="sp, dp (default) or dsp")
    add("--dt", type=_positive_float, help="time step in cluster time units (default 5e-4)")
    add("--steps", type=_whole_number(0), help="number of steps (default 1000)")
    add("--seed", type=seed_argument, help="random seed of the initial conditions (a whole number from 0 below "
                                           "2**128)")
    add_option_arguments(add, option_flags())
    add("--snapshots", type=folder_argument, metavar="DIR", help="write snapshots into DIR")
    add("--snapshot-format", type=str.lower, choices=SNAPSHOT_FORMATS,
            help="npz (default) or nbsymple: the authors' ASCII layout, x y z vx vy vz m per line")
    add("--ics", type=file_argument, metavar="FILE",
            help="start from FILE in the authors' ASCII layout (x y z vx vy vz m per line, cluster units, "
                "Galactic frame) instead of a generated cluster")
    add("--ics-mass", type=_positive_float, metavar="MSUN",
            help="with --ics: the cluster mass in Msun that FILE's units are in (required unless FILE is a "
                "snapshot of nbsymple with its snapshots.json; the authors' input.txt: 480)")
    add("--ics-radius", type=_positive_float, metavar="PC",
            help="with --ics: the cluster radius in pc that FILE's units are in (default 10, as the authors')")
    add("--constants", type=str.lower, choices=tuple(CONSTANTS),
        help="exact (default): G = 4.300917e-3 pc (km/s)^2/Msun and the Galaxy in Allen & Santillan's own units; "
             "authors: the G and the Galaxy mass unit (2.32e7 Msun) of the authors' code, to run like for like "
             "from their files")
    add("--mass-classes", type=_COUNT, metavar="K",
            help="a Salpeter mass function (exponent 2.35) in K mass classes (default: equal masses)")
    add("--every", type=_COUNT, metavar="K", help="snapshot every K steps")
    add("--json", action="store_true", help="print one JSON object and nothing else on stdout")
    add("--progress", action="store_true",
        help="the progress line on stderr even off a terminal (a log, a batch job): one line per 10 %%; "
             "on a terminal, and under mpiexec run from one, it is shown anyway (rank 0)")
    add("--checkpoint", type=output_file_argument, metavar="FILE", help="write a resumable checkpoint to FILE")
    add("--checkpoint-every", type=_COUNT, metavar="K",
            help="checkpoint every K steps (default 100), at the end, and on a signal to stop "
                 f"({'/'.join(signal.Signals(s).name for s in HELD)})")
    add("--resume", type=file_argument, metavar="FILE",
            help="continue the run checkpointed in FILE (with --steps M: to M steps in all)")

    c = sub.add_parser("check", help="validate every available version x precision against the float64 reference")
    c.add_argument("--n", type=_whole_number(2), default=None,
                   help=f"number of bodies (default {CHECK_N}; with --gpu-report, of its validation runs: "
                        f"default 2048 on a GPU, 96 in the CUDA simulator)")
    c.add_argument("--seed", type=seed_argument, default=None, help="random seed of the inputs (a whole number from 0 "
                                                                   "below 2**128)")
    c.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")
    _gpu_arguments(c)
    c.add_argument("--gpu-report", action="store_true",
                   help="GPU self-check: validate C, D, E, then time them at N = 2^14, 2^16, 2^17 (N = 256 "
                        "in the CUDA simulator; more options: python -m nbsymple_versions.instruments.gpu_report "
                        "--help)")

    f = sub.add_parser("profile", help="per-task time of a few warm steps for each version and N (paper Tables 4-6)")
    f.add_argument("--versions", default="".join(LETTERS), type=str.upper,
                   help="letters to profile (default: all available)")
    f.add_argument("--n", type=_whole_number(2), nargs="+", default=[1024, 4096],
                   help="numbers of bodies (default 1024 4096)")
    f.add_argument("--scheme", default="leapfrog", type=str.lower, choices=tuple(SCHEMES))
    f.add_argument("--precision", default="dp", type=str.lower, choices=PRECISIONS)
    f.add_argument("--steps", type=_whole_number(1), default=5, help="warm steps timed per row (default 5)")
    f.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")
    _gpu_arguments(f)

    a = sub.add_parser("gpu-asm", help="count the GPU kernels' machine instructions per interaction (no GPU needed)")
    a.add_argument("--arch", default="sm_90", type=str.lower,
                   help="target: sm_90 (H200, default), sm_80 (A100), sm_100 (B200) or another sm_XY (counted only)")
    a.add_argument("--tile", type=_whole_number(1), default=256, help="threads per block (default 256)")
    a.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")
    a.add_argument("--keep", type=folder_argument, default=None, metavar="DIR",
                   help="write each kernel's SASS as DIR/<backend>_<precision>_<kernel>.sass")

    from .instruments.cpu_asm.toolchain import FIXED_TARGETS, HOST
    u = sub.add_parser("cpu-asm", help="count the CPU kernels' machine instructions per interaction, for this CPU "
                       "and fixed targets")
    u.add_argument("--target", default="all", type=str.lower, choices=(HOST, *FIXED_TARGETS, "all"),
                   help=f"{HOST} (this CPU), {', '.join(FIXED_TARGETS)}, or all of them (default all)")
    u.add_argument("--json", action="store_true", help="print a JSON list and nothing else on stdout")
    u.add_argument("--keep", type=folder_argument, default=None, metavar="DIR",
                   help="write each kernel's assembly as DIR/<target>_<kernel>_<precision>.s")

    sub.add_parser("info", help="Python, numba, threads, GPUs and available versions")
    sub.add_parser("paper", help="regenerate the paper's tables and figures (see `nbsymple paper --help`)",
                   add_help=False)
    return p


def run_spec(args) -> RunSpec:
    """`nbsymple run`'s parsed flags as a `RunSpec`; `given` names those typed."""
    given = {k: v for k, v in vars(args).items() if k != "command"}
    options = {name: given.pop(name) for name in option_flags() if name in given}
    return RunSpec(**given, options=options, given=frozenset(given) | frozenset(options))


def cmd_run(args) -> int:
    from .runs.driver import run            # every version, F across MPI ranks too
    try:
        return run(run_spec(args))
    except RunStop as e:
        if e.speak:
            print(sentence(f"nbsymple run: {e}"), file=sys.stderr)
        from .mpi.comm import end_stopped_job
        end_stopped_job(e.status)           # F's ranks end now, together (nothing on one process)
        return e.status


def cmd_check(args) -> int:
    from .runs.memory import memory_problem
    from .versions import all_versions, get_version
    if args.gpu_report:
        from .instruments.gpu_report import main as gpu_report
        if args.json:
            raise UsageError("--json does not apply to --gpu-report, which prints a report to read; leave out one "
                             "of them")
        options = version_options(args, get_version("C"))
        with user_values(UsageError):
            ok, reason = get_version("C").available(options.get("backend", "numba"))
        if not ok:
            raise UsageError(f"--gpu-report needs the GPU versions, which are not available here: {reason}")
        given = (("--validate-n", args.n), ("--seed", args.seed))
        return gpu_report([str(word) for flag, value in given if value is not None for word in (flag, value)],
                          prog="nbsymple check --gpu-report", validate_flag="--n", **options)
    from .validation import FRAME_KPC, HOST_TOLERANCE, validate
    args.n = CHECK_N if args.n is None else args.n
    drawn = args.seed is None            # one seed for every check, said: a failed one is repeated with it (a hunt)
    args.seed = secrets.randbits(32) if drawn else args.seed
    if problem := memory_problem(args.n):
        raise UsageError(problem)
    from .core.work import WorkRefused, check_time
    from .versions import simulated
    for version in all_versions():       # the GPU versions in the CUDA simulator, at its pace: before any check
        if simulated(version.letter, version_options(args, version)):
            try:                         # (each precision: a warm-up and the checked evaluation)
                check_time(args.n, 2 * len(PRECISIONS), f"--n {args.n} for version {version.letter}", "a smaller --n",
                           simulated=True)
            except WorkRefused as e:
                raise UsageError(str(e)) from None

    checks, unavailable = [], []
    for version in all_versions():
        options = version_options(args, version)
        ok, reason = version.available(options.get("backend", "numba"))
        if not ok:
            unavailable.append(f"{version.letter}: not available: {reason}")
            continue
        for precision in PRECISIONS:
            with user_values(UsageError):
                checks.append(validate(version.letter, precision, n=args.n, seed=args.seed, **options))
    failed = [c for c in checks if not c.passed]
    if args.json:
        print(json.dumps([c.as_dict() for c in checks]))
    else:
        print(f"N = {args.n}, seed {args.seed}{' (drawn; --seed repeats it)' if drawn else ''}")
        print("error = max_i |a_i - a_ref_i| / max_i |a_ref_i| (pairwise accelerations)")
        print(f"host tasks: the galactic acceleration, a drift and a kick (float64 in every precision), tolerance "
              f"{HOST_TOLERANCE:.0e}")
        print("the cluster at the origin (sp) or at 8.5 kpc (dp, dsp: 850 cluster radii, where sp's forces are "
              "off by a few 1e-3)")       # a line of its own: the two were 207 characters
        print(f"{'version':8}{'precision':10}{'cluster at':>11}{'max rel. error':>16}{'tolerance':>12}"
              f"{'host tasks':>12}  pass")
        for c in checks:
            frame = "origin" if FRAME_KPC.get(c.precision) is None else f"{FRAME_KPC[c.precision]:g} kpc"
            print(f"{c.version:8}{c.precision:10}{frame:>11}{c.max_relative_error:16.3e}{c.tolerance:12.0e}"
                  f"{c.host_tasks_error:12.3e}  {'yes' if c.passed else 'NO'}")
        for line in unavailable:
            print(line)
    if failed:
        print(f"nbsymple check: {len(failed)} of {len(checks)} checks failed", file=sys.stderr)
        return 1
    return 0


def cmd_profile(args) -> int:
    from .core.ics import make_cluster
    from .simulation import Simulation
    from .versions import get_version, simulated

    from .core.work import check_time
    from .runs.memory import memory_problem
    args.n = list(dict.fromkeys(args.n))         # an N given twice is timed once, its row printed once
    unknown = sorted(set(args.versions) - set(LETTERS))
    if unknown:
        raise UsageError(f"--versions: unknown version {shortened(''.join(unknown))!r}; choose letters from "
                         f"{''.join(LETTERS)}")
    if problem := next(filter(None, map(memory_problem, args.n)), None):
        raise UsageError(problem)
    with user_values(UsageError):
        for n in args.n:
            check_time(n, args.steps * len(args.versions), f"--steps {args.steps} of {len(args.versions)} "
                       f"version(s) at --n {n}", "fewer --steps or a smaller --n")
            for letter in dict.fromkeys(args.versions):   # a GPU version in the CUDA simulator: its own pace
                if simulated(letter, version_options(args, get_version(letter))):
                    check_time(n, args.steps, f"--steps {args.steps} of version {letter} at --n {n}",
                               "fewer --steps or a smaller --n", simulated=True)
    letters = list(dict.fromkeys(args.versions))
    if not letters:
        raise UsageError(f"--versions needs at least one letter from {''.join(LETTERS)}")
    given = {name: d["flag"] for name, (d, _) in option_flags().items() if getattr(args, name, None) is not None}
    takes = {name for v in letters for name in get_version(v).option_names}
    if unused := [flag for name, flag in given.items() if name not in takes]:
        raise UsageError(f"{', '.join(unused)}: no version of --versions {''.join(letters)} takes "
                         f"{'it' if len(unused) == 1 else 'them'}")
    why_not = {}
    for letter in letters:
        ok, reason = get_version(letter).available(version_options(args, get_version(letter)).get("backend", "numba"))
        if not ok:
            why_not[letter] = reason
    if len(why_not) == len(letters):
        by_reason = {}
        for letter, reason in why_not.items():
            by_reason.setdefault(reason.rstrip("."), []).append(letter)
        raise UsageError("none of the versions asked for can run here ("
                         + "; ".join(f"{', '.join(ls)}: {reason}" for reason, ls in by_reason.items()) + ")")
    if not args.json:
        print(f"{args.scheme}, {args.precision}; % of the step per task")
        print(f"{'version':8}{'N':>8}{'s per step':>16}" + "".join(f"{t:>12}" for t in TASKS) + "   device")
    rows = []
    for letter in letters:
        options = version_options(args, get_version(letter))
        if letter in why_not:
            print(f"{letter}: not available: {why_not[letter]}", file=sys.stderr)
            continue
        for n in args.n:
            with user_values(UsageError):
                sim = Simulation(make_cluster(n, seed=0), letter, args.scheme, args.precision, diagnostics=False,
                                 **options)
            sim.step(args.steps)
            rows.append({"version": letter, "n": n, "scheme": args.scheme, "precision": args.precision,
                         "seconds_per_step": sim.seconds_per_step, "task_shares": sim.clock.shares(),
                         "threads": sim.threads, "device": sim.device})
            if not args.json:
                shares = "".join(f"{rows[-1]['task_shares'][t]:12.2f}" for t in TASKS)
                print(f"{letter:8}{n:>8}{sim.seconds_per_step:16.4e}{shares}   {sim.device}", flush=True)
    if args.json:
        print(json.dumps(rows))
    if note := stood_still():            # its rows are wall-clock
        if args.json:
            print(f"nbsymple profile: {note}", file=sys.stderr)
        else:
            print(f"\nThis profile was {note}.")
    return 0


def cmd_gpu_asm(args) -> int:
    from .instruments import gpu_asm
    if args.arch not in gpu_asm.DEVICES and not re.fullmatch(r"sm_[0-9]{2,3}", args.arch):   # (a hunt: sm_٩٠)
        raise UsageError(f"--arch: unknown architecture {shortened(args.arch)!r}; choose sm_XY, e.g. "
                         f"{', '.join(gpu_asm.DEVICES)}")
    from .gpu_pairwise.options import check_tile
    try:
        check_tile(args.tile)
    except ValueError as e:
        raise UsageError(f"{e} (--tile)") from None
    try:
        gpu_asm.check_arch(args.arch)       # before the --keep folder is made
    except gpu_asm.ToolMissing as e:
        raise UsageError(str(e)) from None
    except gpu_asm.CompileFailed as e:
        raise UsageError(str(e)) from None
    if args.keep is not None:
        writable(args.keep, "SASS", UsageError)
    try:
        with _kept_into(args.keep, "SASS"):
            return gpu_asm.main(args.arch, args.tile, args.json, args.keep)
    except gpu_asm.ToolMissing as e:
        raise UsageError(str(e)) from None
    except gpu_asm.CompileFailed as e:     # e.g. an architecture this toolchain does not know
        raise UsageError(str(e)) from None


def cmd_cpu_asm(args) -> int:
    from .instruments import cpu_asm
    targets = cpu_asm.TARGETS if args.target == "all" else (args.target,)
    if args.keep is not None:
        writable(args.keep, "assembly", UsageError)
    try:
        with _kept_into(args.keep, "assembly"):
            return cpu_asm.main(targets, args.json, args.keep)
    except cpu_asm.CompileFailed as e:
        raise UsageError(str(e)) from None


@contextmanager
def _kept_into(keep, what: str):
    """`--keep`'s writes: one that fails (a folder in a file's place, a full disk) is one
    sentence, status 2 or 4 (`RunStop`, as a run's own files: `runs.errors.fault_status`)."""
    if keep is None:
        yield
        return
    before = _files_in(keep)

    def kept():                          # (a hunt: "written before it" of nothing)
        return f"the {what} written before it is in {keep}" if _files_in(keep) != before else \
            f"none was written into {keep}"
    with stop_on_write_fault(kept):
        yield


def _files_in(folder) -> dict:
    """name -> (size, modification time) of each file in `folder` (none where it cannot be read)."""
    try:
        with os.scandir(folder) as entries:
            return {e.name: (e.stat().st_size, e.stat().st_mtime_ns) for e in entries if e.is_file()}
    except OSError:
        return {}


def cmd_info(args) -> int:
    from .versions import all_versions

    d = provenance.describe()
    lib = d["libraries"]
    print(f"python          {lib['python']} ({d['arch']})")
    cores = provenance.cores_words(d["usable_cores"] or d["cores"], d["cores"], " of ")   # taskset: "1 of 2"
    print(f"CPU             {d['cpu']}, {cores} logical CPUs, microarchitecture {d['uarch']}, "
          f"vector ISA {d['isa']}")
    print(f"machine         {d['machine']} (the asv machine name of its results)")
    print(f"numpy           {lib['numpy']}")
    openmp = "".join(", " + printable(f"{k}={v}") for k, v in sorted(os.environ.items())     # one line, no escape
                     if k.startswith(("OMP_", "GOMP_")))                                       # acting (a hunt)
    print(f"numba           {lib['numba']} (llvmlite {lib['llvmlite']}), threading layer {d['threading_layer']}, "
          f"{d['threads']} thread{'s' * (d['threads'] != 1)}{openmp}")
    print(f"numba-cuda      {lib['numba-cuda'] or 'not installed'}")
    print(f"GPUs            {d['gpu_description']}" + (f"; CUDA driver {d['cuda_driver']}" if d["cuda_driver"] else ""))
    print(f"commit          {d['commit']}")
    print("versions:")
    for v in all_versions():
        ok, reason = v.available()
        print(f"  {v.letter}  {v.name:13} {v.description}" + ("" if ok else f"  [not available: {reason}]"))
        if v.option_names:
            print(f"     {'':13} options: " + ", ".join(f"{d['flag']} ({d['name']})" for d in v.Options.describe()))
    return 0


def main(argv=None) -> int:
    """`nbsymple ...`: the environment checked, stdout guarded and signals answered by
    `entry.command`; a user mistake is one sentence and exit status 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    name = f"nbsymple {argv[0]}" if argv and not argv[0].startswith("-") else "nbsymple"
    if argv[:1] == ["run"] and launched():
        hold_signals()                   # under mpiexec: no rank ends alone before the ranks are joined
    return command(name, lambda: _dispatch(argv, name), draws=argv[:1] == ["paper"], ranks=argv[:1] == ["run"])


def _dispatch(argv, name) -> int:
    try:
        if argv[:1] == ["paper"]:
            from .paper.main import main as paper_main
            return paper_main(argv[1:])
        args = _parser().parse_args(argv)
        commands = {"run": cmd_run, "check": cmd_check, "profile": cmd_profile, "info": cmd_info,
                    "gpu-asm": cmd_gpu_asm, "cpu-asm": cmd_cpu_asm}
        return commands[args.command](args)
    except (UsageError, VersionUnavailable) as e:
        if speaks():                     # under mpiexec every rank refuses alike: rank 0 says it
            print(sentence(f"{name}: {e}"), file=sys.stderr)
        return 2
    except RunStop as e:                 # a write that failed (`--keep`); `run` answers its own
        if e.speak:
            print(sentence(f"{name}: {e}"), file=sys.stderr)
        return e.status


if __name__ == "__main__":
    sys.exit(main())
