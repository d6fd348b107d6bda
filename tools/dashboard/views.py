"""Make `asv publish`'s dashboard open on views that show something.

    python tools/dashboard/views.py html          (make dashboard runs it after offline.py)

asv opens a benchmark's page on the first value of each parameter (sp at N = 256, every version:
a few dots and a legend of curves without data) and draws a summary thumbnail for every
benchmark, an empty one where no machine measured it (the GPU benchmarks on CPU machines). This
writes into index.json, per benchmark, the view to open on: every value of its first parameter
(the curves) that has data, at the values of the other parameters where the most of them do
(ties: the paper's dp and task 1, then the largest N); a small change to graphdisplay.js applies it
where the address names no parameter of its own. Benchmarks with no data at all leave index.json
(no empty thumbnail, no empty page), and a thumbnail of one or two commits draws its points.
Prints one line per change; exits 1 if asv's scripts are not the asv 0.6 files it knows how to
change (then nothing is changed).
"""
import glob
import itertools
import json
import math
import re
import sys
from pathlib import Path
from urllib.parse import quote

from nbsymple_versions.arguments import script_folder
from nbsymple_versions.runs.errors import fault_status
from nbsymple_versions.runs.paths import FileRefused, read_bytes, read_json, write_file, written_name

KIND = "published dashboard file"   # runs/paths.py's LIMITS
MAX_COMBINATIONS = 10**6             # parameter combinations of one benchmark: this suite's have hundreds

DEFAULTS_KEY = "nbsymple_view"       # index.json: benchmark -> {"p-<param>": [values]} to open on
HOOK = "        var params = index.benchmarks[current_benchmark].params;\n"
# asv 0.6's files, the line each change follows or replaces, and the change
PATCHES = {
    "graphdisplay.js": (HOOK, HOOK + "        /* nbsymple: open on the view tools/dashboard/views.py chose, where the "
                              "address names none */\n"
                              f"        state_selection = $.extend({{}}, index.benchmarks[current_benchmark]."
                              f"{DEFAULTS_KEY} || {{}}, state_selection);\n"),
    # a summary of one or two commits is a dot or two, which flot draws only as points
    "summarygrid.js": ("[{data: data}]", "[{data: data, points: {show: data.length < 3, radius: 2}}]"),
}
BENCHMARK_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")     # asv's: module.Class.method
PREFERRED = ("'dp'", "'pairwise'")   # among equally full views, the paper's precision and its task 1


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def measured(graphs: Path, name: str, size: int) -> list[bool]:
    """For each parameter combination (flat, asv's order), whether any machine has a value (a
    graph file that is not asv's list of [date, values] counts as no data, and is named)."""
    seen = [False] * size
    for path in graphs.rglob(f"{glob.escape(name)}.json"):
        if path.parent.name == "summary":
            continue
        try:
            points = read_json(path, KIND)
        except FileRefused as e:
            print(f"views.py: {e}; read as no data", file=sys.stderr)
            continue
        for point in points if isinstance(points, list) else []:
            values = point[1] if isinstance(point, list) and len(point) == 2 else None
            values = values if isinstance(values, list) else [values]
            for i, v in enumerate(values[:size]):
                seen[i] = seen[i] or _finite(v)
    return seen


def _parameters(bench) -> tuple[list[list[str]], list[str]] | None:
    """(params, param_names) of one benchmark of index.json, or None where they are not asv's
    (a list of lists of strings, a name for each, at most `MAX_COMBINATIONS` combinations)."""
    if not isinstance(bench, dict):
        return None
    params, names = bench.get("params") or [], bench.get("param_names") or []
    if not (isinstance(params, list) and isinstance(names, list) and len(names) >= len(params)
            and all(isinstance(p, list) and all(isinstance(v, str) for v in p) for p in params)
            and all(isinstance(n, str) for n in names)) or math.prod(map(len, params)) > MAX_COMBINATIONS:
        return None
    return params, names


def view(params: list[list[str]], names: list[str], seen: list[bool]) -> dict | None:
    """{"p-<name>": [values]}: the first parameter's values with data, at the combination of the
    others where the most of them have data; {} without parameters; None where nothing has data."""
    if not params:
        return {} if any(seen) else None
    index = {combo: i for i, combo in enumerate(itertools.product(*(range(len(p)) for p in params)))}
    best, best_key = None, None
    for rest in itertools.product(*(range(len(p)) for p in params[1:])):
        curves = [j for j in range(len(params[0])) if seen[index[(j, *rest)]]]
        values = [params[k + 1][i] for k, i in enumerate(rest)]
        key = (len(curves), sum(v in PREFERRED for v in values), rest)      # rest: the larger N wins a tie
        if curves and (best_key is None or key > best_key):
            best, best_key = (curves, rest), key
    if best is None:
        return None
    curves, rest = best
    out = {f"p-{names[0]}": [params[0][j] for j in curves]}
    out.update({f"p-{names[k + 1]}": [params[k + 1][i]] for k, i in enumerate(rest)})
    return out


def address(name: str, selection: dict) -> str:
    """The dashboard address of a benchmark's page on `selection` (for the report)."""
    return f"#{name}" + ("?" + "&".join(f"{quote(k)}={quote(v)}" for k, vs in selection.items() for v in vs)
                         if selection else "")


def main(argv) -> int:
    if len(argv) != 1:
        print("usage: python tools/dashboard/views.py HTML_DIR (the folder asv publish wrote)", file=sys.stderr)
        return 2
    if (out := script_folder("views.py", argv[0], "index.json")) is None:
        return 2
    index_path = out / "index.json"
    try:
        index = read_json(index_path, KIND)
        scripts = {name: read_bytes(out / name, KIND).decode("utf-8", "surrogateescape") for name in PATCHES}
    except FileRefused as e:
        print(f"views.py: {e}; nothing changed", file=sys.stderr)
        return 2
    if not (isinstance(index, dict) and isinstance(index.get("benchmarks"), dict)):
        print(f"views.py: {index_path} has no table of benchmarks, so it is not asv's; nothing changed",
              file=sys.stderr)
        return 2
    for name, (old, new) in PATCHES.items():
        if new not in scripts[name] and scripts[name].count(old) != 1:
            print(f"views.py: {out / name} is not asv 0.6's (the line to change is not there once); "
                  f"nothing changed", file=sys.stderr)
            return 1
    if (out / "graphs").is_symlink():      # asv writes a folder there; a link's tree is not its (a hunt: one to /)
        print(f"views.py: {out / 'graphs'} is a symbolic link, not the folder asv publish writes; nothing changed",
              file=sys.stderr)
        return 2
    try:                            # everything read before anything is written (a hunt: graphs/ a link to /,
        _views(out, index)          # a vanished /proc entry said "cannot write" after two scripts were changed)
    except OSError as e:
        print(f"views.py: cannot read {e.filename or out / 'graphs'}: {e.strerror or e}; nothing changed",
              file=sys.stderr)
        return 2
    try:
        return _apply(out, index, scripts)
    except OSError as e:            # a folder in a file's place, a full disk
        print(f"views.py: cannot write {written_name(e)}: {e.strerror or e}", file=sys.stderr)
        return fault_status(e)


def _apply(out: Path, index: dict, scripts: dict) -> int:
    """asv's scripts changed, and index.json with each benchmark's view (`_views`) written."""
    for name, (old, new) in PATCHES.items():
        if new not in scripts[name]:
            write_file(out / name, scripts[name].replace(old, new).encode("utf-8", "surrogateescape"))
    write_file(out / "index.json", json.dumps(index))
    return 0


def _views(out: Path, index: dict):
    """Each benchmark's view, from the graphs it reads, into `index` (in memory), said on stdout."""
    for name, bench in sorted(index["benchmarks"].items()):
        if not BENCHMARK_NAME.fullmatch(name):      # a path ('/etc/passwd', 'a/../b') is no name to look up
            print(f"{name!r}: not the name of an asv benchmark (module.Class.method); left as it is")
            continue
        if (parameters := _parameters(bench)) is None:
            print(f"{name}: its parameters in index.json are not asv's; left as it is")
            continue
        params, names = parameters
        chosen = view(params, names, measured(out / "graphs", name, math.prod(map(len, params))))
        if chosen is None:
            del index["benchmarks"][name]
            print(f"{name}: no machine measured it; left out of the summary and the pages")
        elif chosen:
            bench[DEFAULTS_KEY] = chosen
            print(f"{name}: opens on {address(name, chosen)}")


if __name__ == "__main__":
    from nbsymple_versions.entry import command
    sys.exit(command("python tools/dashboard/views.py", lambda: main(sys.argv[1:])))
