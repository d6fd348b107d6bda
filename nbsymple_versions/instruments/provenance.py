"""Where a number came from: CPU model, microarchitecture and vector ISA, GPUs and driver,
library versions, threading layer, commit, and whether the CUDA simulator is on.

One module for the CLI (`nbsymple info`), the asv suite (machine names and metadata), the
paper's figures and the results files. Nothing here touches a GPU unless asked (`gpus`), and
nothing imports numba-cuda or CuPy to learn their versions.
"""
from functools import lru_cache
from importlib import metadata
import os
from pathlib import Path
import platform
import re
import subprocess

from ..core.ranks import whole_value
from ..environment import usable_cores
from ..gpu_pairwise.backends import no_driver
from ..gpu_pairwise.simulator import cuda_simulator, gpu_name

# distributions whose versions change the numbers (importlib.metadata names)
LIBRARIES = ("numpy", "numba", "llvmlite", "numba-cuda", "cupy-cuda13x", "cupy-cuda12x", "mpi4py", "mpich")
REPO = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def _cpuinfo() -> dict:
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's model name, e.g. 'AMD EPYC 9R14'."""
    info = _cpuinfo()
    return info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"


def vector_isa() -> str:
    """The widest vector instruction set the CPU offers: avx512, avx2, avx, sse4_2, sve or neon
    (else the architecture's name). Numba compiles for it, so it changes every CPU number."""
    flags = set((_cpuinfo().get("flags") or _cpuinfo().get("features") or "").split())
    for isa, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"), ("sse4_2", "sse4_2"),
                      ("sve", "sve"), ("neon", "asimd")):
        if flag in flags:
            return isa
    return platform.machine() or "unknown"


@lru_cache(maxsize=1)
def cpu_uarch() -> str:
    """The CPU's microarchitecture, as LLVM names the host CPU that numba compiles for
    ('znver4', 'znver5', 'skylake-avx512'): one ISA spans cores of very different speed. Without
    llvmlite, `<vendor>-f<family>m<model>` from /proc/cpuinfo ('amd-f25m17'); else 'unknown'."""
    try:
        import llvmlite.binding as llvm
        name = slug(llvm.get_host_cpu_name())
        if name and name != "generic":
            return name
    except Exception:   # noqa: BLE001 - no llvmlite or no LLVM: fall back to /proc/cpuinfo
        pass
    info = _cpuinfo()
    vendor = {"authenticamd": "amd", "genuineintel": "intel"}.get(info.get("vendor_id", "").lower(),
                                                                    slug(info.get("vendor_id", "")))
    family, model = info.get("cpu family", ""), info.get("model", "")
    if vendor and family.isdigit() and model.isdigit():
        return f"{vendor}-f{family}m{model}"
    return "unknown"


def library_versions() -> dict:
    """{distribution: version or None} for Python and every library in LIBRARIES."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def threading() -> tuple[str, int]:
    """(numba's threading layer, its thread count), after starting the layer with a tiny
    parallel kernel (numba names its layer only once one has run). The CPUs this process may run
    on are left as they were: libgomp, loading, binds the thread that loads it to its first place
    (OMP_PROC_BIND, OMP_PLACES; a hunt: the machine was then named "1of2cores", and the asv that
    `make bench` starts next inherited the one CPU, B timed on it with one thread)."""
    import numba
    import numpy as np

    from ..threaded.kernels import THREADED
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    try:
        THREADED.axpy(np.zeros(2), np.zeros(2), 0.0)
    finally:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "unknown"
    return layer, numba.get_num_threads()


def gpus() -> tuple[list[str], str]:
    """(GPU names, a sentence): what numba-cuda sees. Touches the driver, never at import."""
    if cuda_simulator():
        return ["CUDA simulator"], "CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    if no_driver():
        return [], "none (no CUDA driver library loads)"
    try:
        from numba import cuda
    except ImportError:
        return [], "numba-cuda not installed (pip install 'nbsymple-versions[gpu]')"
    try:
        if not cuda.is_available():
            return [], "none seen by numba-cuda"
        names = [gpu_name(g) for g in cuda.gpus]
    except Exception as e:   # noqa: BLE001 - a broken driver is information here, not a crash
        return [], f"none usable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
    return names, ", ".join(f"{i}: {n}" for i, n in enumerate(names))


def cuda_driver() -> str | None:
    """The CUDA driver's version ('13.0'), or None without a GPU (or in the simulator)."""
    if cuda_simulator() or no_driver():
        return None
    try:
        from numba import cuda
        if not cuda.is_available():
            return None
        major, minor = cuda.cudadrv.driver.driver.get_version()
        return f"{major}.{minor}"
    except Exception:   # noqa: BLE001 - no driver: nothing to record
        return None


def slug(text: str) -> str:
    """Lower-case words joined by hyphens, for names of machines and files."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def machine_name(gpu_names: list[str] | None = None) -> str:
    """The name results and figures give this machine: what changes the numbers and nothing
    else, `<cpu>-<uarch>-<isa>-<cores>cores-<gpus>` (e.g. `amd-epyc-znver4-avx512-2cores-nogpu`,
    `amd-epyc-9r14-znver4-avx512-16cores-1x-nvidia-h200`), `<k>of<n>cores` where this process may run
    on k of the machine's n (`taskset`, a batch job's cpuset: numba then starts k threads, and B's
    times are k cores' times), `-<k>threads` when NBSYMPLE_BENCH_THREADS runs fewer threads than
    that; BENCH_MACHINE overrides it. `gpu_names` defaults to `gpus()`."""
    override = os.environ.get("BENCH_MACHINE", "").strip()
    if override:
        return override
    names = gpus()[0] if gpu_names is None else gpu_names
    models = sorted(set(names))
    gpu_slug = "-".join(f"{names.count(m)}x-{slug(m)}" for m in models) or "nogpu"
    cores, usable = os.cpu_count() or 0, usable_cores()
    name = f"{slug(cpu_model())}-{cpu_uarch()}-{vector_isa()}-{cores_words(usable, cores, 'of')}cores-{gpu_slug}"
    threads = whole_value(os.environ.get("NBSYMPLE_BENCH_THREADS"))       # '+2' and '02' as 2
    return name + (f"-{threads}threads" if threads is not None and threads != usable else "")


def cores_words(usable: int, cores: int, of: str) -> str:
    """"n", or "k<of>n" where this process may run on k of the machine's n logical CPUs."""
    return f"{cores}" if usable >= cores else f"{usable}{of}{cores}"


_PINNED: dict = {}      # root -> the commit as `pin_commit` found it


def pin_commit(root: Path = REPO) -> str:
    """Read the checkout's commit now and let `git_commit` answer with it for the rest of the
    process. A command that rewrites tracked files (`nbsymple paper` into plots/) pins it before
    it writes anything, so that '+dirty' names only changes that existed before it ran."""
    _PINNED.pop(root, None)
    _PINNED[root] = git_commit(root)
    return _PINNED[root]


def git_commit(root: Path = REPO) -> str:
    """Short commit of the checkout at `root`, with '+dirty' where tracked files differ from it or
    git cannot say ('unknown' outside git); the pinned one where `pin_commit` pinned it. Asked of
    the checkout the files are in, whatever GIT_* variables name (a hunt: GIT_DIR recorded another
    repository's commit, GIT_INDEX_FILE=/dev/null a changed checkout as clean, GIT_CONFIG_PARAMETERS
    of garbage no commit at all)."""
    if root in _PINNED:
        return _PINNED[root]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        head = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=root, capture_output=True,
                              text=True, errors="replace", timeout=10, env=env)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, errors="replace", timeout=10, env=env)
        return head.stdout.strip() + ("+dirty" if dirty.returncode != 0 or dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def code_version() -> str:
    """The code that runs: 'commit 1a2b3c4d' (`git_commit`) in a git checkout, else the package's
    version ('nbsymple-versions 0.1.0': an installed copy)."""
    commit = git_commit()
    if commit != "unknown":
        return f"commit {commit}"
    from .. import __version__
    return f"nbsymple-versions {__version__}"


def describe(gpu: bool = True) -> dict:
    """Everything above in one dict (with `gpu=False` the driver is not asked)."""
    layer, threads = threading()
    names, gpu_text = gpus() if gpu else ([], "not asked")
    return {"cpu": cpu_model(), "uarch": cpu_uarch(), "isa": vector_isa(), "arch": platform.machine(),
            "cores": os.cpu_count(), "usable_cores": usable_cores(), "threading_layer": layer, "threads": threads,
            "gpus": names,
            "gpu_description": gpu_text, "cuda_driver": cuda_driver() if gpu else None,
            "cuda_simulator": cuda_simulator(),
            "libraries": library_versions(), "commit": git_commit(), "host": platform.node() or "unknown",
            "machine": machine_name(names if gpu else [])}


def machine_line() -> str:
    """One line for a table's caption: CPU, microarchitecture, ISA, cores, libraries, threading."""
    d = describe(gpu=False)
    lib = d["libraries"]
    uarch = f"{d['uarch']}, " if d.get("uarch") else ""
    cores = cores_words(d.get("usable_cores") or d["cores"], d["cores"], " of ")
    return (f"{d['cpu']} ({uarch}{d['isa']}), {cores} logical CPUs; Python {lib['python']}, numpy {lib['numpy']}, "
            f"numba {lib['numba']} (threading layer {d['threading_layer']}, {d['threads']} "
            f"thread{'' if d['threads'] == 1 else 's'})")
