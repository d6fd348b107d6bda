"""Rewrite committed asv results so that their history survives a change of the suite or of the
machine's name, without re-running anything: benchmarks renamed or reshaped onto the current
parameters (rows matched by value, new combinations empty), the current explicit `version`
stamped on rows whose measurement is unchanged, the machine folder, machine.json and the machine
fields of every result renamed to today's identity, and the fixed `--python=same` environment name
(the names asv gives today kept: a `history` run's virtualenv). A file already as today's is left as
it is, so a second migration changes nothing (but a link at its name, replaced by the file).

    python -m tools.migrate FOLDER [--uarch UARCH] [--isa ISA] [--evidence TEXT] [--dry-run]

FOLDER is a machine folder under results/ written before machine names carried what they carry
today: the vector ISA (`--isa`) and the CPU microarchitecture (`--uarch`, LLVM's host CPU name,
e.g. znver4), each given by hand from what is known of that run where machine.json lacks it. Each
results file keeps its provenance and gains an entry saying where it came from and what was given.
The rows of the migration the suite went through when its parameters were fixed are in RESHAPES;
a later change (a new axis on an existing class) adds its own entry there, e.g. old rows taking
the axis' default value:

    "tasks.Tasks.time_pairwise": ("tasks.Tasks.time_pairwise", lambda v, n, p: (v, n, p, "'numba'")),
"""
import json
import os
import re
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

from nbsymple_versions.entry import printable
from nbsymple_versions.instruments import provenance
from nbsymple_versions.paper.records import one_line
from nbsymple_versions.runs.paths import not_a_folder, read_json, write_file

from . import tracking
from .arguments import Parser, folder_argument, name as name_argument

# the environments asv names today (`tracking.fixed_env_name`, `tracking.history_env_name`)
CURRENT_ENV = re.compile(r"(existing|virtualenv)-py[0-9]+\.[0-9]+")
ISA_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")     # avx512, avx2, sse4.2: one folder-name-safe word
MACHINE_NEEDS = ("arch", "cpu", "num_cpu", "os")    # the fields of machine.json the new name and file are made of
# the counts of machine.json, as a whole number or its digits: the new machine's name and ram are made of them
COUNTS = {"num_cpu": (re.compile(r"[1-9][0-9]*"), "a count of cores"),
          "ram": (re.compile(r"[0-9]+(?: GiB)?"), "asv's count of bytes or today's 'N GiB'")}

# old benchmark name -> (new name, old parameter tuple -> new tuple, or None to drop the row);
# tuples hold parameter values as asv writes them ("'A'", "256"). Benchmarks not named keep
# their name and tuple.
RESHAPES = {
    # precision-independent host tasks lost their precision parameter: they were timed at dp only
    "tasks.Tasks.time_galactic": ("tasks.HostTasks.time_galactic", lambda v, n, p: (v, n) if p == "'dp'" else None),
    "tasks.Tasks.time_integrate": ("tasks.HostTasks.time_integrate", lambda v, n, p: (v, n) if p == "'dp'" else None),
    # transfer is a GPU task: its class has only the GPU versions (the CPU rows were all empty)
    "tasks.Tasks.time_transfer": ("tasks.Transfer.time_transfer", lambda v, n, p: (v, n, p)),
}


def reshape(old, name: str, new, new_name: str, spec: dict, key=lambda *t: t) -> int:
    """Copy benchmark `name` of asv Results `old` into `new` as `new_name` with the current
    params and version of `spec` (its benchmarks.json entry); returns the rows with a value.
    ValueError where the row holds fewer or more values than its combinations of parameters."""
    import itertools
    import math
    old_params = old.get_result_params(name)
    combinations = list(itertools.product(*old_params))
    if (held := len(old._results[name])) != len(combinations):    # asv pads it: every value would move
        raise ValueError(f"{name} holds {held} values for its {len(combinations)} combinations of "
                         f"parameters, so no value can be matched to its own")
    values = dict(zip(map(tuple, combinations), zip(
        old.get_result_value(name, old_params), old.get_result_stats(name, old_params),
        old.get_result_samples(name, old_params))))
    moved = {}
    for t, v in values.items():
        target = key(*t)
        if target is not None:
            moved[tuple(target)] = v
    result, stats, samples, kept = [], [], [], 0
    for t in itertools.product(*spec["params"]):
        value, stat, sample = moved.get(tuple(t), (math.nan, None, None))
        result.append(value)
        stats.append(stat)
        samples.append(sample)
        kept += value is not None and not (isinstance(value, float) and math.isnan(value))
    if not kept:
        return 0
    new._results[new_name], new._stats[new_name], new._samples[new_name] = result, stats, samples
    new._benchmark_params[new_name] = spec["params"]
    new._benchmark_version[new_name] = spec["version"]
    new._started_at[new_name] = old.started_at.get(name)
    new._duration[new_name] = old._duration.get(name)
    new._profiles[new_name] = None
    return kept


def _gib(ram) -> str:
    """RAM as machine.json says it today ('24 GiB'), from asv's byte count or today's form."""
    text = str(ram or "0").strip()
    return text if text.endswith("GiB") else f"{round(int(text) / 2**30)} GiB"


def migrate(folder: Path, isa: str | None = None, uarch: str | None = None, dry_run: bool = False,
            evidence: str | None = None) -> Path:
    """Migrate one machine folder of results/; `isa` and `uarch` default to what its machine.json
    says (ValueError where it says nothing); `evidence`, why the values given are right, goes into
    each file's provenance. Returns the new folder. Unless `dry_run`, a results folder that asv's
    commands write (`tracking.results_lock`: results/) is held from the first read to the last write
    (`make bench` beside it merged the files it had renamed back; a second command was refused at
    benchmarks.json, after the other writes)."""
    lock = tracking.results_lock(folder.parent)
    with nullcontext() if dry_run or lock is None else tracking.exclusive(*lock):
        return _migrate(folder, isa, uarch, dry_run, evidence)


def _migrate(folder: Path, isa: str | None, uarch: str | None, dry_run: bool, evidence: str | None) -> Path:
    from asv import util
    from asv.results import Results
    from nbsymple_versions.paper.results import ResultFile, ResultsError
    root = folder.parent
    if isa is not None and not ISA_NAME.fullmatch(isa):
        raise ValueError(f"--isa {isa!r} is not a vector ISA's name (lower-case letters, digits, '.', '_' or '-', "
                         f"such as avx512)")
    _check_machine(folder)          # a regular file of JSON with the fields needed, before asv reads it
    benchmarks = tracking.discovered_benchmarks()
    old_machine = util.load_json(str(folder / "machine.json"), api_version=1)
    uarch = provenance.slug(uarch) if uarch else None
    given = {k: v for k, v in (("isa", isa), ("uarch", uarch)) if v and v != old_machine.get(k)}
    isa, uarch = isa or old_machine.get("isa"), uarch or old_machine.get("uarch")
    for value, what, option in ((isa, "vector ISA", "--isa"), (uarch, "microarchitecture", "--uarch")):
        if not value:
            raise ValueError(f"{folder.name}/machine.json does not say the {what}: give {option}")
    info = {"machine": "", "arch": old_machine["arch"], "cpu": old_machine["cpu"], "uarch": uarch, "isa": isa,
            "num_cpu": old_machine["num_cpu"], "gpu": old_machine.get("gpu", "none"),
            "os": old_machine["os"].split()[0], "ram": _gib(old_machine.get("ram"))}
    gpu = "nogpu" if info["gpu"] == "none" else provenance.slug(info["gpu"].replace(" x ", "x-"))
    info["machine"] = f"{provenance.slug(info['cpu'])}-{uarch}-{isa}-{info['num_cpu']}cores-{gpu}"
    target = root / info["machine"]
    if target.name != info["machine"] or target.name in (".", "..") \
            or target.parent.resolve() != root.resolve():      # every file it writes lies in one machine folder
        raise ValueError(f"the machine name {info['machine']!r} made from --isa, --uarch and "
                         f"{folder.name}/machine.json is not one folder name inside {root.name}/")
    print(printable((f"{folder.name} -> {target.name}" if target != folder else f"{folder.name}: today's name already")
                    + (f" ({', '.join(f'{k} {v}' for k, v in given.items())} given)" if given else "")))
    written = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "machine.json":
            continue
        data = read_json(path, "asv results file")          # a regular file of JSON, before asv reads it
        try:                      # with the fields `paper` reads (a hunt: results in the wrong columns, a
            ResultFile.read(path)         # provenance that is no list ended in tracebacks; a commit hash holding an
        except ResultsError as e:         # escape, a date of "yesterday", results as text passed, renamed)
            raise ValueError(f"{str(e).rstrip('.')}; nothing was written") from None
        try:
            old = Results.load(str(path))
        except Exception as e:  # noqa: BLE001 - asv's own errors (UserError, KeyError...): one sentence
            raise ValueError(f"{folder.name}/{path.name} is not an asv results file asv can read "
                             f"({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None
        try:
            new, runs = _migrated(old, folder, path, data, info, given, benchmarks, evidence)
        except ValueError as e:
            raise ValueError(f"{folder.name}/{path.name}: {e}; nothing was written") from None
        with tempfile.TemporaryDirectory() as scratch:    # asv's layout, then placed whole: asv writes through a link
            new.save(scratch)                             # (a link at the name had its target outside rewritten)
            migrated = read_json(Path(scratch) / new._filename, "asv results file")
        if root / new._filename == path and not path.is_symlink() \
                and _without_provenance(migrated) == _without_provenance(data):
            print(f"  {path.name}: today's already, left as it is")     # a second migration adds nothing
            continue
        written.append((path, new._filename, dict(migrated, provenance=runs)))
    _check_targets(folder, target, [(path, name) for path, name, _ in written], info)
    if dry_run:
        return target
    for path, name, data in written:
        out = root / name
        tracking.write_results(out, data)
        if out != path:
            path.unlink()
    target.mkdir(exist_ok=True)          # no results file made it where there is none (asv's write_json did)
    machine = json.dumps({**info, "version": 1}, indent=4, sort_keys=True)      # as asv's
    if target != folder or (folder / "machine.json").is_symlink() \
            or read_json(folder / "machine.json", "asv machine file") != json.loads(machine):
        write_file(target / "machine.json", machine)
    if target != folder:
        (folder / "machine.json").unlink()
        if not any(folder.iterdir()):
            folder.rmdir()
    tracking.write_benchmarks_json(root / "benchmarks.json", held=True)
    return target


def _without_provenance(data) -> dict:
    return {k: v for k, v in data.items() if k != "provenance"} if isinstance(data, dict) else data


def _migrated(old, folder: Path, path: Path, data, info: dict, given: dict, benchmarks: dict, evidence):
    """(the new asv Results, its provenance) of results file `path` (`old` as asv read it, `data`
    as JSON): its benchmarks renamed and reshaped, each said on stdout."""
    from asv import util
    from asv.results import Results
    version = str(old.params.get("python") or f"{sys.version_info.major}.{sys.version_info.minor}")
    # an old asv recorded the interpreter's path, not its version: asv's file name of it, never
    # "existing-py" + the path as folders (the file's name made folders: a hunt). Today's names
    # stay: a `history` run's virtualenv kept its name (it was renamed "existing" in a second run)
    env = old.env_name if CURRENT_ENV.fullmatch(old.env_name or "") else \
        util.sanitize_filename(tracking.fixed_env_name(version))
    new = Results(dict(info, python=version), {}, old.commit_hash, old.date, version, env, {})   # the run's Python
    new._duration.update({k: v for k, v in old._duration.items() if k.startswith("<")})
    for name in old.get_all_result_keys():
        new_name, key = RESHAPES.get(name, (name, lambda *t: t))
        if new_name in tracking.RETIRED:        # left the suite; its recorded rows stay as they are
            spec = {"params": old.get_result_params(name), "version": old._benchmark_version.get(name)}
            kept = reshape(old, name, new, new_name, spec, key)
            print(f"  {name}: retired ({tracking.RETIRED[new_name]}), {kept} values kept")
            continue
        if new_name not in benchmarks:
            print(f"  {name}: no such benchmark now, dropped")
            continue
        kept = reshape(old, name, new, new_name, benchmarks[new_name], key)
        print(f"  {name} -> {new_name}: {kept} values" + ("" if kept else " (none: row left out)"))
    runs = (data.get("provenance") if isinstance(data, dict) else None) or []
    note = ("recorded before the results kept provenance (libraries, threads, load)" if not runs else
            "machine renamed to today's identity; values untouched")
    entry = {"migrated_from": f"{folder.name}/{path.name}", **given, "note": note}
    return new, runs + [dict(entry, evidence=evidence) if evidence else entry]


def _check_targets(folder: Path, target: Path, renames: list[tuple[Path, str]], info: dict):
    """ValueError, before anything is written, where two results files would be written under one
    name (one environment name for every file: a virtualenv's and an existing Python's of one
    commit), where one would replace a file of another folder's results (`target` holds them), or
    where `target`'s machine.json says other than `info`, the machine.json it would be replaced by."""
    if target != folder and (target / "machine.json").exists():
        held = read_json(target / "machine.json", "asv machine file")
        if not isinstance(held, dict) or {k: v for k, v in held.items() if k != "version"} != info:
            raise ValueError(f"{target.name}/machine.json describes its machine otherwise than the one "
                             f"{folder.name}/ would be given, which would replace it: compare the two, and move "
                             f"{folder.name}/ or {target.name}/ away; nothing was written")
    taken = {}
    for path, name in renames:
        if name in taken:
            raise ValueError(f"{folder.name}/{taken[name].name} and {path.name} would both become "
                             f"{target.name}/{Path(name).name} (one commit's results, of two environments): "
                             f"keep one of them; nothing was written")
        taken[name] = path
        out = target.parent / name
        if target != folder and out.exists():
            raise ValueError(f"{target.name}/ already holds {out.name}, which {folder.name}/{path.name} would "
                             f"replace: move one of them away; nothing was written")


def _check_machine(folder: Path):
    """machine.json read as a regular file of bounded JSON, its MACHINE_NEEDS and the other fields
    the new file takes one line of text each, its COUNTS whole numbers or their digits."""
    info = read_json(folder / "machine.json", "asv machine file")
    shown = f"{folder.name}/machine.json"
    if not isinstance(info, dict):
        raise ValueError(f"{shown} is not an asv machine file (it is not a JSON object)")
    for key in (*MACHINE_NEEDS, "gpu", "ram", "isa", "uarch"):
        value = info.get(key)
        absent_and_optional = key not in MACHINE_NEEDS and value is None
        count = key in COUNTS and isinstance(value, int) and not isinstance(value, bool) and value > 0
        if key in COUNTS and value is not None and not (count or isinstance(value, str)
                                                        and COUNTS[key][0].fullmatch(value)):
            raise ValueError(f"{shown} is not an asv machine file this tool can rename (its {key}, {value!r:.40}, is "
                             f"not {COUNTS[key][1]})")
        if absent_and_optional or count or one_line(value) and value.strip():
            continue
        raise ValueError(f"{shown} is not an asv machine file this tool can rename (its {key} is "
                         f"{'missing' if key not in info else 'not one line of text'})")


def main(argv=None) -> int:
    p = Parser(prog="python -m tools.migrate", doc=__doc__)
    p.add_argument("folder", type=folder_argument, help="a machine folder under results/")
    p.add_argument("--isa", type=name_argument,
                   help="the vector ISA of the machine that wrote it (avx512, avx2, ...), where machine.json does not "
                        "say it")
    p.add_argument("--uarch", type=name_argument,
                   help="its CPU microarchitecture, LLVM's host CPU name (znver4, znver5, skylake-avx512, ...), where "
                        "machine.json does not say it")
    p.add_argument("--evidence", help="why the values given are right (kept in each file's provenance)")
    p.add_argument("--dry-run", action="store_true", help="say what would change, write nothing")
    args = p.parse_args(argv)
    try:
        if args.folder.is_symlink() and args.folder.is_dir():     # its results went beside the link, not in its folder
            raise ValueError(f"{args.folder} is a symbolic link (to {os.path.realpath(args.folder)}); give the machine "
                             f"folder it names")
        if (why := not_a_folder(args.folder)) is not None:
            raise ValueError(f"{args.folder} {why}; give the machine's folder under results/")
        if not (args.folder / "machine.json").is_file():
            raise ValueError(f"{args.folder} holds no machine.json")
        migrate(args.folder, args.isa, args.uarch, args.dry_run, args.evidence)
    except ValueError as e:             # `paths.FileRefused` too: one sentence naming the file or option
        print(f"{p.prog}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    from nbsymple_versions.entry import command
    sys.exit(command("python -m tools.migrate", main))
