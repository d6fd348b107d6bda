"""`nbsymple gpu-asm`: the GPU kernels' machine code, counted without a GPU.

Every kernel of both GPU backends (numba-cuda's Python kernels, compiled with
`numba.cuda.compile_ptx`; the CUDA C that the CuPy backend runs, compiled by NVRTC) x precision
(sp, dp, dsp) x kind (tiled, plain; E's fused = tiled with the Galaxy, fused_plain) is compiled
to PTX for the target, assembled by `ptxas` and disassembled by `nvdisasm`. In the SASS, the
innermost source loop is the backward branch whose body holds the reciprocal square roots
(`MUFU.RSQ`, one per pair interaction); its instructions divided by its `MUFU.RSQ` count are
the instructions issued per interaction, and an issue model predicts interactions/s. Files:
  toolchain.py  compilers, assembler and disassembler (all modules in one call); the kernels by
                name (`KINDS`)
  sass.py       SASS parsing: instructions, loops, the innermost loop and its mix
  model.py      device figures (`DEVICES`), the issue model, occupancy, one kernel's count
  report.py     every kernel counted (`count_all`), the table and JSON (`main`)
"""
from .model import DEVICES, clocks_per_interaction, count, occupancy  # noqa: F401
from .report import count_all, main, table  # noqa: F401
from .sass import MIX, innermost_loop, mix  # noqa: F401
from .toolchain import (KINDS, CompileFailed, check_arch, TargetDevice, ToolMissing,  # noqa: F401
                        assemble, assemble_modules, cuda_c_ptx, numba_ptx)
