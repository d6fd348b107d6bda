"""Compile the CPU kernels of `serial/kernels.py` (version A's serial build, the same sources B
threads) for a target CPU and return their assembly; and find llvm-mca.

Each target is compiled in a child process of its own, because numba reads its target CPU when
it is imported. A fixed target (`FIXED_TARGETS`) gets `NUMBA_CPU_NAME=<target>` with
`NUMBA_CPU_FEATURES=""` (the named CPU's own features; with the name alone numba keeps the
host's), optimisation level 3 and no Intel SVML, and no other `NUMBA_*` setting of the caller:
its code depends only on numba and llvmlite, not on the machine. The host (`"host"`) is
compiled with numba's defaults for this machine's CPU (none of the caller's `NUMBA_*` either).
Every kernel is compiled with an explicit signature, the array layouts the pipelines pass
(contiguous rows), so a target CPU need not be able to run the code.
"""
from contextlib import ExitStack
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

from ...entry import child_process
from .. import code_cache

FIXED_TARGETS = ("haswell", "skylake-avx512", "znver4")
HOST = "host"
TARGETS = (HOST, *FIXED_TARGETS)

# (kernel, precision) in the order of the report; the O(N) kernels are float64 ("dp")
KERNELS = (("pairwise", "sp"), ("pairwise", "dp"), ("pairwise", "dsp"), ("galactic", "dp"), ("axpy", "dp"))


class CompileFailed(RuntimeError):
    """The child that compiles a target failed: its last lines say why."""


def _signature(kernel: str, precision: str):
    from numba import float32, float64, int64, void
    if kernel == "pairwise":        # x, y, z, xl, yl, zl, m, eps2, start, ax, ay, az
        real = float32 if precision in ("sp", "dsp") else float64
        return void(*[real[::1]] * 7, real, int64, *[float64[::1]] * 3)
    if kernel == "galactic":        # x, y, z, ax, ay, az, length_scale, accel_scale
        return void(*[float64[::1]] * 6, float64, float64)
    return void(float64[::1], float64[::1], float64)      # axpy: y, x, h


def print_assembly() -> None:
    """In the child: compile every kernel of `KERNELS` for the CPU numba was started for and print
    {"cpu": LLVM's name of it, "assembly": {"<kernel>_<precision>": text}} as JSON on stdout."""
    import llvmlite.binding as llvm
    from numba.core import config

    from ...serial.kernels import SERIAL as kernels
    assembly = {}
    for kernel, precision in KERNELS:
        dispatcher = kernels.pairwise[precision] if kernel == "pairwise" else getattr(kernels, kernel)
        signature = _signature(kernel, precision)
        dispatcher.compile(signature)
        assembly[f"{kernel}_{precision}"] = dispatcher.inspect_asm(signature.args)
    cpu = config.CPU_NAME or llvm.get_host_cpu_name()
    json.dump({"cpu": cpu, "assembly": assembly}, sys.stdout)


def environment(target: str, host_cpu: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment for `target` (see the module's docstring). `host_cpu`: the
    NUMBA_CPU_NAME and NUMBA_CPU_FEATURES to compile the host target with instead of numba's
    defaults (the code a caller timed on this core, compiled for another CPU)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(TARGETS)}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    root = str(Path(__file__).resolve().parents[2])          # the package importable from any folder
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (root, env.get("PYTHONPATH"))))
    if target != HOST:
        env.update(NUMBA_CPU_NAME=target, NUMBA_CPU_FEATURES="", NUMBA_OPT="3", NUMBA_DISABLE_INTEL_SVML="1")
    elif host_cpu:
        env.update({k: v for k, v in host_cpu.items() if k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")})
    return env


def _fixed_key(target: str) -> dict:
    """What a fixed target's assembly depends on (`code_cache`): the sources the kernels compile
    from (`core/`, the serial and threaded packages, this file), numba's, llvmlite's and Python's
    versions; no setting of the caller reaches its child (`environment`)."""
    import llvmlite
    import numba
    return {"sources": code_cache.sources_digest("core", "serial", "threaded", "instruments/cpu_asm/toolchain.py"),
            "target": target, "versions": [numba.__version__, llvmlite.__version__], "python": sys.version}


def compile_targets(targets, host_cpu: dict[str, str] | None = None) -> dict[str, tuple[str, dict[str, str]]]:
    """target -> (LLVM's CPU name, {"<kernel>_<precision>": assembly}). A fixed target is compiled
    once per machine where NUMBA_CACHE_DIR names a folder (`code_cache`); the others, one child per
    target, side by side (the host's with `host_cpu`, as `environment` says). However this ends (an
    error, a timeout, Ctrl-C, SIGTERM: `entry.Terminated`), no child is left running
    (`entry.child_process`)."""
    with ExitStack() as held:           # the entries' locks, taken in one order by every process
        kept = {t: held.enter_context(code_cache.entry("x86", _fixed_key(t)))
                for t in FIXED_TARGETS if t in targets}
        missing = [t for t in targets if t not in kept or not _assembly(kept[t].value)]
        compiled = _compile_in_children(missing, host_cpu)
        for target in missing:
            if target in kept:
                kept[target].keep(list(compiled[target]))
        return {t: compiled[t] if t in compiled else tuple(kept[t].value) for t in targets}


def _assembly(value) -> bool:
    """Whether a kept value is [cpu, {"<kernel>_<precision>": assembly}] for every kernel."""
    return (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)
            and all(isinstance(value[1].get(f"{k}_{p}"), str) for k, p in KERNELS))


def _compile_in_children(targets, host_cpu=None) -> dict[str, tuple[str, dict[str, str]]]:
    command = [sys.executable, "-c", f"from {__name__} import print_assembly; print_assembly()"]
    done = {}
    with ExitStack() as started:
        children = {t: started.enter_context(child_process(command, env=environment(t, host_cpu),
                                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                                           errors="replace"))
                    for t in targets}
        for target, child in children.items():
            out, err = child.communicate(timeout=600)
            if child.returncode != 0:
                raise CompileFailed(f"compiling the CPU kernels for {target} failed: "
                                    f"{err.strip().splitlines()[-1] if err.strip() else child.returncode}")
            result = json.loads(out)
            done[target] = (result["cpu"], result["assembly"])
    return done


def llvm_mca() -> tuple[str, int] | None:
    """(path, LLVM major version) of llvm-mca on PATH (`llvm-mca`, else the newest `llvm-mca-NN`),
    or None."""
    path = shutil.which("llvm-mca")
    if path is None:
        versioned = sorted({p.name for d in os.get_exec_path() if os.path.isdir(d)
                            for p in Path(d).glob("llvm-mca-[0-9]*")}, key=lambda n: int(n.rsplit("-", 1)[1]))
        path = shutil.which(versioned[-1]) if versioned else None
    if path is None:
        return None
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True, errors="replace", timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"LLVM version (\d+)", text)
    return path, int(m.group(1)) if m else 0
