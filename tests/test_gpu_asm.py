"""The GPU kernels' machine code, without a GPU (`nbsymple gpu-asm`), and the plain kernels.

Every kernel of both backends (numba-cuda's Python kernels and the CuPy backend's CUDA C) is
compiled for the H200 (sm_90), assembled by ptxas and disassembled by nvdisasm (the test
extra's wheels), once per session (~10 s of the run). The instructions its innermost source loop
issues per pair interaction are the kernel's cost on an issue-bound GPU: each tiled numba kernel
must stay within 1.15x of the tiled CUDA C kernel of its precision, a bound shown to catch the
`range`-loop kernel numba-cuda makes of a straightforward tile loop. No kernel spills; the
float32 pairwise kernels hold no float64 instruction. The plain kernels (global memory, no
shared tile, no barrier) are checked against the tiled ones in the simulator, in a child
process (`tests/gpu_plain_sim_checks.py`).
"""
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from nbsymple_versions.instruments import gpu_asm
from nbsymple_versions.instruments.gpu_asm.sass import instructions
from nbsymple_versions.core.vocabulary import PRECISIONS
from nbsymple_versions.gpu_pairwise.options import BACKENDS

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
PARITY = 1.15          # numba / CUDA C instructions per interaction, tiled kernels


@pytest.fixture(scope="module")
def real_compiler():
    """numba-cuda compiles real kernels in this process (not under its simulator)."""
    from numba.cuda.core import config
    if config.ENABLE_CUDASIM:
        pytest.skip("NUMBA_ENABLE_CUDASIM is set in this process: no real compiler")


@pytest.fixture(scope="module")
def counted(real_compiler, tmp_path_factory):
    """Every kernel of both backends for sm_90 at tile 256, its SASS kept."""
    keep = tmp_path_factory.mktemp("sass")
    rows = gpu_asm.count_all("sm_90", 256, keep=keep)
    print(gpu_asm.table(rows))
    return rows, keep


def by_key(rows):
    return {(r.backend, r.precision, r.kernel): r for r in rows}


def test_every_kernel_of_both_backends_compiles_for_sm90(counted):
    rows, keep = counted
    keys = sorted(by_key(rows))
    assert keys == sorted((b, p, k) for b in BACKENDS for p in PRECISIONS for k in gpu_asm.KINDS)
    for r in rows:
        assert r.arch == "sm_90" and r.tile == 256
        assert r.interactions_per_loop >= 1 and 10 < r.instructions_per_interaction < 60, r
        assert r.mix_per_interaction["mufu"] == 1.0          # one MUFU.RSQ per interaction
        sass = (keep / f"{r.backend}_{r.precision}_{r.kernel}.sass").read_text()
        assert "MUFU.RSQ" in sass
        tiled = r.kernel in ("tiled", "fused")
        # the tiled kernels read sources from shared memory behind barriers; the plain ones neither
        assert ("BAR.SYNC" in sass) == tiled and (r.shared_bytes > 0) == tiled
        assert r.mix_per_interaction["shared_load" if tiled else "global_load"] > 0
        assert r.mix_per_interaction["global_load" if tiled else "shared_load"] == 0
        assert r.predicted_interactions_per_second > 1e11 and 0 < r.occupancy <= 1


def test_tiled_numba_kernels_issue_at_most_115_percent_of_cuda_c(counted):
    rows, _ = counted
    k = by_key(rows)
    for precision in PRECISIONS:
        for kind in ("tiled", "fused"):
            numba, c = k["numba", precision, kind], k["cupy", precision, kind]
            ratio = numba.instructions_per_interaction / c.instructions_per_interaction
            print(f"{precision} {kind}: numba {numba.instructions_per_interaction:.2f}, "
                  f"CUDA C {c.instructions_per_interaction:.2f}, {ratio:.2f}x")
            assert ratio <= PARITY, (precision, kind, ratio)
    # the numba sp tile loop is CUDA C's: one 128-bit shared load, no integer overhead to speak of
    sp = k["numba", "sp", "tiled"].mix_per_interaction
    assert sp["shared_load"] == 1 and sp["integer_other"] < 0.5


def test_no_kernel_spills(counted):
    rows, _ = counted
    assert [(r.backend, r.precision, r.kernel, r.spills) for r in rows if r.spills or r.stack] == []


def test_float32_kernels_have_no_float64_instruction(counted):
    rows, _ = counted
    k = by_key(rows)
    for backend in ("numba", "cupy"):
        for kind in ("tiled", "plain"):
            assert k[backend, "sp", kind].float64_instructions == 0
            assert k[backend, "dsp", kind].float64_instructions == 0
            assert k[backend, "dp", kind].mix_per_interaction["fp64"] >= 16    # the count sees float64
        assert k[backend, "sp", "fused"].float64_instructions > 50               # E's Galaxy is float64


def test_the_parity_check_catches_a_range_loop_kernel(real_compiler, monkeypatch):
    """The tile loop as numba users first write it (`range` loops over a (4, TILE) tile) issues
    about twice CUDA C's instructions: 64-bit induction variables, negative-index wraparound
    selects and four scalar shared loads per interaction (numba issue 4647)."""
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda
    from numba.cuda import float32, int64

    monkeypatch.setattr(dispatcher, "get_current_device", lambda: gpu_asm.TargetDevice((9, 0)))
    tile = 256

    @cuda.jit(device=True, fastmath=True)
    def tiles(pos, eps2, xi, yi, zi):
        tid = cuda.threadIdx.x
        sh = cuda.shared.array((4, tile), float32)
        ax = ay = az = float32(0.0)
        for base in range(0, pos.shape[0] // 4, tile):
            for c in range(4):
                sh[c, tid] = pos[4 * (base + tid) + c]
            cuda.syncthreads()
            for k in range(tile):
                dx, dy, dz = sh[0, k] - xi, sh[1, k] - yi, sh[2, k] - zi
                rinv = cuda.libdevice.rsqrtf(dx * dx + dy * dy + dz * dz + eps2)
                f = sh[3, k] * rinv * rinv * rinv
                ax += f * dx
                ay += f * dy
                az += f * dz
            cuda.syncthreads()
        return ax, ay, az

    def kernel(pos, eps2, start, stop, out):
        i = start + cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        ax, ay, az = tiles(pos, eps2, pos[4 * i], pos[4 * i + 1], pos[4 * i + 2])
        out[0, i] = ax + ay + az

    ptx, _ = cuda.compile_ptx(kernel, (float32[::1], float32, int64, int64, float32[:, ::1]), cc=(9, 0),
                              fastmath=True)
    with tempfile.TemporaryDirectory() as tmp:
        resources, sass = gpu_asm.assemble(ptx, "sm_90", Path(tmp))
    (name, text), = sass.items()
    naive = gpu_asm.count("numba", "sp", "tiled", "sm_90", 256, resources[name], text)
    c = gpu_asm.count("cupy", "sp", "tiled", "sm_90", 256, *_cuda_c("sp", "pairwise_tiled"))
    print(naive.instructions_per_interaction, naive.mix_per_interaction, c.instructions_per_interaction)
    assert naive.instructions_per_interaction > 1.5 * c.instructions_per_interaction
    assert naive.mix_per_interaction["shared_load"] == 4


def _cuda_c(precision, name, arch="sm_90"):
    with tempfile.TemporaryDirectory() as tmp:
        resources, sass = gpu_asm.assemble(gpu_asm.cuda_c_ptx(precision, 256, arch), arch, Path(tmp))
    return resources[name], sass[name]


def _code(sass_function):
    """A function's instructions, the numbers of its labels and of the CUDA library's internal
    functions left out (nvdisasm numbers them across its whole input)."""
    code, _ = instructions(sass_function)
    return [(i.address, i.predicate, i.opcode, re.sub(r"\.L_x_\d+|\$__internal_\d+_", "#", i.operands)) for i in code]


def test_modules_assembled_together_come_back_apart_as_each_alone(real_compiler, tmp_path):
    """`assemble_modules` (one ptxas, one nvdisasm for every module): a numba module given twice
    (each of its names declared twice in the joined module) and a CUDA C module (four kernels, a
    device function, a shared array) come back apart, with each module's functions, resources
    and instructions as the module alone gives them."""
    modules = [gpu_asm.numba_ptx("sp", "tiled", 256, "sm_90"), gpu_asm.cuda_c_ptx("dp", 256, "sm_90")]
    modules.append(modules[0])
    joined = gpu_asm.assemble_modules(modules, "sm_90", tmp_path)
    for i, ((resources, sass), ptx) in enumerate(zip(joined, modules)):
        (tmp_path / str(i)).mkdir()
        alone_resources, alone_sass = gpu_asm.assemble(ptx, "sm_90", tmp_path / str(i))
        assert sass.keys() == alone_sass.keys() and len(sass) == (4 if i == 1 else 1), sass.keys()
        assert resources == alone_resources
        for name, text in sass.items():
            assert "__module" not in text and len(_code(text)) > 100
            assert _code(text) == _code(alone_sass[name]), name


@pytest.mark.parametrize("arch", ["sm_80", "sm_100"])
def test_other_targets_compile(real_compiler, arch):
    """A100 and B200: the CUDA C module and a numba kernel assemble; figures for the prediction."""
    c = gpu_asm.count("cupy", "sp", "tiled", arch, 256, *_cuda_c("sp", "pairwise_tiled", arch))
    assert c.spills == 0 and c.instructions_per_interaction < 17 and c.predicted_interactions_per_second > 1e11
    with tempfile.TemporaryDirectory() as tmp:
        resources, sass = gpu_asm.assemble(gpu_asm.numba_ptx("sp", "tiled", 256, arch), arch, Path(tmp))
    (name, text), = sass.items()
    n = gpu_asm.count("numba", "sp", "tiled", arch, 256, resources[name], text)
    assert n.instructions_per_interaction <= PARITY * c.instructions_per_interaction


# ------------------------------------------------------------------ the loop finder and the model

SASS = """
        /*0000*/                   S2R R0, SR_TID.X ;
.L_x_1:
        /*0010*/                   LDS.128 R4, [UR4] ;
        /*0020*/                   FADD R8, R4, -R1 ;
        /*0030*/                   MUFU.RSQ R9, R8 ;
        /*0040*/                   FFMA R10, R9, R8, R10 ;
        /*0050*/                   LDS.128 R4, [UR4+0x10] ;
        /*0060*/                   MUFU.RSQ R9, R4 ;
        /*0070*/                   IADD3 R2, R2, 0x2, RZ ;
        /*0080*/                   ISETP.NE.AND P0, PT, R2, 0x100, PT ;
        /*0090*/               @P0 BRA `(.L_x_1) ;
.L_x_2:
        /*00a0*/                   LDS.128 R4, [UR4] ;
        /*00b0*/                   MUFU.RSQ R9, R4 ;
        /*00c0*/               @P1 BRA `(.L_x_2) ;
        /*00d0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00e0*/               @P2 BRA `(.L_x_1) ;
        /*00f0*/                   EXIT ;
.L_x_3:
        /*0100*/                   BRA `(.L_x_3);
"""


def test_the_innermost_loop_is_the_unrolled_one():
    """Of the loops with a MUFU.RSQ that contain no other such loop, the one with the most: the
    unrolled main loop (2 interactions, 9 instructions), not its remainder, nor the enclosing
    tile loop, nor the self-loop after EXIT."""
    loop = gpu_asm.innermost_loop(SASS)
    assert (loop.start, loop.end, loop.rsqrts, len(loop.body)) == (0x10, 0x90, 2, 9)
    mix = gpu_asm.mix(loop.body)
    assert mix["shared_load"] == 2 and mix["mufu"] == 2 and mix["fp32"] == 2 and mix["branch"] == 1
    assert mix["integer_other"] == 2 and sum(mix.values()) == 9


def test_no_loop_is_an_error():
    with pytest.raises(ValueError, match="no loop with a MUFU.RSQ"):
        gpu_asm.innermost_loop("        /*0000*/                   EXIT ;\n")


def test_model_and_occupancy():
    h200 = gpu_asm.DEVICES["sm_90"]
    # 32 registers, 4 KiB shared, 256 threads: 8 blocks fill the SM; 48 registers: 5 blocks
    assert gpu_asm.occupancy(32, 4096, 256, h200) == (8, 1.0)
    assert gpu_asm.occupancy(48, 8192, 256, h200) == (5, 0.625)
    per = dict.fromkeys(gpu_asm.MIX, 0.0)
    per.update(fp32=12, mufu=1, shared_load=1, integer_other=0.5)
    clocks = gpu_asm.clocks_per_interaction(per, h200)
    assert clocks["issue"] == pytest.approx(14.5 / 128) and max(clocks, key=clocks.get) == "issue"
    per.update(fp32=3, fp64=16, convert=2)          # the dp kernel: bound by the 64 FP64 lanes
    clocks = gpu_asm.clocks_per_interaction(per, h200)
    assert max(clocks, key=clocks.get) == "fp64" and clocks["fp64"] == 0.25


# ------------------------------------------------------------------ the command

def cli_main(argv):
    from nbsymple_versions.cli import main      # here: the rest of this file needs no CLI
    return main(argv)


def test_cli_json_and_keep(counted, monkeypatch, capsys, tmp_path):
    rows, _ = counted
    seen = {}

    def fake_count_all(arch, tile, keep=None):
        seen.update(arch=arch, tile=tile, keep=keep)
        return rows
    monkeypatch.setattr(gpu_asm.report, "count_all", fake_count_all)
    assert cli_main(["gpu-asm", "--arch", "sm_90", "--json", "--keep", str(tmp_path / "k")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert seen == {"arch": "sm_90", "tile": 256, "keep": tmp_path / "k"} and (tmp_path / "k").is_dir()
    assert len(out) == 24 and {o["backend"] for o in out} == {"numba", "cupy"}
    for o in out:
        assert {"backend", "precision", "kernel", "instructions_per_interaction", "registers", "spills",
                "predicted_interactions_per_second"} <= set(o)
        assert o["device"]["sms"] == 132
    assert cli_main(["gpu-asm"]) == 0
    text = capsys.readouterr().out
    assert "132 SMs at 1.98 GHz" in text and "numba / CUDA C instructions per interaction, tiled: sp" in text
    assert len([line for line in text.splitlines() if line[:8] in ("numba   ", "cupy    ")]) == 24


def test_asv_gpu_code_tracks_the_counts_of_gpu_asm(counted, monkeypatch):
    """asv's GpuCode (benchmarks/gpu.py) tracks, per backend, precision and kernel, the
    instructions per interaction `gpu_asm.count_all` gives for the H200 (the module's count,
    handed to it rather than counted again); GpuKernel skips with a reason where no GPU is
    visible."""
    rows, _ = counted
    monkeypatch.syspath_prepend(str(REPO))
    from benchmarks import grid
    from benchmarks.gpu import ARCH, GpuCode, GpuKernel
    seen = []

    def fake_count_all(arch, *args, **kwargs):
        seen.append((arch, args, kwargs))
        return rows
    monkeypatch.setattr(gpu_asm, "count_all", fake_count_all)
    code = GpuCode()
    counts = code.setup_cache()
    assert seen == [("sm_90", (), {})] and ARCH == "sm_90"
    assert len(counts) == 2 * 3 * 4 == len(rows), counts
    for backend, precision, kernel in itertools.product(*code.params):
        code.setup(counts, backend, precision, kernel)
        assert code.track_instructions_per_interaction(counts, backend, precision, kernel) == \
            by_key(rows)[backend, precision, kernel].instructions_per_interaction
    monkeypatch.setattr(grid, "gpu_visible", lambda: False)
    kernel = GpuKernel()
    for params in itertools.product(*kernel.params):
        with pytest.raises(NotImplementedError, match="needs a GPU|not in the"):
            kernel.setup(*params)


@pytest.mark.parametrize("argv, words", [
    (["--arch", "hopper"], "unknown architecture 'hopper'"),
    (["--tile", "48"], "tile must be a power of two"),
])
def test_cli_mistakes_are_one_sentence(argv, words, capsys):
    assert cli_main(["gpu-asm", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("nbsymple gpu-asm: ") and words in err[0]


def test_cli_without_ptxas_is_one_sentence(monkeypatch, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "nvidia", None)         # no wheels either
    assert cli_main(["gpu-asm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["nbsymple gpu-asm: ptxas not found: pip install nvidia-cuda-nvcc (the `test` extra installs it)"]


def test_cli_under_the_simulator_is_one_sentence(tmp_path):
    """NUMBA_ENABLE_CUDASIM=1 (set in a shell to try the GPU versions without a GPU) puts a
    simulator in numba-cuda's compiler's place: gpu-asm says so, before the --keep folder is
    made (a traceback from numba's simulator module before)."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "gpu-asm", "--keep", "k"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr.strip().splitlines() == ["nbsymple gpu-asm: numba-cuda's compiler is needed to count the kernels, "
                                             "and NUMBA_ENABLE_CUDASIM=1 puts its simulator in its place; unset "
                                             "NUMBA_ENABLE_CUDASIM"], p.stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ plain vs tiled, in the simulator

def test_plain_kernels_in_the_simulator():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "CUDA_VISIBLE_DEVICES")}
    env["NUMBA_ENABLE_CUDASIM"] = "1"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf",
                        str(TESTS / "gpu_plain_sim_checks.py")],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    print(p.stdout[-3000:], p.stderr[-2000:])
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-3000:]
    assert " passed" in p.stdout and "skipped" not in p.stdout and "failed" not in p.stdout


def test_layout_packs_records():
    from nbsymple_versions.core import dsp
    from nbsymple_versions.gpu_pairwise import engine, records as layout
    x = np.array([[1.0, 2.0], [3.0, 4.0], [8.5e3 + 1e-5, -5.0]])
    m = np.array([0.25, 0.75])
    for precision in PRECISIONS:
        bodies = np.full((4, layout.WIDTH[precision]), np.nan, dtype=layout.real_type(precision))
        layout.fill_masses(bodies, m)
        layout.pack(x, bodies, precision)
        assert np.all(bodies[2:] == 0) and list(bodies[:2, 3]) == [0.25, 0.75]   # padding: zero mass at 0
        if precision == "dsp":
            hi, lo = dsp.split(x)
            np.testing.assert_array_equal(bodies[:2, 0:3], hi.T)
            np.testing.assert_array_equal(bodies[:2, 4:7], lo.T)
            assert np.all(bodies[:, 7] == 0) and bodies[0, 6] != 0      # a low word survives
        else:
            np.testing.assert_array_equal(bodies[:2, 0:3], x.T.astype(bodies.dtype))
    assert engine.slices(5, 3) == [(0, 1), (1, 3), (3, 5)] and engine.slices(2, 3) == [(0, 1), (1, 2)]
    assert engine.slices(3, 10**12) == [(0, 1), (1, 2), (2, 3)] and engine.slices(0, 4) == []   # no list of 10**12


@pytest.mark.parametrize("precision", ["sp", "dsp"])
def test_a_position_beyond_float32_packs_as_inf_quietly(precision):
    """Packed one coordinate at a time now (the transfer task's cost on an H200's host), a value
    beyond float32's range still becomes inf without a warning (the step reports the non-finite
    state), and the other coordinates and bodies keep their values."""
    import warnings
    from nbsymple_versions.gpu_pairwise import records as layout
    x = np.array([[1.0, 1e39], [2.0, 3.0], [-4.0, 5.0]])
    bodies = np.zeros((2, layout.WIDTH[precision]), dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layout.pack(x, bodies, precision)
    assert bodies[1, 0] == np.inf and list(bodies[0, 0:3]) == [1.0, 2.0, -4.0] and list(bodies[1, 1:3]) == [3.0, 5.0]


def test_registers_are_allocated_per_warp_in_units_of_256_and_conversions_use_the_mufu():
    """A mutation hunt: the tests above used register counts whose 32 per warp are already whole
    units of 256 (32, 48), so dropping the rounding passed; and their MUFU was never the bound,
    so leaving the float <-> double conversions out of it passed."""
    h200 = gpu_asm.DEVICES["sm_90"]
    # 33 registers: 1056 per warp round up to 1280; 65536 / 1280 = 51 warps, 6 blocks of 8 (not 62 and 7)
    assert gpu_asm.occupancy(33, 4096, 256, h200) == (6, 0.75)
    per = dict.fromkeys(gpu_asm.MIX, 0.0)
    per.update(fp32=4, mufu=1, convert=3)           # 4 MUFU operations on 16 lanes: 0.25 clocks, the bound
    clocks = gpu_asm.clocks_per_interaction(per, h200)
    assert clocks["mufu"] == 0.25 and max(clocks, key=clocks.get) == "mufu"


def test_occupancy_by_shared_memory_threads_and_blocks_and_the_count_of_one_loop():
    """The occupancy calculator's other limits: 28 KiB of shared memory plus the runtime's 1 KiB
    per block fit 7 blocks in 228 KiB (not 8); 1024 threads per block, 2 blocks (2048 threads per
    SM); 32-thread blocks, the 32 blocks per SM. The plain kernel's global loads, and a spilled
    register's reload (LDL), share the load-store lanes with shared loads. `count` of the loop
    above: 9 instructions for 2 interactions, bound by the MUFU's 16 lanes (2 rsqrt / 2 / 16
    clocks), 132 SMs x 1.98 GHz / 0.0625 interactions/s, and a conversion to float64 counted as a
    float64 instruction (a mutation hunt: dropping the 1 KiB, the thread or the block limit, the
    global or the local loads, or the F64 conversions, each passed)."""
    h200 = gpu_asm.DEVICES["sm_90"]
    assert gpu_asm.occupancy(32, 28 * 1024, 128, h200) == (7, 0.4375)
    assert gpu_asm.occupancy(16, 0, 1024, h200) == (2, 1.0)
    assert gpu_asm.occupancy(16, 1024, 32, h200) == (32, 0.5)
    per = dict.fromkeys(gpu_asm.MIX, 0.0)
    per.update(fp32=1, global_load=40)
    clocks = gpu_asm.clocks_per_interaction(per, h200)
    assert clocks["lsu"] == 40 / 32 and max(clocks, key=clocks.get) == "lsu"
    code, _ = instructions("        /*0000*/                   LDL.64 R2, [R1+0x8] ;\n")
    assert gpu_asm.mix(code)["global_load"] == 1
    from nbsymple_versions.instruments.gpu_asm.toolchain import Resources
    row = gpu_asm.count("numba", "sp", "tiled", "sm_90", 256, Resources(32, 0, 0, 0, 4096),
                        SASS.replace("EXIT ;", "F2F.F64.F32 R12, R9 ;"))
    assert (row.loop_instructions, row.interactions_per_loop, row.instructions_per_interaction) == (9, 2, 4.5)
    assert row.bound == "mufu" and row.clocks_per_interaction == 0.0625 and row.float64_instructions == 1
    assert row.predicted_interactions_per_second == pytest.approx(132 * 1.98e9 / 0.0625)
    assert (row.blocks_per_sm, row.occupancy) == (8, 1.0)


def test_the_ratio_is_numba_over_cuda_c_where_both_were_counted(monkeypatch):
    """`report.ratios` and the command's ratio line: numba's instructions per interaction over
    CUDA C's, per precision and kernel counted for both (a mutation hunt: the ratio inverted
    passed, only the line's start was asserted). Counts of the loop above: numba 9 instructions
    per 2 interactions, CUDA C one more, 0.90x; numba's dp has no CUDA C row and no ratio."""
    from nbsymple_versions.instruments.gpu_asm.toolchain import Resources
    longer = SASS.replace("        /*0070*/", "        /*0068*/                   FMUL R11, R9, R9 ;\n        /*0070*/")
    res = Resources(32, 0, 0, 0, 4096)
    rows = [gpu_asm.count("numba", "sp", "tiled", "sm_90", 256, res, SASS),
            gpu_asm.count("cupy", "sp", "tiled", "sm_90", 256, res, longer),
            gpu_asm.count("numba", "dp", "tiled", "sm_90", 256, res, SASS)]
    assert [r.instructions_per_interaction for r in rows] == [4.5, 5.0, 4.5]
    assert gpu_asm.report.ratios(rows) == {("sp", "tiled"): pytest.approx(0.9)}
    monkeypatch.setattr(gpu_asm.report, "count_all", lambda arch, tile, keep=None: rows)
    out = io.StringIO()
    assert gpu_asm.report.main("sm_90", 256, out=out) == 0
    assert "numba / CUDA C instructions per interaction, tiled: sp 0.90x\n" in out.getvalue()


PTXAS_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Function properties for helper
    24 bytes stack frame, 16 bytes spill stores, 20 bytes spill loads
ptxas info    : Compiling entry function 'kern' for 'sm_90'
ptxas info    : Function properties for kern
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 2.445 ms
"""


def test_ptxas_resources_are_read_field_by_field(monkeypatch, tmp_path):
    """`ptxas -v`'s log (its format as ptxas 13 prints it) read into `Resources`: the stack frame,
    spill stores and spill loads in that order on one line, registers and shared memory on the
    next, per function (a mutation hunt: the stack frame and the spill stores swapped passed, no
    kernel of the suite spills or has a stack frame). The tools are stubbed: no ptxas runs."""
    from nbsymple_versions.instruments.gpu_asm import toolchain
    monkeypatch.setattr(toolchain, "tool", lambda name: name)
    monkeypatch.setattr(toolchain, "_run", lambda args: PTXAS_LOG if args[0] == "ptxas" else "")
    resources, sass = toolchain._assemble_one(".version 8.0\n", "sm_90", tmp_path)
    assert resources == {"helper": toolchain.Resources(0, 16, 20, 24, 0),
                         "kern": toolchain.Resources(40, 4, 12, 8, 4096)}
    assert (resources["kern"].stack, resources["kern"].spill_stores, resources["kern"].spill_loads) == (8, 4, 12)
    assert sass == {}
