"""The gate's deterministic tier: machine instructions per interaction of every kernel of a tree,
counted for fixed targets, so that two counts of the same code agree on every machine whatever
its load (the timing tier's noise is 4-20 % on a shared machine, and 150 % under contention).

- CPU: `nbsymple cpu-asm`'s fixed targets (`cpu_asm.FIXED_TARGETS`: an AVX2, an AVX-512 and a
  Zen 4 target), every CPU kernel (pairwise sp, dp, dsp; galactic; axpy), per interaction or
  per element;
- GPU: `nbsymple gpu-asm` for sm_90 (the H200), every kernel of both backends, where the CUDA
  assembler and disassembler are installed (the test extra installs them).

A tree is counted in a subprocess that imports its own package (PYTHONPATH), so BASE is counted
with BASE's kernels and compilers' settings; a tree from before `cpu_asm` or without the CUDA
tools has no counts of that kind, and the tier says so. The children keep the code they compile
in the suite's cache folder (`instruments/code_cache.py`, keyed by the sources' digest), so
BASE's code, unchanged between gates, and GPU code that HEAD did not touch are compiled once. A
count that rises at all (`TOLERANCE` = 0) is a regression: the same code gives the same count, and
one more instruction a trip moves a count by as little as 0.4 % (a GPU loop of 228 instructions a
trip; a galactic loop's 120 to 173: 0.6-0.8 %; znver4's dp pairwise loop, 99: 1.0 %), which a
tolerance of 1 % let pass.
"""
import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

from nbsymple_versions.entry import child_process

TOLERANCE = 0.0          # any rise (a ratio above 1): a count is exact, the same code's the same
GPU_ARCH = "sm_90"

# run in a subprocess with the tree's package first on the path; prints {name: count} and, for a
# kind it could not count, {"missing": {kind: why}}
_COUNT = r'''
import importlib, importlib.machinery, json, sys
# the tree's package alone: where the path gives it, the checkout's editable install (a finder after the
# path) would lend it the modules it lacks, and count HEAD's code as BASE's (a hunt)
if importlib.machinery.PathFinder.find_spec("nbsymple_versions") is not None:
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
counts, missing = {}, {}


def instrument(name):
    """The tree's counting module: under instruments/ since 8f81b92, at the package's root before (a hunt:
    every BASE before it gave no counts, and the gate no verdict)."""
    try:
        return importlib.import_module(f"nbsymple_versions.instruments.{name}")
    except ModuleNotFoundError as e:     # that module itself absent; a broken import inside it is its own error
        if e.name not in ("nbsymple_versions.instruments", f"nbsymple_versions.instruments.{name}"):
            raise
        return importlib.import_module(f"nbsymple_versions.{name}")


try:
    cpu_asm = instrument("cpu_asm")
    rows = cpu_asm.count_all(cpu_asm.FIXED_TARGETS)
except ImportError as e:
    missing["cpu"] = f"its package has no cpu_asm ({e})"
except Exception as e:     # kernels that do not compile: HEAD's are a regression (`gate.counts_tier`), not a crash
    missing["cpu"] = f"{type(e).__name__}: {e}"
else:
    for r in rows:
        counts[f"cpu-asm {r.target} {r.kernel} {r.precision}"] = r.instructions_per_interaction
try:
    gpu_asm = instrument("gpu_asm")
    rows = gpu_asm.count_all(sys.argv[1])
except ImportError as e:
    missing["gpu"] = f"its package has no gpu_asm ({e})"
except Exception as e:     # the CUDA tools missing, or a compiler this tree's code does not suit
    missing["gpu"] = f"{type(e).__name__}: {e}"
else:
    for r in rows:
        counts[f"gpu-asm {r.arch} {r.backend} {r.kernel} {r.precision}"] = r.instructions_per_interaction
print(json.dumps({"counts": counts, "missing": missing}))
'''


class CountsFailed(RuntimeError):
    """A tree's kernels could not be counted (one sentence)."""


def count_trees(*trees: Path, arch: str = GPU_ARCH, names=None) -> list[tuple[dict, dict]]:
    """({name: instructions per interaction}, {kind: why not counted}) of the package in each
    of `trees`, counted at once (a process per tree: the gate's two counts take the time of one
    on two or more cores). Should one fail (or Ctrl-C, SIGTERM), the others are ended with it
    (`entry.child_process`). `names`: each tree's, in what is said (default its folder's name)."""
    from benchmarks.package import kernel_cache_folder
    command = [sys.executable, "-c", _COUNT, arch]
    env = dict(os.environ, NUMBA_CACHE_DIR=kernel_cache_folder())     # the suite's: code compiled once
    with ExitStack() as started:
        children = [started.enter_context(child_process(command, cwd=tree, env=dict(env, PYTHONPATH=str(tree)),
                                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                                        errors="replace"))
                    for tree in trees]
        return [_counts(name, *child.communicate(), child.returncode)
                for name, child in zip(names or [tree.name for tree in trees], children)]


def _counts(name: str, stdout: str, stderr: str, returncode: int) -> tuple[dict, dict]:
    if returncode != 0:
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        raise CountsFailed(f"the kernels of {name} could not be counted ({last})")
    data = json.loads(stdout.strip().splitlines()[-1])
    return data["counts"], data["missing"]


def compare(base: dict, head: dict, tolerance: float = TOLERANCE) -> tuple[list, list]:
    """(rows, risen): rows (name, base, head, ratio) of every count both sides have, and the
    names whose count rose by more than `tolerance` (by default, at all)."""
    rows, risen = [], []
    for name in sorted(set(base) & set(head)):
        b, h = base[name], head[name]
        ratio = h / b if b else float("inf") if h else 1.0
        rows.append((name, b, h, ratio))
        if ratio > 1 + tolerance:
            risen.append(name)
    return rows, risen


def table(rows, risen, out=None):
    """The compared counts, to `out` (default: sys.stdout as it is now, the command's, not the one
    at import); + marks a rise, - a fall."""
    out = sys.stdout if out is None else out
    print(f"{'':2}{'BASE':>8} {'HEAD':>8} {'ratio':>6}  instructions per interaction", file=out)
    for name, b, h, ratio in rows:
        mark = "+" if name in risen else "-" if ratio < 1 - TOLERANCE else " "
        print(f"{mark:2}{b:8.4f} {h:8.4f} {ratio:6.3f}  {name}", file=out)
