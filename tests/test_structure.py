"""The package's shape: a staircase of layers (the core, then one package per version, each
importing only the core and the versions it builds on, then the registry, the API, the start and
end of every command (environment, entry), the two wings (runs, instruments), the paper, the
CLI), no import cycle (function-level imports included, and module paths launched by string:
`python -m M`, `python -c "from M import f"`), one definition of each word of the suite's
vocabulary, and no Python line over 120 characters. Each check is shown to catch what it looks
for."""
import ast
import functools
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "nbsymple_versions"

# each name is assigned once in the whole repository (package, benchmarks, tests)
VOCABULARY = ("PRECISIONS", "TASKS", "LETTERS", "GPU_LETTERS", "CPU_LETTERS", "FLOPS_PER_INTERACTION",
              "G_PC_KMS2_PER_MSUN", "SUN_RADIUS_KPC", "SUN_SPEED_KMS", "TIMING_SEED", "EXACT_IC_MAX_N", "NODE_VERSIONS",
              "SNAPSHOT_FORMATS", "HOST")    # HOST: LLVM's name of this CPU; a package's O(N) kernels: HOST_KERNELS


def package_modules(root: Path = ROOT / PACKAGE, name: str = PACKAGE) -> dict[str, ast.Module]:
    """{dotted module name: parsed source} for every module of the package."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = ast.parse(path.read_text(), str(path))
    return modules


def _text(node, module: str, constants: dict) -> str | None:
    """A string's text: a literal, a module-level constant by name, an f-string whose `{__name__}`
    is `module`; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = [module if isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                 and v.value.id == "__name__" else _text(v, module, {}) for v in node.values]
        return None if None in parts else "".join(parts)
    return None


def launched(tree: ast.Module, module: str) -> list[ast.AST]:
    """The import statements a module runs by string in a child interpreter: `-m M` becomes
    `import M`, `-c CODE` the imports of CODE, wherever a list or tuple holds them."""
    constants = {node.targets[0].id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.List, ast.Tuple)):
            continue
        for flag, arg in zip(node.elts, node.elts[1:]):
            flag, text = _text(flag, module, constants), _text(arg, module, constants)
            if text is None or flag not in ("-m", "-c"):
                continue
            code = f"import {text}" if flag == "-m" else text
            try:
                found += [n for n in ast.walk(ast.parse(code)) if isinstance(n, (ast.Import, ast.ImportFrom))]
            except SyntaxError:
                continue
    return found


def import_graph(modules: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, anywhere in its source (functions too, and
    those it launches by string: `launched`). `from X import y` is an edge to X.y where that is a
    module, else to X."""
    graph = {name: set() for name in modules}
    for name, tree in modules.items():
        is_package = any(other.startswith(name + ".") for other in modules)
        for node in [*ast.walk(tree), *launched(tree, name)]:
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (depth-first search)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


# Lowest first. A module may import its own layer and lower ones only. Each paper version is
# its own layer, in the paper's order, so a version package can reach the core and the
# versions it builds on, never a later version, the registry, the API, a wing, the paper or the CLI.
LAYERS = (
    ("core", "loading"),                               # loading: a command quiet while its modules load
    ("serial",), ("threaded",), ("gpu_pairwise",), ("gpu_threaded",), ("gpu_full",), ("mpi",),   # A .. F
    ("versions",),                                     # the registry: letters -> packages
    ("", "simulation", "validation"),                  # the API ("": the package's __init__, its public names)
    ("environment", "entry", "arguments"),             # how every command starts and ends (its process, its line)
    ("runs", "instruments"),                           # the two wings: runs on disk, what measures from outside
    ("paper",),
    ("cli", "__main__"),                              # __main__: the `nbsymple` script, loading cli
)
WINGS = ("runs", "instruments")                         # the only rooms that launch a module by string
VERSION_PACKAGES = ("serial", "threaded", "gpu_pairwise", "gpu_threaded", "gpu_full", "mpi")


def layer_of(module: str, layers=LAYERS) -> int:
    """The index in `layers` of a module's top-level part (the package itself is "")."""
    top = module.split(".")[1] if "." in module else ""
    for index, names in enumerate(layers):
        if top in names:
            return index
    raise AssertionError(f"{module}: its top-level name {top!r} is in no layer of tests/test_structure.py")


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """'a -> b' for every import from a lower layer to a higher one."""
    return [f"{a} -> {b}" for a in sorted(graph) for b in sorted(graph[a]) if layer_of(b, layers) > layer_of(a, layers)]


def test_every_import_runs_down_the_staircase():
    graph = import_graph(package_modules())
    assert f"{PACKAGE}.gpu_pairwise.numba_cuda" in graph[f"{PACKAGE}.gpu_pairwise.backends"]   # in functions too
    assert upward_imports(graph) == []


def test_the_version_packages_are_the_papers_and_fs():
    names = sorted(p.name for p in (ROOT / PACKAGE).iterdir() if (p / "__init__.py").exists())
    assert set(VERSION_PACKAGES) <= set(names) and "core" in names, names
    assert set(names) == {*VERSION_PACKAGES, "core", *WINGS, "paper"}, names
    modules = sorted(p.stem for p in (ROOT / PACKAGE).glob("*.py"))
    assert modules == ["__init__", "__main__", "arguments", "cli", "entry", "environment", "loading",
                       "simulation", "validation", "versions"], modules
    from nbsymple_versions.versions import TABLE
    assert tuple(v.name for v in TABLE) == VERSION_PACKAGES


def test_only_the_wings_launch_a_module_by_string():
    """The wings start the package's modules (and tools) in child interpreters; besides them only
    `environment` starts some, to ask MPICH whether it can start with the user's settings, numba
    whether it can load the threading layer named and libgomp how it reads OpenMP's settings, and
    those children import MPI (mpi4py), numba or libgomp (ctypes) and nothing of the package."""
    modules = package_modules()
    launching = sorted(name for name, tree in modules.items() if launched(tree, name))
    asks = f"{PACKAGE}.environment"
    assert launching and all(name.split(".")[1] in WINGS or name == asks for name in launching), launching
    imported = {name for node in launched(modules[asks], asks)
                for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module])}
    assert imported == {"mpi4py", "numba.np.ufunc", "importlib", "warnings", "ctypes", "json"}, imported
    graph = import_graph(modules)
    timing, job = f"{PACKAGE}.instruments.mpi_model", f"{PACKAGE}.instruments.mpi_timing"
    assert job in graph[timing]                                                  # -m M
    toolchain = f"{PACKAGE}.instruments.cpu_asm.toolchain"
    assert launched(modules[toolchain], toolchain)                               # -c, by its own __name__
    assert not launched(modules[f"{PACKAGE}.instruments.gpu_asm.toolchain"], "x")   # a -c that is no Python


def test_the_staircase_check_sees_a_module_launched_by_string(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "core").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "core" / "__init__.py"):
        init.write_text("")
    (pkg / "top.py").write_text("")
    (pkg / "core" / "x.py").write_text('import sys\nJOB = "pkg.top"\nCMD = [sys.executable, "-m", JOB]\n')
    (pkg / "core" / "y.py").write_text('CMD = ("python", "-c", f"from {__name__} import f; from pkg.top import g")\n')
    layers = (("core",), ("", "top"))
    assert upward_imports(import_graph(package_modules(pkg, "pkg")), layers) == ["pkg.core.x -> pkg.top",
                                                                                 "pkg.core.y -> pkg.top"]


def test_the_staircase_check_catches_an_upward_import(tmp_path):
    pkg = tmp_path / "pkg"
    for sub in ("core", "serial", "threaded"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "serial" / "kernels.py").write_text("from ..core import x\n")         # down: fine
    (pkg / "threaded" / "k.py").write_text("from ..serial import kernels\n")     # down: fine
    (pkg / "core" / "x.py").write_text("def f():\n    from ..threaded import k\n")   # up, inside a function
    layers = (("core",), ("serial",), ("threaded",), ("",))
    assert upward_imports(import_graph(package_modules(pkg, "pkg")), layers) == ["pkg.core.x -> pkg.threaded.k"]


def test_the_package_has_no_import_cycle():
    graph = import_graph(package_modules())
    assert f"{PACKAGE}.versions" in graph[f"{PACKAGE}.simulation"]           # the walk sees imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_catches_a_cycle(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    cycle = find_cycle(import_graph(package_modules(pkg, "pkg")))
    assert cycle == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]


@functools.lru_cache(maxsize=None)
def assigned_names(source: str) -> tuple[tuple[str, int], ...]:
    """(name, line) of every assignment to a name, or to a tuple of names, in `source` (parsed once
    per text: every word of the vocabulary reads every file)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            names = t.elts if isinstance(t, ast.Tuple) else [t]
            found += [(n.id, node.lineno) for n in names if isinstance(n, ast.Name)]
    return tuple(found)


def definitions(word: str, roots=("nbsymple_versions", "benchmarks", "tools", "tests")) -> list[str]:
    """'path:line' of every module-level or class-level assignment to `word`."""
    return [f"{path.relative_to(ROOT)}:{line}" for root in roots for path in sorted((ROOT / root).rglob("*.py"))
            for name, line in assigned_names(path.read_text()) if name == word]


@pytest.mark.parametrize("word", VOCABULARY)
def test_each_word_is_defined_once(word):
    found = definitions(word)
    assert len(found) == 1, f"{word} is defined {len(found)} times: {', '.join(found)}"


def test_the_definition_count_sees_a_second_definition(tmp_path, monkeypatch):
    (tmp_path / "one.py").write_text("PRECISIONS = ('sp',)\n")
    (tmp_path / "two.py").write_text("class K:\n    PRECISIONS, X = ('dp',), 1\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert definitions("PRECISIONS", roots=(".",)) == ["one.py:1", "two.py:2"]


def private_reaches(modules: dict[str, ast.Module]) -> list[str]:
    """'module: name' for every private name (one leading underscore) of another module of the
    package that a module imports or reads as an attribute of an imported module."""
    graph_modules = set(modules)
    found = []
    for name, tree in modules.items():
        bound = {}                                # local name -> package module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                is_package = any(other.startswith(name + ".") for other in modules)
                if node.level:
                    parts = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    if f"{base}.{a.name}" in graph_modules:
                        bound[a.asname or a.name] = f"{base}.{a.name}"
                    elif base in graph_modules and a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{name}: {base}.{a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                found.append(f"{name}: {bound[node.value.id]}.{node.attr}")
    return sorted(set(found))


def test_no_module_reaches_into_another_modules_private_names(tmp_path):
    assert private_reaches(package_modules()) == []
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("_SECRET = 1\n")
    (pkg / "b.py").write_text("from .a import _SECRET\nfrom . import a\nx = a._SECRET\n")
    assert private_reaches(package_modules(pkg, "pkg")) == ["pkg.b: pkg.a._SECRET"]


MAX_LINE = 120      # the project's convention for Python lines


def long_lines(root: Path = ROOT, paths=None) -> list[str]:
    """'path:line (length)' of every line over `MAX_LINE` characters in `paths` (relative to `root`;
    default: every .py file git tracks there)."""
    if paths is None:
        paths = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], cwd=root, capture_output=True,
                               check=True).stdout.decode().split("\0")
    return [f"{path}:{number} ({len(line)})" for path in filter(None, paths) if (root / path).is_file()
            for number, line in enumerate((root / path).read_text(encoding="utf-8").split("\n"), 1)
            if len(line) > MAX_LINE]


def test_no_tracked_python_line_is_longer_than_120_characters(tmp_path):
    """Every line of every .py file git tracks is at most 120 characters long; the check counts
    characters, not bytes, and catches a line of 121."""
    found = long_lines()
    assert found == [], f"{len(found)} lines over {MAX_LINE} characters: {', '.join(found)}"
    (tmp_path / "a.py").write_text("x = 1\n" + "#" * 121 + "\n" + "# " + "—" * 118 + "\n", encoding="utf-8")
    assert long_lines(tmp_path, ["a.py"]) == ["a.py:2 (121)"]
