"""The tools that turn each kernel into SASS without a GPU: numba-cuda's `compile_ptx` for the
numba kernels, NVRTC for the CUDA C of the CuPy backend, `ptxas` to assemble and `nvdisasm`
to disassemble (the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-nvdisasm; no driver needed).

The kernels, by the names `--keep`, `--json` and the benchmarks use (`KINDS`): C's tiled and
plain kernels, and E's fused ones (`fused` for the tiled one, `fused_plain`).
"""
from dataclasses import asdict, dataclass
from functools import lru_cache
import hashlib
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

from ...gpu_full.fused import GALAXY
from ...gpu_pairwise.options import KERNEL_KINDS, PAIRWISE, entry_name
from .. import code_cache
from .sass import split_functions

# label -> (kernel kind, fused with E's Galaxy); the first kind (tiled) is the default
KINDS = {**{kind: (kind, False) for kind in KERNEL_KINDS},
         **{(GALAXY.name if kind == KERNEL_KINDS[0] else f"{GALAXY.name}_{kind}"): (kind, True)
            for kind in KERNEL_KINDS}}


class ToolMissing(RuntimeError):
    """ptxas or nvdisasm (or the CUDA C compiler) is not installed: one sentence says how to get it."""


class CompileFailed(RuntimeError):
    """A compiler or tool refused (e.g. a target it does not support): its first lines say why."""


def tool(name: str) -> str:
    """Path of `ptxas` or `nvdisasm`: from the nvidia-cuda-nvcc / nvidia-cuda-nvdisasm wheels
    (site-packages/nvidia/cu13/bin), else from PATH."""
    try:
        import nvidia
        for root in nvidia.__path__:
            for sub in sorted(Path(root).glob("cu*/bin")):
                if (sub / name).is_file() and os.access(sub / name, os.X_OK):
                    return str(sub / name)
    except ImportError:
        pass
    found = shutil.which(name)
    if found:
        return found
    wheel = "nvidia-cuda-nvcc" if name == "ptxas" else "nvidia-cuda-nvdisasm"
    raise ToolMissing(f"{name} not found: pip install {wheel} (the `test` extra installs it)")


def _run(args: list[str]) -> str:
    p = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=300)
    if p.returncode != 0:
        raise CompileFailed(f"{Path(args[0]).name} failed: {(p.stderr or p.stdout).strip()[:2000]}")
    return p.stdout + p.stderr


@dataclass
class Resources:
    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    shared: int


_PTXAS_FUNCTION = re.compile(r"Function properties for (\S+)")
_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PTX_HEADER = re.compile(r"^\.(?:version|target|address_size)\b.*$", re.M)
# a module-scope declaration: a directive at the start of a line (kernel, device function,
# global, shared or constant variable) and the name it declares, before '(', '[', ';', '=' or
# the end of the line; a device function's return value, `.func (.param ...) NAME`, is skipped
_DECLARATION = re.compile(r"^\.(?:visible|extern|weak|common|entry|func|global|shared|const)\b[^\n(]*?"
                          r"(?:\(\s*\.param[^)]*\)\s*)?([A-Za-z_$][\w$]*)[ \t]*(?:\[[^\]\n]*\])?[ \t]*(?:[(;=]|$)",
                          re.M)


def assemble(ptx: str, arch: str, workdir: Path) -> tuple[dict[str, Resources], dict[str, str]]:
    """PTX -> (resources per entry function from `ptxas -v`, SASS text per function)."""
    return assemble_modules([ptx], arch, workdir)[0]


def assemble_modules(modules: list[str], arch: str, workdir: Path) -> list[tuple[dict[str, Resources], dict[str, str]]]:
    """`_assemble_modules`, kept once per machine where NUMBA_CACHE_DIR names a folder
    (`code_cache`) under the modules' PTX, the arch, ptxas' and nvdisasm's files and this
    module's and `sass`'s sources: the gate's counts of two trees assemble the same PTX."""
    key = {"ptx": hashlib.sha256("\0".join(modules).encode()).hexdigest(), "arch": arch,
           "tools": [code_cache.file_identity(tool(name)) for name in ("ptxas", "nvdisasm")],
           "sources": code_cache.sources_digest("instruments/gpu_asm/toolchain.py", "instruments/gpu_asm/sass.py")}
    with code_cache.entry("sass", key) as kept:
        if (assembled := _kept_assembly(kept.value, len(modules))) is None:
            assembled = _assemble_modules(modules, arch, workdir)
            kept.keep([[{name: asdict(r) for name, r in resources.items()}, sass] for resources, sass in assembled])
        return assembled


def _kept_assembly(value, count: int) -> list | None:
    """A kept entry's [(resources, SASS)] of `count` modules, or None where it is not one."""
    if not (isinstance(value, list) and len(value) == count):
        return None
    assembled = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], dict) and isinstance(item[1], dict)
                and all(isinstance(r, dict) and set(r) == set(Resources.__dataclass_fields__)
                        and all(type(v) is int for v in r.values()) for r in item[0].values())
                and all(isinstance(text, str) for text in item[1].values())):
            return None
        assembled.append(({name: Resources(**r) for name, r in item[0].items()}, item[1]))
    return assembled


def _assemble_modules(modules: list[str], arch: str, workdir: Path) -> list[tuple[dict, dict]]:
    """`assemble` of each PTX module, by one `ptxas` and one `nvdisasm` for all of them: each
    `nvdisasm` takes 0.3 s of start-up whatever it disassembles (the 15 modules of `gpu-asm`,
    one call each, were 5 s of a count's 15 s of CPU on a 2-core AMD EPYC Zen 5).

    The modules are joined into one: each module's own names (kernels, device functions, global
    and shared variables) take the suffix `__module<i>` there, and lose it in what is returned.
    ptxas compiles every function on its own, so a kernel's SASS is what its module alone
    gives, but for the numbers nvdisasm gives its labels and the CUDA library's internal
    functions. Modules whose headers (`.version`, `.target`) differ are joined apart."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, ptx in enumerate(modules):
        groups.setdefault(tuple(_PTX_HEADER.findall(ptx)), []).append(i)
    out: list = [None] * len(modules)
    for header, members in groups.items():
        joined = "\n".join([*header, *(_renamed(modules[i], _suffix(i)) for i in members)]) + "\n"
        resources, sass = _assemble_one(joined, arch, workdir)
        for i in members:
            suffix = _suffix(i)
            out[i] = ({name[:-len(suffix)]: r for name, r in resources.items() if name.endswith(suffix)},
                      {name[:-len(suffix)]: text.replace(suffix, "") for name, text in sass.items()
                       if name.endswith(suffix)})
    return out


def _suffix(i: int) -> str:
    return f"__module{i}"


def _renamed(ptx: str, suffix: str) -> str:
    """`ptx` without its header, each name it declares at module scope followed by `suffix`."""
    body = _PTX_HEADER.sub("", ptx)
    names = set(_DECLARATION.findall(body))
    if not names:
        return body
    pattern = re.compile(r"(?<![\w$%.])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                         + r")(?![\w$])")
    return pattern.sub(lambda m: m.group(1) + suffix, body)


def _assemble_one(ptx: str, arch: str, workdir: Path) -> tuple[dict[str, Resources], dict[str, str]]:
    stem = f"k{len(list(workdir.iterdir()))}"
    src, cubin = workdir / f"{stem}.ptx", workdir / f"{stem}.cubin"
    src.write_text(ptx)
    log = _run([tool("ptxas"), f"-arch={arch}", "-O3", "-v", str(src), "-o", str(cubin)])
    resources, current = {}, None
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            current = m.group(1)
        elif m := _PTXAS_FUNCTION.search(line):
            current = m.group(1)
        elif current and "bytes stack frame" in line:
            nums = [int(v) for v in re.findall(r"(\d+) bytes", line)]
            resources[current] = Resources(0, nums[1], nums[2], nums[0], 0)
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            r = resources.setdefault(current, Resources(0, 0, 0, 0, 0))
            r.registers = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            r.shared = int(s.group(1)) if s else 0
    sass = _run([tool("nvdisasm"), "-c", str(cubin)])
    return resources, split_functions(sass)


def compute_capability(arch: str) -> tuple[int, int]:
    """'sm_90' -> (9, 0)."""
    m = re.fullmatch(r"sm_([0-9]+)([0-9])", arch)          # ASCII digits: "sm_９０" reached ptxas (a hunt)
    if not m:
        raise ValueError(f"unknown architecture {arch!r}; expected sm_XY such as sm_90")
    return int(m.group(1)), int(m.group(2))


def check_arch(arch: str) -> None:
    """Refuse, before anything is compiled or written, a target the installed CUDA compilers
    (NVRTC, which numba-cuda also compiles through) cannot generate code for, or numba-cuda's
    simulator in the place of its compiler (NUMBA_ENABLE_CUDASIM=1: it compiles nothing)."""
    from numba.cuda.core import config
    if config.ENABLE_CUDASIM:
        raise ToolMissing("numba-cuda's compiler is needed to count the kernels, and NUMBA_ENABLE_CUDASIM=1 "
                          "puts its simulator in its place; unset NUMBA_ENABLE_CUDASIM")
    cc = compute_capability(arch)
    try:
        from numba.cuda.cudadrv import nvrtc
        supported = list(nvrtc.get_supported_ccs())
    except ImportError as e:
        raise ToolMissing(f"NVRTC not found: pip install 'numba-cuda[cu13]' (the `test` extra installs it): {e}") \
            from None
    except Exception:           # the list cannot be read: let the compilers themselves decide
        return
    if supported and cc not in supported:
        names = ", ".join(f"sm_{a}{b}" for a, b in supported)
        raise CompileFailed(f"architecture {arch} is not supported by the installed CUDA compilers "
                            f"(they support {names})")


def cuda_c_ptx(precision: str, tile: int, arch: str) -> str:
    """PTX of the CuPy backend's module for one precision, with E's fused kernels (`nbody.cu`
    and `gpu_full/fused.cu`), compiled by NVRTC with the options the backend gives CuPy. NVRTC
    needs no driver; `cuda.bindings` (installed with numba-cuda[cu13]) loads the same libnvrtc
    as cupy-cuda13x."""
    from ...gpu_pairwise import cupy_cuda
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise ToolMissing(f"NVRTC not found: pip install 'numba-cuda[cu13]' (the `test` extra installs it): {e}") \
            from None

    def check(result):
        err, *rest = result
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileFailed(f"NVRTC: {nvrtc.nvrtcGetErrorString(err)[1].decode()}")
        return rest[0] if len(rest) == 1 else rest

    major, minor = compute_capability(arch)
    program = check(nvrtc.nvrtcCreateProgram(cupy_cuda.source(GALAXY).encode(), b"nbody.cu", 0, [], []))
    try:
        opts = [o.encode() for o in (*cupy_cuda.options(precision, tile, GALAXY), f"-arch=compute_{major}{minor}")]
        err, = nvrtc.nvrtcCompileProgram(program, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = check(nvrtc.nvrtcGetProgramLogSize(program))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(program, log)
            raise CompileFailed(f"NVRTC could not compile nbody.cu ({precision}, {arch}): "
                                f"{log.decode(errors='replace').strip()[:2000]}")
        size = check(nvrtc.nvrtcGetPTXSize(program))
        ptx = b" " * size
        check((nvrtc.nvrtcGetPTX(program, ptx)[0], None))
    finally:
        nvrtc.nvrtcDestroyProgram(program)
    return ptx.rstrip(b"\0 ").decode()


class TargetDevice:
    """Stands in for `numba.cuda.get_current_device()` while compiling: without a GPU, compiling
    a kernel that calls a `cuda.jit(device=True)` function asks the current device's compute
    capability (numba-cuda 0.30), although `compile_ptx` is told the target already."""

    def __init__(self, cc):
        self.compute_capability = cc


@lru_cache(maxsize=None)
def _numba_compilers() -> dict:
    """numba-cuda's compilers as part of a key: the versions, and NVVM's and libdevice's files."""
    import llvmlite
    import numba
    import numba_cuda
    from numba.cuda.cudadrv.libs import get_cuda_paths
    paths = get_cuda_paths()
    return {"versions": [numba.__version__, numba_cuda.__version__, llvmlite.__version__, sys.version],
            "nvvm": [code_cache.file_identity(paths[name].info) for name in ("nvvm", "libdevice")
                     if paths.get(name) and paths[name].info]}


def _numba_key(precision: str, kind: str, tile: int, arch: str) -> dict:
    """What a numba-cuda kernel's PTX depends on (`code_cache`): its sources (`core/`, C's and
    E's packages, this file), the kernel, the compilers, and every NUMBA_ setting but the cache's
    folder and the CPU threads."""
    sources = code_cache.sources_digest("core", "gpu_pairwise", "gpu_full", "instruments/gpu_asm/toolchain.py")
    return {"sources": sources, "kernel": [precision, kind, tile, arch], **_numba_compilers(),
            "settings": sorted([k, v] for k, v in os.environ.items() if k.startswith("NUMBA_")
                               and k not in ("NUMBA_CACHE_DIR", "NUMBA_NUM_THREADS"))}


def numba_ptx(precision: str, kind: str, tile: int, arch: str) -> str:
    """PTX of one numba-cuda kernel (`gpu_pairwise/numba_cuda.py`; E's from `gpu_full`) for the
    target, compiled once per machine where NUMBA_CACHE_DIR names a folder (`code_cache`)."""
    with code_cache.entry("ptx", _numba_key(precision, kind, tile, arch)) as kept:
        if not isinstance(kept.value, str):
            kept.keep(_compile_numba_ptx(precision, kind, tile, arch))
        return kept.value


def _compile_numba_ptx(precision: str, kind: str, tile: int, arch: str) -> str:
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda
    from numba.cuda.cudadrv.error import CCSupportError

    from ...gpu_pairwise import numba_cuda
    cc = compute_capability(arch)
    kernel, fused = KINDS[kind]
    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: TargetDevice(cc)
    try:
        source = numba_cuda.kernel_source(precision, tile, kernel, GALAXY if fused else None)
        ptx, _ = cuda.compile_ptx(source.function, source.signature, cc=cc, fastmath=source.fastmath)
    except CCSupportError as e:
        raise CompileFailed(f"numba-cuda cannot compile for architecture {arch}: {e}") from None
    finally:
        dispatcher.get_current_device = saved
    return ptx


def entry_of(kind: str) -> str:
    """The CUDA C entry name of `kind`'s kernel (`nbody.cu`, `fused.cu`)."""
    kernel, fused = KINDS[kind]
    return entry_name(kernel, GALAXY.name if fused else PAIRWISE)
