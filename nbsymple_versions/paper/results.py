"""The one reader of asv results (asv 0.6, results api_version 2) used by `nbsymple paper`
and by the tests of the committed results.

Layout read: `<results>/<machine>/machine.json` (cpu, num_cpu, ram, os, ...) and
`<results>/<machine>/<commit8>-<env>.json`, whose `results` maps a benchmark name to one row
per `result_columns` (`result`: values flat over the product of `params`, each parameter
value a repr string such as "'A'" or "256"; skipped combinations are null or NaN).

    res = load_results("results")            # the only (or most recent) machine, latest commit
    res.get("steps.Step.time_step_leapfrog")  # {('A', 256, 'dp'): 0.0012, ...}

Every problem with a file raises `ResultsError` whose message is one sentence naming it.
"""
from __future__ import annotations

import ast
import itertools
import math
import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..core.checks import COUNT_LIMIT
from ..entry import escaped
from ..environment import os_reason
from ..runs.paths import FileRefused, decode_json, not_a_folder, read_bytes
from ..versions import LETTERS
from .records import TEXT_LIMIT, finite as _finite, one_line as _line

RESULTS_API_VERSION = 2   # asv 0.6 results files
_NOT_RESULTS = {"machine.json", "benchmarks.json"}


class ResultsError(Exception):
    """A results folder or file cannot be used; the message is one sentence naming the file."""


def _name(path: Path, root: Path | None = None) -> str:
    """The file's name relative to the current folder where it lies below it (`make paper`'s
    `.asv/paper/results/...`, the committed `results/...`), else to the results folder's parent
    (never an absolute machine path); a character that does not print, a line feed above all, is
    written as its escape, so that the sentence naming it stays one line."""
    path = Path(path)
    try:
        name = str(path.absolute().relative_to(Path.cwd()))
    except ValueError:
        name = None
    if name is None and root is not None:
        try:
            name = str(Path(root.name) / path.relative_to(root))
        except ValueError:
            pass
    if name is None:
        name = str(Path(path.parent.name) / path.name) if path.parent.name else path.name
    return _printable(name)


def _printable(text: str) -> str:
    """`text` with each character that does not print (a line feed, an escape) as its escape."""
    return "".join(c if c.isprintable() else escaped(c) for c in text)


def name_problem(name: str) -> str | None:
    """Why `name` (a machine folder's, or --machine's or --commit's as typed) is no name asv
    writes, in words that follow it, else None: bytes that are not UTF-8 (held as surrogates:
    they were said to be "a control character or a line break"), or a character that does not
    print (a line feed would split every sentence naming it)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text, as every name asv writes is"
    if not name.isprintable():
        return "holds a control character or a line break, which no name asv writes has"
    return None


def quoted(name: str) -> str:
    """`name` in quotes, each character that does not print and each byte that is not UTF-8 as
    its escape (`\\n`, `\\xff`)."""
    return f"'{_printable(name)}'"


def read_json(path: Path, what: str, root: Path | None = None) -> dict:
    """Parse a JSON object from `path` or raise ResultsError with one sentence naming it."""
    name = _name(path, root)
    if not os.path.lexists(path):
        raise ResultsError(f"{what} {name} is missing.")
    try:
        raw = read_bytes(path, what, name)         # a regular file, bounded in size; its JSON in depth
        if not raw.strip():
            raise ResultsError(f"{what} {name} is empty.")
        data = decode_json(raw, what, name)
    except FileRefused as exc:
        raise ResultsError(f"{exc}.") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{what} {name} is not an asv file (its JSON is not an object).")
    return data


def _literal(text):
    """A parameter value from its repr string ("'A'" -> 'A', "256" -> 256)."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


_MAX_MS = 253402300799000     # 9999-12-31 23:59:59 UTC, the last time `datetime` holds


def _is_ms(value) -> bool:
    """A time asv could have written: milliseconds since the epoch, 0 to the year 9999."""
    return _finite(value) and 0 <= value <= _MAX_MS


def _text(value) -> bool:
    return value is None or _line(value)


def _text_or_number(value) -> bool:
    return _text(value) or isinstance(value, int) and not isinstance(value, bool)


def _object(test):
    return lambda v: v is None or (isinstance(v, dict) and all(isinstance(k, str) and test(x) for k, x in v.items()))


# Fields of a results file and machine.json: (the test of a value, what it must be); absent is null.
RESULTS_FIELDS = {
    "commit_hash": (lambda v: isinstance(v, str) and re.fullmatch("[0-9a-fA-F]{4,64}", v) is not None,
                    "a commit hash"),
    "date": (lambda v: v is None or _is_ms(v), "a time in milliseconds since the epoch"),
    "python": (_text, "text"), "env_name": (_text, "text"),
    "params": (_object(_text_or_number), "an object of text"), "env_vars": (_object(_text), "an object of text"),
    "provenance": (lambda v: v is None or isinstance(v, list), "a list"),
    # read by asv alone (`make dashboard`'s asv publish ended in its TypeError on a list there)
    "durations": (_object(lambda x: x is None or _finite(x)), "an object of numbers"),
}
# a run's load average as `tools.tracking.LoadSampler.summary` records it: each field null where not known
# (os.cpu_count() may say None), which `paper.data` passes over
_LOAD = (lambda v: _finite(v) and v >= 0, "a load average of at least 0")
LOAD_FIELDS = {"min": _LOAD, "median": _LOAD, "max": _LOAD,
               "cores": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
                         "a whole number of at least 1")}
MACHINE_FIELDS = {key: (_text_or_number, "text") for key in ("arch", "cpu", "os", "num_cpu", "ram", "gpu", "device",
                                                              "uarch", "isa")}
MACHINE_FIELDS["machine"] = (_line, "text")
PLAUSIBLE = (1e-30, 1e30)   # no measurement the suite records (seconds, relative errors, %, counts) lies outside
# values on one parameter axis: the suite's n axis holds the 7 N of all its grids (benchmarks/grid.py), its
# version axis 6 versions, its precision axis 3; each is a tick, a bar or a row of the paper's (20000 N kept
# `paper` drawing for hours)
AXIS_LIMIT = 24


# the most a share in % may be: 100 and its rounding (the TaskClock's 100 * s / total of a task that holds the
# whole total is 100 + 1 ulp one time in 15)
SHARE_TOP = 100 * (1 + 1e-12)
# What a benchmark's values mean, by its method's name (asv's time_ benchmarks hold seconds, the suite's
# track_ ones their unit): (pattern, the test of a value, what it must be). A value outside is no measurement
# (a hunt: a share of 150 % was tabled, one of 1e7 % ended the task-share figure in a traceback, a negative
# step time was called none and a negative energy error tabled); a benchmark of no pattern, any number.
MEASURES = (
    (r"time_\w*|track_\w*seconds\w*", lambda v: v > 0, "a time in seconds above 0"),
    (r"track_\w*share", lambda v: 0 <= v <= SHARE_TOP, "a share in % from 0 to 100"),
    (r"track_\w*error\w*", lambda v: v >= 0, "a relative error of at least 0"),
    (r"track_threads", lambda v: v >= 1 and float(v).is_integer(), "a whole number of threads of at least 1"),
    (r"track_(gflops|\w*per_second|instructions_per_interaction)", lambda v: v > 0, "a number above 0"),
)


def measure(bench: str) -> tuple:
    """(the test of a value of benchmark `bench`, what it must be), from `MEASURES`."""
    method = bench.rsplit(".", 1)[-1]
    return next(((test, what) for pattern, test, what in MEASURES if re.fullmatch(pattern, method)),
                (lambda v: True, "a number"))


def _measured(value, test) -> bool:
    """A value asv could have recorded: null or NaN (a skipped combination), or a number that
    passes `test` (a benchmark's, `measure`), 0 or of a magnitude within PLAUSIBLE."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return _finite(value) and (value == 0 or PLAUSIBLE[0] <= abs(value) <= PLAUSIBLE[1]) and test(value)


def _row_problem(bench: str, row: dict) -> str | None:
    """Why a benchmark's row cannot be read (its params, its values), else None."""
    params, result = row.get("params"), row.get("result")
    contract = CONTRACT_PARAM_NAMES.get(bench)
    if params is None and not contract:
        params = row["params"] = []
    if not (isinstance(params, list) and all(isinstance(p, list) and all(_line(v) for v in p) for p in params)):
        return f"the params of {bench} are not lists of parameter values"
    if (longest := max(map(len, params), default=0)) > AXIS_LIMIT:
        return f"a parameter of {bench} has {longest} values, more than the {AXIS_LIMIT} a figure can show"
    for values in params:                # each combination is a key of `Results.get`: one given twice took
        literal = [_literal(v) for v in values]      # the other's value in silence (A's times B's)
        if (twice := next((v for i, v in enumerate(values) if literal[i] in literal[:i]), None)) is not None:
            return f"a parameter of {bench} has the value {twice} twice, so its values cannot be told apart"
    if contract and len(params) != len(contract):
        return f"{bench} has {len(params)} parameters, not {len(contract)} ({', '.join(contract)})"
    for pname, values in zip(contract or (), params):
        if pname == "n" and not all(isinstance(n := _literal(v), int) and not isinstance(n, bool)
                                    and 0 < n < COUNT_LIMIT for v in values):      # (2**64 was drawn: a traceback)
            return (f"a value of parameter n of {bench} is not a whole number from 1 to 2**63 - 1 (an int64, as "
                    f"the suite's counts are)")
        if pname.endswith("version") and not all(_literal(v) in LETTERS for v in values):
            return f"a value of parameter {pname} of {bench} is not one of the suite's versions {', '.join(LETTERS)}"
    values = result if isinstance(result, list) else [result]
    test, what = measure(bench)
    if not all(_measured(v, test) for v in values):
        return (f"a value of {bench} is not a measurement ({what}, {'0 or ' if test(0) else ''}of magnitude "
                f"{PLAUSIBLE[0]:g} to {PLAUSIBLE[1]:g}, or null)")
    combinations = math.prod(len(p) for p in params)
    if params and result is not None and not isinstance(result, list):     # it was read as the first one's
        return f"{bench} holds one value, not a list, for its {combinations} combinations of parameters"
    if isinstance(result, list) and len(result) != combinations:
        return f"{bench} holds {len(result)} values for {combinations} combinations of its parameters"
    return None


def _number(value) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _merged(earlier: dict | None, later: dict) -> dict:
    """A benchmark's row from two results files of one commit: the later file's, each combination it
    left empty (null, NaN) keeping the earlier file's value (and its statistics) where both have
    the same parameters; the earlier row whole where the later holds no value at all (a later run
    of a few benchmarks wrote all-null rows of the others, which erased their measured values)."""
    values = later.get("result")
    if earlier is None:
        return later
    if not any(math.isfinite(_number(v)) for v in (values if isinstance(values, list) else [values])):
        return earlier
    if not isinstance(values, list) or later.get("params") != earlier.get("params"):
        return later
    empty = [not math.isfinite(_number(v)) for v in values]
    merged = dict(later)
    for column, column_values in later.items():
        old = earlier.get(column)
        if column != "params" and isinstance(column_values, list) and isinstance(old, list) \
                and len(column_values) == len(old) == len(values):
            merged[column] = [e if from_earlier else v for from_earlier, e, v in zip(empty, old, column_values)]
    return merged


@dataclass
class ResultFile:
    """One parsed asv results file (one commit, one environment)."""

    path: Path
    commit: str                     # its hash in lower case, as git writes it (asv's file may hold any case)
    date: int                       # ms since the epoch, as asv stores it
    python: str
    env_name: str
    env_params: dict
    env_vars: dict
    rows: dict                      # name -> {column: value}
    provenance: list = field(default_factory=list)   # the suite's record of each run (load average...)

    @property
    def run_date(self) -> int:
        """When the benchmarks ran: the latest `started_at` (ms since the epoch), else the date."""
        started = [r.get("started_at") for r in self.rows.values()]
        started = [int(x) for x in started if _is_ms(x)]
        return max(started, default=self.date)

    @classmethod
    def read(cls, path: Path, root: Path | None = None) -> "ResultFile":
        d = read_json(path, "asv results file", root)
        name = _name(path, root)
        missing = [k for k in ("commit_hash", "date", "result_columns", "results") if k not in d]
        if missing:
            raise ResultsError(f"asv results file {name} is not an asv results file "
                               f"(no {', '.join(missing)}).")
        if d.get("version", RESULTS_API_VERSION) != RESULTS_API_VERSION:
            version = d["version"] if _finite(d["version"]) else "other than a number"
            raise ResultsError(f"asv results file {name} has results format version {version}, "
                               f"but this reader understands version {RESULTS_API_VERSION} (asv 0.6).")
        cols = d["result_columns"]
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols) \
                or "result" not in cols or "params" not in cols \
                or not isinstance(d["results"], dict):
            raise ResultsError(f"asv results file {name} is not an asv results file "
                               f"(its result_columns or results are malformed).")
        def bad(what: str):
            return ResultsError(f"asv results file {name} is malformed ({what}).")

        for key, (holds, what) in RESULTS_FIELDS.items():
            if not holds(d.get(key)):
                raise bad(f"its {key} is not {what}")
        provenance = [p for p in d.get("provenance") or [] if isinstance(p, dict)]
        for p in provenance:
            if (la := p.get("load_average")) is not None and not isinstance(la, dict):
                raise bad("a provenance record's load_average is not an object")
            for key, (holds, what) in LOAD_FIELDS.items():
                if la is not None and not (la.get(key) is None or holds(la[key])):
                    raise bad(f"a provenance record's load_average {key} is not {what}, or null")
        rows = {}
        for bench, row in d["results"].items():
            if not _line(bench):
                raise bad(f"a benchmark's name is not one line of text of at most {TEXT_LIMIT} characters")
            if not isinstance(row, list):
                raise bad(f"the row of {bench} is not a list")
            row = dict(zip(cols, row))
            if (problem := _row_problem(bench, row)) is not None:
                raise bad(problem)
            rows[bench] = row
        return cls(Path(path), d["commit_hash"].lower(), int(d["date"] or 0), d.get("python") or "",
                   d.get("env_name") or "", dict(d.get("params") or {}), dict(d.get("env_vars") or {}), rows,
                   provenance)


def _values(f: "ResultFile") -> int:
    """How many finite values a results file holds."""
    rows = (r.get("result") for r in f.rows.values())
    return sum(math.isfinite(_number(v)) for r in rows for v in (r if isinstance(r, list) else [r]))


def one_python(files: list["ResultFile"], warnings: list[str]) -> list["ResultFile"]:
    """Of one commit's results files (one per asv environment), those of one Python: the one whose
    files hold the most values, the latest where tied; the others are left out, said in
    `warnings` (a hunt: A timed under Python 3.11 and B under 3.12 were compared as one run)."""
    pythons = list(dict.fromkeys(f.python for f in files))
    if len(pythons) < 2:
        return files
    held = {p: (sum(_values(f) for f in files if f.python == p),
                max(f.run_date for f in files if f.python == p)) for p in pythons}
    keep = max(pythons, key=held.get)
    left = [f for f in files if f.python != keep]
    warnings.append(f"results of Python {keep} are read; those of Python {join_words(p for p in pythons if p != keep)} "
                    f"of the same commit are left out ({', '.join(f.path.name for f in left)}), so that no "
                    f"comparison mixes interpreters.")
    return [f for f in files if f.python == keep]


def join_words(words) -> str:
    words = list(words)
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


@dataclass
class Results:
    """Results of one machine, one commit and one Python (its environments' files are merged)."""

    machine: str
    commit: str
    date: int                                   # the commit's date, ms since the epoch (asv's `date`)
    python: str
    machine_info: dict
    files: list = field(default_factory=list)   # repo-relative names of the files read
    env_vars: dict = field(default_factory=dict)
    env_params: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)  # one sentence per file that was skipped
    _rows: dict = field(default_factory=dict, repr=False)
    run_date: int = 0                           # when the benchmarks ran (latest started_at), ms
    provenance: list = field(default_factory=list)  # each run's record (libraries, threads, load average)
    choice: str = ""                            # which machine and commit were read, and why

    def __contains__(self, name: str) -> bool:
        return name in self._rows

    def param_names(self, name: str) -> list[str]:
        """Parameter names of a benchmark, from benchmarks.json (or the contract's if absent)."""
        names = self._param_names.get(name)
        if names:
            return list(names)
        return list(CONTRACT_PARAM_NAMES.get(name, ()))

    @property
    def changed(self) -> bool:
        """Whether a run of these results timed a working tree that differed from the commit (its
        provenance's '+dirty', which `tools.tracking` records; a hunt: `paper` named the clean commit)."""
        return any(str(p.get("commit", "")).endswith("+dirty") for p in self.provenance)

    @property
    def commit_label(self) -> str:
        """The commit measured as the figures name it: its first 8 characters, and whether changed."""
        return self.commit[:8] + (" with uncommitted changes" if self.changed else "")

    def param_values(self, name: str) -> list[list]:
        """The benchmark's parameter value lists (Python values)."""
        if name not in self._rows:
            raise KeyError(f"no results for benchmark {name!r} (commit {self.commit[:8]}, machine {self.machine})")
        params = self._rows[name].get("params") or []
        return [[_literal(v) for v in p] for p in params]

    def get(self, name: str, keep_missing: bool = False) -> dict[tuple, float]:
        """{(param values...): value} for a benchmark; skipped (null/NaN) combinations are left out
        unless `keep_missing`. A benchmark without parameters gives {(): value}."""
        if name not in self._rows:
            raise KeyError(f"no results for benchmark {name!r} (commit {self.commit[:8]}, machine {self.machine})")
        row = self._rows[name]
        values = row.get("result")
        params = self.param_values(name)
        if values is None:
            return {}
        if not isinstance(values, list):
            values = [values]
        out = {}
        for key, value in zip(itertools.product(*params), values):
            v = _number(value)
            if keep_missing or math.isfinite(v):
                out[tuple(key)] = v
        return out

    def interval(self, name: str) -> dict[tuple, tuple[float, float]]:
        """{(param values...): (low, high)}: asv's 99 % confidence interval of each finite value
        (`stats_ci_99_a`, `stats_ci_99_b`), or (value, value) where the run recorded none."""
        row = self._rows.get(name, {})
        bounds = [row.get(k) for k in ("stats_ci_99_a", "stats_ci_99_b")]
        bounds = [b if isinstance(b, list) else [b] for b in bounds]
        out = {}
        for i, (key, value) in enumerate(self.get(name, keep_missing=True).items()):
            if math.isfinite(value):
                lo, hi = (_number(b[i]) if i < len(b) else math.nan for b in bounds)
                ok = math.isfinite(lo) and math.isfinite(hi) and lo <= value <= hi
                out[key] = (lo, hi) if ok else (value, value)
        return out

    @staticmethod
    def _text(ms: int) -> str:
        if not ms:
            return "unknown date"
        return datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    @property
    def date_text(self) -> str:
        """When the benchmarks ran, as 'YYYY-MM-DD HH:MM UTC'."""
        return self._text(self.run_date or self.date)

    @property
    def commit_date_text(self) -> str:
        return self._text(self.date)

    _param_names: dict = field(default_factory=dict, repr=False)


# Parameter names of the suite's contract (used when benchmarks.json is absent or unreadable).
_VNP = ("version", "n", "precision")
CONTRACT_PARAM_NAMES = {
    "tasks.Tasks.time_pairwise": _VNP, "tasks.HostTasks.time_galactic": ("version", "n"),
    "tasks.HostTasks.time_integrate": ("version", "n"),
    "tasks.Transfer.time_transfer": ("version", "n", "precision"),     # grid.axes names gpu_version "version"
    "steps.Step.time_step_leapfrog": _VNP, "steps.Step.time_step_si6a": _VNP,
    "steps.TaskShares.track_share": ("version", "n", "task"),
    "throughput.Throughput.track_interactions_per_second": _VNP,
    "throughput.Throughput.track_gflops": _VNP,
    "accuracy.Conservation.track_energy_error": ("scheme", "precision"),
    "accuracy.Conservation.track_energy_error_per_step": ("scheme", "precision"),
    "accuracy.Conservation.track_angular_momentum_error": ("scheme", "precision"),
    "accuracy.Conservation.track_internal_energy_error": ("scheme", "precision"),
    "compile.Compile.track_compile_seconds": ("version", "precision"),
}


def machines(results_dir="results", unnamed: list | None = None) -> list[str]:
    """Machine folders (those holding a machine.json or results files), sorted by name; one
    whose name does not print (a line feed would split every sentence naming it; asv writes no
    such name) is left out, with a sentence in `unnamed` where given."""
    root = Path(results_dir)
    if not root.is_dir():
        return []
    try:
        entries = sorted(root.iterdir())
    except OSError as e:                 # a folder this user may not list
        raise ResultsError(f"results folder {results_dir} cannot be read ({os_reason(e)}).") from None
    found, unreadable = [], []
    for p in entries:
        try:
            if p.is_dir() and (any(_result_paths(p)) or (p / "machine.json").exists()):
                found.append(p.name)
        except ResultsError as e:
            unreadable.append(str(e))
    if unnamed is not None:
        unnamed += unreadable + [f"machine folder {quoted(name)} skipped: its name {why}." for name in found
                                 if (why := name_problem(name)) is not None]
    return [name for name in found if name_problem(name) is None]


def _letters(name: str) -> str:
    """`name` in Unicode's composed form (NFC): a name typed as é, one character, and a folder's
    name written as e and its accent, two (NFD: as macOS writes names), are one name."""
    return unicodedata.normalize("NFC", name)


def _result_paths(folder: Path) -> list[Path]:
    """The results files of machine folder `folder`; ResultsError where it cannot be listed (a
    folder of another user's that this one may not read: a glob would find nothing, in silence)."""
    try:
        names = os.listdir(folder)
    except OSError as e:
        raise ResultsError(f"machine folder {quoted(folder.name)} skipped: it cannot be read "
                           f"({os_reason(e)}).") from None
    return sorted(folder / name for name in names if name.endswith(".json") and name not in _NOT_RESULTS)


def _read_all(folder: Path, root: Path, warnings: list) -> list[ResultFile]:
    files = []
    for path in _result_paths(folder):
        try:
            files.append(ResultFile.read(path, root))
        except ResultsError as exc:
            warnings.append(str(exc))
    return files


def held_benchmarks(files: list[ResultFile]) -> set[str]:
    """The benchmarks these files hold: a row with at least one finite value."""
    held = set()
    for f in files:
        for name, row in f.rows.items():
            values = row.get("result")
            values = values if isinstance(values, list) else [values]
            if any(math.isfinite(_number(v)) for v in values):
                held.add(name)
    return held


def _lacks(files: list[ResultFile], needs) -> list[str]:
    """Each need (a tuple of benchmarks, any one of which will do) that these files do not hold,
    as 'a or b'."""
    held = held_benchmarks(files)
    return [" or ".join(group) for group in need_groups(needs) if not held & set(group)]


def need_groups(needs) -> tuple[tuple[str, ...], ...]:
    """`needs` as groups of alternatives: a name alone is a group of one (a hunt: the string
    "steps.Step..." was read as a group of its letters)."""
    return tuple((need,) if isinstance(need, str) else tuple(need) for need in needs)


def choose_commit(files: list[ResultFile], needs=(), commit: str | None = None) -> tuple[str, str]:
    """(the commit to read, a sentence saying which and why) among one machine's results files.

    `commit` (a hash or prefix) names it; else the newest (by commit date, then run date) whose
    files hold every need of `needs` (tuples of alternative benchmark names: a figure's inputs),
    so that a later partial run (`asv continuous`, a history or gate run of a few benchmarks) is
    passed over and no figure mixes commits; where no commit holds them all, the one that lacks
    the fewest (the newest of those). Raises ResultsError for an unknown or ambiguous `commit`."""
    by_commit: dict[str, list] = {}
    for f in files:
        by_commit.setdefault(f.commit, []).append(f)
    folder = _name(files[0].path.parent) if files else "the machine folder"
    if commit is not None:              # a hash in any case: the files' are lower-cased (`ResultFile.read`)
        matches = sorted(c for c in by_commit if c.startswith(commit.lower()))
        if not matches:
            raise ResultsError(f"machine folder {folder} has no results for commit {commit} "
                               f"(it has: {', '.join(sorted(c[:8] for c in by_commit))}).")
        if len(matches) > 1:
            raise ResultsError(f"commit prefix {commit} is ambiguous in {folder}.")
        lacking = _lacks(by_commit[matches[0]], needs)
        return matches[0], (f"commit {matches[0][:8]}, as --commit named it"
                            + (f"; it lacks {'; '.join(lacking)}" if lacking else ""))
    newest_first = sorted(by_commit, reverse=True,
                          key=lambda c: (max(f.date for f in by_commit[c]), max(f.run_date for f in by_commit[c])))
    lacking = {c: _lacks(by_commit[c], needs) for c in newest_first}
    chosen = min(newest_first, key=lambda c: len(lacking[c]))          # the first of the fewest lacking
    passed = newest_first[:newest_first.index(chosen)]
    if not needs:
        why = "the newest"
    elif lacking[chosen]:
        why = (f"no commit holds every benchmark the paper needs; this one lacks the fewest "
               f"({'; '.join(lacking[chosen])})")
    else:
        whole = sum(not lacking[c] for c in newest_first)
        why = (f"the newest whose results hold every benchmark the paper needs ({whole} of the "
               f"{len(newest_first)} commits with results here do)")
    sentence = f"commit {chosen[:8]}, {why}"
    if passed:
        sentence += ("; newer partial results passed over: "
                     + ", ".join(f"{c[:8]} (lacks {'; '.join(lacking[c])})" for c in passed))
    return chosen, sentence


def load_results(results_dir="results", machine: str | None = None, commit: str | None = None,
                 needs=()) -> Results:
    """Read the asv results of one machine and one commit.

    machine: a folder name under `results_dir`; default the only one, or, of those whose chosen
    commit lacks the fewest needs, the one whose chosen commit ran last. commit: a full hash or
    prefix; default the newest whose results hold every need of `needs` (`choose_commit`;
    `Results.choice` says which and why). Files that cannot be read are skipped with a
    one-sentence warning in `Results.warnings`; if nothing usable remains, ResultsError says why
    (naming the file)."""
    root, needs = Path(results_dir), need_groups(needs)      # (a generator was used up by the first machine)
    if (why := not_a_folder(root)) == "does not exist":
        raise ResultsError(f"results folder {_printable(str(results_dir))} does not exist; run `make bench` "
                           f"(or `asv run`) first.")
    if why is not None:                                          # /dev/null, a file, a link to one
        raise ResultsError(f"results folder {results_dir} {why}; give --results the folder of asv results "
                           f"(`make bench` writes results/).")
    warnings: list[str] = []
    if machine is None:
        names = machines(root, warnings)
        if not names:
            itself = (root / "machine.json").is_file()   # a machine's folder given (a run's folder of *.json, `/`: no)
            here = root.resolve()
            above = (f"; it is a machine's folder itself: give --results the folder above it, "
                     f"{_printable(os.path.relpath(here.parent))}, and --machine {_printable(here.name)}.")
            raise ResultsError(f"results folder {_printable(str(results_dir))} holds no machine folder with asv "
                               f"results"
                               + (f" ({'; '.join(warnings)})" if warnings else "") + (above if itself else "."))
        if len(names) == 1:
            machine = names[0]
        else:
            rank = {}
            for m in names:         # the fewest needs lacking first (a history's machine holds few), then the latest
                files = _read_all(root / m, root, [])
                chosen = choose_commit(files, needs)[0] if files else None
                lacking = len(_lacks([f for f in files if f.commit == chosen], needs)) if files else len(needs) + 1
                rank[m] = (-lacking, max((f.run_date for f in files if f.commit == chosen), default=-1))
            machine = max(names, key=lambda m: rank[m])
    if not (root / machine).is_dir():    # its letters typed in another Unicode form (a hunt: "has no machine
        same = [m for m in machines(root) if _letters(m) == _letters(machine)]     # 'café' (it has: café)")
        if len(same) != 1:
            raise ResultsError(f"results folder {_printable(str(results_dir))} has no machine {machine!r} "
                               f"(it has: {', '.join(machines(root)) or 'none'}).")
        machine = same[0]
    folder = root / machine
    paths = _result_paths(folder)                                # a ResultsError where it cannot be read
    if not paths:
        raise ResultsError(f"machine folder {_name(folder, root)} holds no asv results file.")
    files = _read_all(folder, root, warnings)
    if not files:
        raise ResultsError(warnings[0] if len(warnings) == 1 else
                           f"no asv results file in {_name(folder, root)} could be read "
                           f"({'; '.join(w.rstrip('.') for w in warnings)}).")
    chosen, choice = choose_commit(files, needs, commit)
    selected = one_python(sorted((f for f in files if f.commit == chosen), key=lambda f: f.run_date), warnings)

    info = {}
    try:
        info = read_json(folder / "machine.json", "asv machine file", root)
        for key, (holds, what) in MACHINE_FIELDS.items():
            if not holds(info.get(key)):
                raise ResultsError(f"asv machine file {_name(folder / 'machine.json', root)} is not an asv "
                                   f"machine file (its {key} is {'missing' if key not in info else 'not ' + what}).")
    except ResultsError as exc:
        warnings.append(str(exc))
        info = {}
    info.pop("version", None)

    param_names = {}
    try:
        bench = read_json(root / "benchmarks.json", "asv benchmarks file", root)
        for name, spec in bench.items():
            names = spec.get("param_names") if isinstance(spec, dict) else None
            if isinstance(names, list) and all(isinstance(n, str) for n in names):
                param_names[name] = spec["param_names"]
    except ResultsError as exc:
        if (root / "benchmarks.json").exists():
            warnings.append(str(exc))

    rows = {}
    for f in selected:          # later files win, where they hold a value
        for bench, row in f.rows.items():
            rows[bench] = _merged(rows.get(bench), row)
    last = selected[-1]
    env_vars = {}
    for f in selected:
        env_vars.update(f.env_vars)
    return Results(machine=machine, commit=chosen, date=last.date, python=last.python, machine_info=info,
                   files=[_name(f.path, root) for f in selected], env_vars=env_vars,
                   env_params=dict(last.env_params), warnings=warnings, _rows=rows, _param_names=param_names,
                   run_date=max(f.run_date for f in selected), choice=f"machine {machine}, {choice}",
                   provenance=[p for f in selected for p in f.provenance])
