"""The CPU kernels' machine code (`nbsymple cpu-asm`): every kernel for the host and the fixed
targets, compiled once for the module (~25 s on 2 cores, a child process per target).

A fixed target's counts do not depend on the machine or on the caller's NUMBA_* settings; the
AVX-512 targets use 512-bit registers where LLVM chooses them (znver4) and Haswell none; the
float32 loops hold no float64 arithmetic; instructions per interaction lie in bands a broken
loop finder (a remainder loop, the whole function, an iteration not divided by its lanes)
falls outside of.
"""
import dataclasses
import itertools
import json
import re
from pathlib import Path

import llvmlite.binding as llvm
import numba
import pytest

from cli_call import call
from nbsymple_versions.instruments import cpu_asm
from nbsymple_versions.instruments.cpu_asm import model, replay, report, toolchain, x86
from nbsymple_versions.serial import avx512
from nbsymple_versions.serial.kernels import ROW_CPUS, DIVIDER_CPUS, choosing_for

REPO = Path(__file__).resolve().parent.parent

# measured (numba 0.68, llvmlite 0.50): instructions per interaction (galactic, axpy: per element)
# haswell 3.0, 7.75, 4.38, 30.0, 0.94; skylake-avx512 2.81, 3.38, 4.06, 30.3, 0.94;
# znver4 1.19, 3.09, 1.97, 21.6, 0.47 (pairwise sp, dp, dsp, galactic, axpy; sp on znver4: the
# 16-lane row of serial/avx2.py; dp on AVX-512: the IR row of serial/avx512.py)
BANDS = {
    "haswell": {"sp": (2.4, 3.8), "dp": (6.0, 9.5), "dsp": (3.5, 5.5), "galactic": (22, 38), "axpy": (0.7, 1.2)},
    "skylake-avx512": {"sp": (2.2, 3.6), "dp": (2.7, 4.3), "dsp": (3.2, 5.1), "galactic": (22, 38),
                       "axpy": (0.7, 1.2)},
    "znver4": {"sp": (1.1, 1.8), "dp": (2.5, 3.9), "dsp": (1.5, 2.5), "galactic": (16, 27), "axpy": (0.35, 0.6)},
    # any machine: AVX2 or AVX-512, 8 or 16 float32 lanes
    "host": {"sp": (1.1, 3.8), "dp": (2.5, 9.5), "dsp": (1.5, 5.5), "galactic": (16, 38), "axpy": (0.35, 1.2)},
}
AVX512_TARGETS = ("skylake-avx512", "znver4")


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    """Every kernel for the host and the fixed targets, its assembly kept."""
    keep = tmp_path_factory.mktemp("asm")
    rows = cpu_asm.count_all(cpu_asm.TARGETS, keep=keep)
    print(cpu_asm.table(rows))
    return {(r.target, r.kernel, r.precision): r for r in rows}, keep


def hot_loop(keep, target, kernel, precision):
    text = (keep / f"{target}_{kernel}_{precision}.s").read_text()
    return x86.pairwise_loop(text) if kernel == "pairwise" else x86.element_loop(text, 8)


def test_every_kernel_for_the_host_and_the_fixed_targets(counted):
    rows, keep = counted
    assert cpu_asm.FIXED_TARGETS == ("haswell", "skylake-avx512", "znver4")
    assert list(rows) == [(t, k, p) for t in cpu_asm.TARGETS for k, p in cpu_asm.KERNELS]
    assert sorted(f.name for f in keep.iterdir()) == sorted(f"{t}_{k}_{p}.s" for t, k, p in rows)
    for (target, kernel, precision), r in rows.items():
        assert r.cpu == (llvm.get_host_cpu_name() if target == "host" else target)
        low, high = BANDS[target][precision if kernel == "pairwise" else kernel]
        assert low <= r.instructions_per_interaction <= high, r
        assert sum(r.mix_per_interaction.values()) == pytest.approx(r.instructions_per_interaction, abs=1e-3)
        loop = hot_loop(keep, target, kernel, precision)
        element_bytes = 4 if precision in ("sp", "dsp") else 8
        # interactions per iteration: rsqrt lanes (pairwise) and the induction variable agree
        assert loop.elements(element_bytes) == r.interactions_per_loop and len(loop.body) == r.loop_instructions
        assert r.lanes >= 4 and r.vector_bits >= 256            # vectorised: AVX2 or AVX-512
        if target == "host":        # the host's bound from costs measured on it (tests/test_cpu_replay.py)
            assert r.costs == "measured" and r.predicted_cycles_per_interaction > 0 and r.bound
            assert r.compiled_cycles_per_interaction > 0
        else:                       # a fixed target's from the table, the same on every machine
            assert r.costs == "table" and r.compiled_cycles_per_interaction is None


def test_fixed_targets_do_not_depend_on_the_caller(counted, monkeypatch, tmp_path):
    """A second, separate compile from another folder, with NUMBA_* settings that would change the
    code if they reached the children, gives the same counts (compiled: no kept code, `code_cache`)."""
    rows, _ = counted
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")
    monkeypatch.setenv("NUMBA_CPU_FEATURES", "+avx512f")
    monkeypatch.setenv("NUMBA_OPT", "0")
    again = toolchain.compile_targets(cpu_asm.FIXED_TARGETS)
    for target in cpu_asm.FIXED_TARGETS:
        cpu, assembly = again[target]
        assert cpu == target
        for kernel, precision in cpu_asm.KERNELS:
            second = cpu_asm.count(target, cpu, kernel, precision, assembly[f"{kernel}_{precision}"], tool=None)
            first = rows[target, kernel, precision]
            for name in ("instructions_per_interaction", "mix_per_interaction", "memory_reads_per_interaction",
                         "loop_instructions", "interactions_per_loop", "lanes", "predicted_cycles_per_interaction",
                         "bound"):
                assert getattr(second, name) == getattr(first, name), (target, kernel, precision, name)


def test_znver4_uses_zmm_and_haswell_no_avx512(counted):
    rows, keep = counted
    sp = hot_loop(keep, "znver4", "pairwise", "sp")
    assert {i.mnemonic for i in sp.body if x86.classify(i) == "rsqrt"} == {"vrsqrt14ps"}
    assert all(i.bits == 512 for i in sp.body if x86.classify(i) in ("fma", "mul", "add", "rsqrt"))
    assert rows["znver4", "pairwise", "sp"].lanes == 16 and rows["haswell", "pairwise", "sp"].lanes == 8
    # every precision's lanes: dsp counts float32 lanes, as sp does (a mutation hunt: dsp at 64 bits passed)
    assert {(t, p): rows[t, "pairwise", p].lanes for t in ("haswell", "znver4") for p in ("sp", "dsp", "dp")} == {
        ("haswell", "sp"): 8, ("haswell", "dsp"): 8, ("haswell", "dp"): 4,
        ("znver4", "sp"): 16, ("znver4", "dsp"): 16, ("znver4", "dp"): 8}
    avx512 = re.compile(r"%zmm|%[xy]mm(1[6-9]|2\d|3[01])\b|%k[0-7]|\{1to|vrsqrt14|vrcp14|[xyz]mm\d+\{")
    for kernel, precision in cpu_asm.KERNELS:
        text = (keep / f"haswell_{kernel}_{precision}.s").read_text()
        assert "%ymm" in text and not avx512.search(text), (kernel, precision)


def test_znver4_sp_is_the_row_on_16_lanes(counted):
    """`ROW_CPUS` gives Zen 4's sp the row on 16 lanes: per 16 interactions 3 subtractions that
    read the source positions, r2 in 3 FMAs, AVX-512's raw estimate, the step in 4 multiplies (one
    reads the masses) and 1 FMA, the sums in 3 FMAs: 19 instructions with the loop's own, where
    numba's loop took 22.5 (two estimates and Newton steps per 32, and 6 loads)."""
    rows, keep = counted
    assert ROW_CPUS["znver4"] == ("sp",)
    loop = hot_loop(keep, "znver4", "pairwise", "sp")
    mix = {k: v for k, v in x86.mix(loop.body).items() if v and k not in ("integer", "move")}
    assert loop.root_lanes() == 16 and mix == {"add": 3, "fma": 7, "mul": 4, "rsqrt": 1}, (loop.root_lanes(), mix)
    assert len(x86.memory_reads(loop.body)) == 4 and len(loop.body) <= 19, [i.mnemonic for i in loop.body]
    assert rows["znver4", "pairwise", "sp"].instructions_per_interaction <= 19 / 16


def test_float32_loops_hold_no_float64_and_dp_fmas_are_float64(counted):
    rows, keep = counted
    floating = ("fma", "mul", "add", "rsqrt", "sqrt_div", "convert")
    for target in cpu_asm.TARGETS:
        for precision in ("sp", "dsp"):
            body = hot_loop(keep, target, "pairwise", precision).body
            assert not [i for i in body if x86.classify(i) in floating and re.search(r"[ps]d$|2sd|2pd", i.mnemonic)]
            assert rows[target, "pairwise", precision].mix_per_interaction["convert"] == 0
        dp = hot_loop(keep, target, "pairwise", "dp").body
        fmas = [i.mnemonic for i in dp if x86.classify(i) == "fma"]
        if target in AVX512_TARGETS or (target == "host" and avx512.on_host()):     # cpu-asm's host: this CPU
            assert fmas and all(m.endswith("pd") for m in fmas)      # the IR row: float64 only
        elif target == "host" and "dp" in ROW_CPUS.get(choosing_for(), ()):
            # the AVX2 row: float64 FMAs only, two conversions per 8 interactions (half the lanes)
            assert fmas and all(m.endswith("pd") for m in fmas) and rows[target, "pairwise", "dp"].mix_per_interaction[
                "convert"] == 0.25
        elif target == "host" and choosing_for() in DIVIDER_CPUS:   # the divider's route: float64 only
            assert fmas and all(m.endswith("pd") for m in fmas) and rows[target, "pairwise", "dp"].mix_per_interaction[
                "convert"] == 0
        else:
            assert sum(m.endswith("pd") for m in fmas) > 2 * sum(m.endswith("ps") for m in fmas) > 0


def _per_vector(loop, lanes):
    """FMA-pipe and conversion instructions per `lanes` interactions, by float64 / float32."""
    counts = {}
    for i in loop.body:
        c = x86.classify(i)
        if c in ("fma", "mul", "convert", "rsqrt"):
            key = (c, i.mnemonic if c in ("convert", "rsqrt") else "f64" if i.mnemonic.endswith("pd") else "f32")
            counts[key] = counts.get(key, 0) + lanes / loop.root_lanes()
    return counts


def test_the_avx2_dp_seed_is_a_float32_rsqrt_between_two_conversions(counted):
    """dp without AVX-512: r2 converted to float32, a float32 reciprocal square root estimate and
    Newton step, converted back, then the float64 step: per 4 interactions on haswell (4 float64
    lanes, a 128-bit vrsqrtps), 13 float64 FMA-pipe instructions (9 FMA, 4 multiplies), 4 float32
    ones (the Newton step: 1 FMA, 3 multiplies), 2 conversions."""
    rows, keep = counted
    dp = hot_loop(keep, "haswell", "pairwise", "dp")
    assert {(i.mnemonic, i.bits) for i in dp.body if x86.classify(i) == "rsqrt"} == {("vrsqrtps", 128)}
    assert _per_vector(dp, 4) == {("fma", "f64"): 9, ("mul", "f64"): 4, ("fma", "f32"): 1, ("mul", "f32"): 3,
                                  ("convert", "vcvtpd2ps"): 1, ("convert", "vcvtps2pd"): 1, ("rsqrt", "vrsqrtps"): 1}
    assert rows["haswell", "pairwise", "dp"].lanes == 4


@pytest.mark.parametrize("target", AVX512_TARGETS)
def test_the_avx512_dp_seed_is_one_vrsqrt14pd_and_a_fifth_order_step(counted, target):
    """dp on AVX-512 (serial/avx512.py): per 8 interactions one 512-bit vrsqrt14pd and 15 float64
    FMA-pipe instructions (r2: 3 FMA; e: 1 multiply, 1 FMA; the series: 4 FMA; s^3 m p: 3
    multiplies; the sums: 3 FMA), no float32 and no conversion: 16 FMA-pipe operations, against
    18 and 2 conversions per 8 for the float32 seed (above: 2 x (13 + 4 + 1) per 16)."""
    rows, keep = counted
    dp = hot_loop(keep, target, "pairwise", "dp")
    assert {(i.mnemonic, i.bits) for i in dp.body if x86.classify(i) == "rsqrt"} == {("vrsqrt14pd", 512)}
    assert _per_vector(dp, 8) == {("fma", "f64"): 11, ("mul", "f64"): 4, ("rsqrt", "vrsqrt14pd"): 1}
    assert rows[target, "pairwise", "dp"].lanes == 8 and rows[target, "pairwise", "dp"].vector_bits == 512


def test_predictions_and_llvm_mca(counted):
    rows, _ = counted
    tool = toolchain.llvm_mca()
    for target in cpu_asm.FIXED_TARGETS:
        for kernel, precision in cpu_asm.KERNELS:
            r = rows[target, kernel, precision]
            assert r.predicted_cycles_per_interaction > 0
            assert r.bound == {"pairwise": "fma", "galactic": "divider"}.get(kernel, r.bound)
            assert kernel != "axpy" or r.bound in ("load", "store")
            if tool is None:
                assert r.mca_cycles_per_interaction is None and r.mca_note.startswith("llvm-mca not found")
            elif target == "znver4" and tool[1] < 16:            # LLVM's Zen 4 model came with LLVM 16
                assert r.mca_cycles_per_interaction is None and r.mca_note == f"not modelled by llvm-mca {tool[1]}"
            else:
                assert r.mca_note is None and r.mca_cycles_per_interaction > 0
                if kernel != "galactic":          # the pipe bound and llvm-mca within a factor 2
                    assert 0.5 < r.mca_cycles_per_interaction / r.predicted_cycles_per_interaction < 2, r
    # Zen 4 sp (the 16-lane row): 11 FMA-pipe instructions and 1 rsqrt per 16 interactions, 512-bit: two turns
    # each on the two FMA pipes
    assert rows["znver4", "pairwise", "sp"].predicted_cycles_per_interaction == pytest.approx(12 * 2 / 2 / 16)
    if tool is None:
        assert any("llvm-mca not found" in line for line in report.notes(list(rows.values())))


# ------------------------------------------------------------------ the parser and the model

LOOP = """
kernel:
	vxorps	%xmm0, %xmm0, %xmm0
.LBB0_4:
	vmovups	(%rsi,%rax,4), %zmm1
	vsubps	%zmm2, %zmm1, %zmm1
	vfmadd213ps	%zmm3, %zmm1, %zmm1
	vrsqrt14ps	%zmm1, %zmm4
	vmulps	(%rdx,%rax,4), %zmm4, %zmm4
	vfmadd231ps	%zmm1, %zmm4, %zmm0
	addq	$16, %rax
	cmpq	%rax, %rcx
	jne	.LBB0_4
.LBB0_5:
	vmovss	(%rsi,%rax,4), %xmm1
	vrsqrtss	%xmm1, %xmm1, %xmm4
	vfmadd231ss	%xmm1, %xmm4, %xmm0
	incq	%rax
	cmpq	%rax, %rcx
	jne	.LBB0_5
	retq
.Lfunc_end0:
wrapper:
.LBB1_1:
	vrsqrt14ps	%zmm1, %zmm4
	vrsqrt14ps	%zmm1, %zmm4
	jmp	.LBB1_1
"""


def test_the_hot_loop_is_the_vector_main_loop():
    """16 lanes per iteration beat the scalar remainder loop; the wrapper after the kernel is not read."""
    loop = x86.pairwise_loop(LOOP)
    assert (len(loop.body), loop.root_lanes(), loop.elements(4)) == (9, 16, 16)
    mix = x86.mix(loop.body)
    assert {k: v for k, v in mix.items() if v} == {"load": 1, "add": 1, "fma": 2, "rsqrt": 1, "mul": 1, "integer": 3}
    assert [i for i in x86.memory_reads(loop.body)] == [loop.body[0], loop.body[4]]
    assert x86.element_loop(LOOP, 4).start == loop.start
    with pytest.raises(ValueError, match="no loop with a square root or its reciprocal"):
        x86.pairwise_loop("f:\n\tvmovups (%rax), %ymm0\n\tretq\n")


@pytest.mark.parametrize("line, kind", [
    ("vfnmadd213pd %zmm1, %zmm2, %zmm3", "fma"), ("vmulpd 64(%r10,%rdi,8), %zmm5, %zmm5", "mul"),
    ("vminpd %zmm1, %zmm0, %zmm0", "add"), ("vsqrtsd %xmm1, %xmm1, %xmm2", "sqrt_div"),
    ("vcvtpd2ps %zmm29, %ymm4", "convert"), ("vbroadcastss %xmm9, %zmm12", "shuffle"),
    ("vbroadcastsd (%r15), %zmm1", "load"), ("vmovupd %zmm1, (%r12,%rbx,8)", "store"),
    ("vmovaps %zmm21, %zmm27", "move"), ("movq 1584(%rsp), %rax", "load"), ("leaq 8(%rax), %rax", "integer"),
    ("callq *%r14", "call"), ("vxorpd %xmm0, %xmm0, %xmm0", "other"), ("vextractf32x4 $3, %zmm0, %xmm0", "shuffle"),
])
def test_classes(line, kind):
    (ins,), _ = x86.parse("\t" + line.replace(" ", "\t", 1))
    assert x86.classify(ins) == kind


def test_the_pipe_model():
    """Zen 4 runs a 512-bit FMA as two 256-bit halves on its two FMA pipes, a 256-bit one in one
    turn; Haswell's add shares port 1 with the FMAs."""
    code, _ = x86.parse("\tvfmadd231ps\t%zmm1, %zmm2, %zmm3\n\tvfmadd231ps\t%zmm1, %zmm2, %zmm4\n"
                        "\tvaddps\t%ymm1, %ymm2, %ymm3\n\tvrsqrt14ps\t%zmm1, %zmm2\n\tcmpq\t%rax, %rcx\n\tjne\t.L\n")
    zen4 = model.cycles_per_iteration(code, model.CPUS["znver4"])
    assert zen4["fma"] == (2 * 2 + 2) / 2 and zen4["add"] == 0.5 and zen4["rsqrt"] == 2 and zen4["issue"] == 5 / 6
    code, _ = x86.parse("\tvfmadd231ps\t%ymm1, %ymm2, %ymm3\n\tvfmadd231ps\t%ymm1, %ymm2, %ymm4\n"
                        "\tvaddps\t%ymm1, %ymm2, %ymm3\n")
    haswell = model.cycles_per_iteration(code, model.CPUS["haswell"])
    assert haswell["fma"] == 3 / 2 and haswell["add"] == 1
    assert set(model.CPUS) >= set(cpu_asm.FIXED_TARGETS)


def test_a_host_whose_flags_hide_avx512_is_said_to_run_avx2_code(counted, monkeypatch):
    """On a virtual machine that hides its Zen 4's AVX-512, LLVM names the CPU znver4, whose model line
    speaks of 512-bit operations, while its code is AVX2: the report says so of the host, and of no
    fixed target, nor of a host that has AVX-512 or a CPU whose model has no 512-bit operations (a
    note left from three sessions on such a machine)."""
    import dataclasses
    _, keep = counted
    r = cpu_asm.count("haswell", "haswell", "pairwise", "sp", (keep / "haswell_pairwise_sp.s").read_text(), tool=None)
    hidden = dataclasses.replace(r, target=toolchain.HOST, cpu="znver4")
    monkeypatch.setattr(report.avx512, "on_host", lambda: False)
    said = [line for line in report.notes([hidden]) if "flags list no AVX-512" in line]
    assert said == ["host (znver4): this CPU's flags list no AVX-512 (a virtual machine may hide it): its code is at "
                    "most 256-bit, and its model line's 512-bit operations are none of this host's"]
    for row in (dataclasses.replace(r, cpu="znver4"), dataclasses.replace(hidden, cpu="znver3")):
        assert not any("flags list no AVX-512" in line for line in report.notes([row])), row
    monkeypatch.setattr(report.avx512, "on_host", lambda: True)
    assert not any("flags list no AVX-512" in line for line in report.notes([hidden]))


def test_without_llvm_mca_the_report_says_so(counted, monkeypatch):
    _, keep = counted
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    monkeypatch.setattr(toolchain.os, "get_exec_path", lambda: [])
    assert toolchain.llvm_mca() is None
    text = (keep / "haswell_pairwise_sp.s").read_text()
    r = cpu_asm.count("haswell", "haswell", "pairwise", "sp", text, tool=None)
    assert r.mca_cycles_per_interaction is None and r.predicted_cycles_per_interaction > 0
    assert r.mca_note == "llvm-mca not found: no llvm-mca figure (install LLVM's llvm-mca, e.g. Debian's llvm-14)"
    assert f"llvm-mca, haswell (haswell): {r.mca_note}" in report.notes([r])


def test_an_llvm_mca_that_reports_no_iterations_is_said_to_model_nothing(counted, tmp_path):
    """A hunt: an llvm-mca first on PATH answering "Iterations: 0" ended `cpu-asm` in a
    ZeroDivisionError."""
    _, keep = counted
    fake = tmp_path / "llvm-mca"
    fake.write_text("#!/bin/sh\necho 'Iterations: 0'\necho 'Total Cycles: 5'\n")
    fake.chmod(0o755)
    text = (keep / "haswell_pairwise_sp.s").read_text()
    r = cpu_asm.count("haswell", "haswell", "pairwise", "sp", text, tool=(str(fake), 99))
    assert r.mca_cycles_per_interaction is None and r.mca_note.startswith("llvm-mca 99 cannot model this loop")


# ------------------------------------------------------------------ the command

def test_cli_json_table_and_keep(counted, monkeypatch, tmp_path):
    rows, _ = counted
    seen = {}

    def fake_count_all(targets, keep=None):
        seen.update(targets=targets, keep=keep)
        return [r for r in rows.values() if r.target in targets]
    monkeypatch.setattr(report, "count_all", fake_count_all)
    rc, out, err = call(["cpu-asm", "--json", "--keep", tmp_path / "k"])
    assert rc == 0 and err == "" and seen == {"targets": cpu_asm.TARGETS, "keep": tmp_path / "k"}
    assert (tmp_path / "k").is_dir()
    doc = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))
    assert len(doc) == 20 and {(o["target"], o["kernel"], o["precision"]) for o in doc} == set(rows)
    for o in doc:
        assert {"target", "cpu", "kernel", "precision", "instructions_per_interaction", "mix_per_interaction", "lanes",
                "predicted_cycles_per_interaction", "bound", "mca_cycles_per_interaction", "mca_note",
                "model", "costs", "compiled_cycles_per_interaction", "measured_costs"} <= set(o)
        assert set(o["mix_per_interaction"]) == set(x86.MIX)
        if o["target"] != "host":
            assert o["model"]["name"] == o["target"] and o["model"]["pipes"]["fma"]["count"] == 2
    rc, out, err = call(["cpu-asm", "--target", "znver4"])
    assert rc == 0 and seen["targets"] == ("znver4",)
    lines = out.splitlines()
    assert lines[0].startswith("znver4: AMD Zen 4") and len([x for x in lines if x.startswith("znver4    ")]) == 5
    assert "galactic: what its 2 calls per element (pow) run is not counted" in out


def test_asv_cpu_code_tracks_the_counts_of_cpu_asm(counted, monkeypatch):
    """asv's CpuCode (benchmarks/cpu_code.py) tracks, for every CPU kernel and fixed target
    (its literal parameters are cpu-asm's own), the instructions per interaction
    `cpu_asm.count_all` gives (the module's count, handed to it rather than counted again)."""
    rows, _ = counted
    monkeypatch.syspath_prepend(str(REPO))
    from benchmarks.cpu_code import KERNELS, TARGETS, CpuCode
    assert TARGETS == cpu_asm.FIXED_TARGETS
    assert KERNELS == tuple(f"{k} {p}" for k, p in cpu_asm.KERNELS)
    seen = []

    def fake_count_all(targets, keep=None):
        seen.append((targets, keep))
        return [r for r in rows.values() if r.target in targets]
    monkeypatch.setattr(cpu_asm, "count_all", fake_count_all)
    code = CpuCode()
    counts = code.setup_cache()
    assert seen == [(TARGETS, None)]
    assert set(counts) == set(itertools.product(TARGETS, KERNELS)), counts
    for target, kernel in itertools.product(*code.params):
        code.setup(counts, target, kernel)
        value = code.track_instructions_per_interaction(counts, target, kernel)
        assert value == rows[(target, *kernel.split())].instructions_per_interaction, (target, kernel)


@pytest.mark.parametrize("argv, words", [
    (["--target", "pentium"], "argument --target: invalid choice: 'pentium'"),
    (["--keep", ""], "argument --keep: needs a file or folder name"),
])
def test_cli_mistakes_are_one_sentence(argv, words):
    rc, out, err = call(["cpu-asm", *argv])
    lines = err.strip().splitlines()
    assert rc == 2 and out == "" and len(lines) == 1 and lines[0].startswith("nbsymple cpu-asm: ") and words in lines[0]


def test_cli_unwritable_keep_is_one_sentence(tmp_path):
    (tmp_path / "file").write_text("")
    rc, out, err = call(["cpu-asm", "--keep", tmp_path / "file" / "asm"])
    assert rc == 2 and out == "" and err.startswith("nbsymple cpu-asm: cannot write assembly into ")
    assert len(err.strip().splitlines()) == 1 and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_the_frequency_chain_is_one_rotate_and_one_add_per_step():
    """`cpu_asm.frequency`'s loop is the dependent chain it assumes: per step one rotate and one
    register add (2 cycles on every x86 core since Haswell and Zen) and nothing else but loop
    control; the measured clock is a plausible one."""
    from nbsymple_versions.instruments.cpu_asm import frequency
    hz = frequency.core_frequency_hz(steps=3_000_000, repeats=3)
    assert 0.5e9 < hz < 7e9, hz
    code, labels = x86.parse(x86.kernel_function(frequency.chain.inspect_asm(frequency.chain.signatures[0])))
    found = x86.innermost(x86.loops(code, labels))
    assert found
    for loop in found:
        names = [i.mnemonic for i in loop.body]
        rotates = [n for n in names if n.startswith(("ror", "rol"))]
        chain_adds = [i for i in loop.body if i.mnemonic == "addq" and not i.operands.startswith("$")]
        control = [n for n in names if n in ("addq", "subq", "incq", "decq", "cmpq") or n.startswith("j")]
        assert rotates and len(rotates) == len(chain_adds), names
        assert len(rotates) + len(control) == len(names), names
    assert frequency.CHAIN_CYCLES == 2


def test_the_host_target_compiles_as_the_code_timed_where_asked(monkeypatch):
    """`peers --bound` after AVX2 code timed on another core: the host's child compiles for the CPU
    the caller named (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES, and no other NUMBA_ setting), a fixed
    target for its own whatever is asked, and the host for its own where nothing is."""
    monkeypatch.setenv("NUMBA_OPT", "0")
    timed = {"NUMBA_CPU_NAME": "znver3", "NUMBA_CPU_FEATURES": "", "NUMBA_OPT": "1"}
    host = toolchain.environment(toolchain.HOST, timed)
    assert {k: v for k, v in host.items() if k.startswith("NUMBA_")} == {"NUMBA_CPU_NAME": "znver3",
                                                                        "NUMBA_CPU_FEATURES": ""}
    assert not [k for k in toolchain.environment(toolchain.HOST) if k.startswith("NUMBA_")]
    assert toolchain.environment("haswell", timed)["NUMBA_CPU_NAME"] == "haswell"


def test_peers_prints_version_a_against_its_pipe_bound(counted, monkeypatch, capsys):
    """`python -m nbsymple_versions.instruments.peers` ends with A's measured cycles per interaction (clock /
    rate) beside cpu-asm's bound for the host and the share of it reached; `--no-bound` leaves
    the section out."""
    from nbsymple_versions.instruments import peers
    from nbsymple_versions.instruments.cpu_asm import frequency
    rows, _ = counted
    host = [r for (target, _, _), r in rows.items() if target == "host"]
    c = next(r for r in host if r.kernel == "pairwise" and r.precision == "dp")
    row = peers.Row("A", "dp", 4096, 1e9, 1.0, "ok", 1e-15, 1e-13, 3, 0.01)
    timed = [row, peers.Row("B", "dp", 4096, 2e9, 2.0, "ok", 1e-15, 1e-13, 3, 0.01)]
    # both kinds of host, whichever this one is: one the model has figures for, and one it has not
    modelled = dataclasses.replace(c, predicted_cycles_per_interaction=1.5, bound="fma", costs="measured",
                                   compiled_cycles_per_interaction=2.9)
    table = dataclasses.replace(modelled, costs="table", compiled_cycles_per_interaction=None)
    unmodelled = dataclasses.replace(c, predicted_cycles_per_interaction=None, bound=None, costs=None,
                                     compiled_cycles_per_interaction=None)
    for count, expected in ((modelled, "| dp | 4096 | 3.000 | 2.900 | 1.500 | fma | measured | 50% | the loop's "
                                       "dependency chains (latency): as compiled, in L1, it takes 1.93x the bound |"),
                            (table, "| dp | 4096 | 3.000 | — | 1.500 | fma | table | 50% | not a pipe of the table: "
                                    "latency, memory or the front end |"),
                            (unmodelled, "| dp | 4096 | 3.000 | — | no figures for this CPU "
                                         "| — | — | — | — |")):
        text = peers.bound_table(timed, [count], 3e9)
        assert next(ln for ln in text.splitlines() if ln.startswith("| dp |")) == expected, text
        assert "| B" not in text and f"host CPU {c.cpu}" in text and "3.00 GHz" in text
    compiled_as = []
    monkeypatch.setattr(cpu_asm, "count_all", lambda targets, host_cpu=None: compiled_as.append(host_cpu) or host)
    monkeypatch.setattr(numba.config, "CPU_NAME", None)         # numba compiles for this CPU (the suite may
    monkeypatch.setattr(numba.config, "CPU_FEATURES", None)     # run under NUMBA_CPU_NAME: docs/testing.md)
    monkeypatch.setattr(frequency, "core_frequency_hz", lambda: 3e9)
    assert peers.main(["--n", "64", "--repeats", "1", "--only", "A-dp", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "Version A against its pipe bound" in out and "| dp | 64 |" in out and f"host CPU {c.cpu}" in out
    monkeypatch.setattr(numba.config, "CPU_NAME", "haswell")    # AVX2 code timed here: its loops counted
    monkeypatch.setattr(numba.config, "CPU_FEATURES", "+avx2")   # (another CPU even on a Haswell host)
    assert peers.main(["--n", "64", "--repeats", "1", "--only", "A-dp", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert compiled_as == [None, {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "+avx2"}]
    assert "Version A against its pipe bound" in out and "| dp | 64 |" in out
    assert "compiled for another CPU (NUMBA_CPU_NAME=haswell, NUMBA_CPU_FEATURES=+avx2" in out
    assert peers.main(["--n", "64", "--repeats", "1", "--only", "A-dp", "--quiet", "--no-bound"]) == 0
    assert "pipe bound" not in capsys.readouterr().out


def test_only_a_conditional_jump_fuses_with_its_compare():
    """cmp + jne issue as one macro-op, cmp + jmp as two (a mutation hunt: fusing any `j` passed,
    the tests' loops ending in conditional jumps only)."""
    zen4 = model.CPUS["znver4"]
    fused, _ = x86.parse("\tcmpq\t%rax, %rcx\n\tjne\t.L\n")
    assert model.cycles_per_iteration(fused, zen4)["issue"] == 1 / 6
    unfused, _ = x86.parse("\tcmpq\t%rax, %rcx\n\tjmp\t.L\n")
    assert model.cycles_per_iteration(unfused, zen4)["issue"] == 2 / 6


def test_the_divider_and_the_load_pipes():
    """The divider's figures: Haswell's vdivsd and vsqrtsd take 14 cycles each, Zen 4's 5 and 9
    (7 on average), so a loop of both costs 28 and 14 cycles. Zen 4's load pipes are 256 bits: a
    zmm load takes two turns, an embedded broadcast ({1to16}) or a vbroadcastss from memory one
    element's (a mutation hunt: Haswell's divider at 7 cycles, every read one turn, and a
    {1to16} read as the whole register, each passed)."""
    code, _ = x86.parse("\tvdivsd\t%xmm1, %xmm2, %xmm3\n\tvsqrtsd\t%xmm1, %xmm1, %xmm4\n")
    assert model.cycles_per_iteration(code, model.CPUS["haswell"])["divider"] == pytest.approx(28)
    assert model.cycles_per_iteration(code, model.CPUS["znver4"])["divider"] == pytest.approx(14)
    code, _ = x86.parse("\tvmovups\t(%rsi,%rax,4), %zmm1\n\tvmulps\t(%rdx){1to16}, %zmm4, %zmm4\n"
                        "\tvbroadcastss\t(%r15), %zmm2\n")
    assert model.cycles_per_iteration(code, model.CPUS["znver4"])["load"] == (2 + 1 + 1) / 2
    assert model.cycles_per_iteration(code, model.CPUS["skylake-avx512"])["load"] == 3 / 2


def test_the_induction_variable_counts_every_form_of_its_step_and_a_store_is_no_read():
    """`sub $-64` advances the index by 64 bytes (8 float64), `inc` by one element at scale 8, and
    `add $64` to a base register 64 bytes; a store writes memory and is no read (a mutation hunt:
    the sign of sub ignored, inc counted as 2, a base's step in bytes taken for elements, and stores
    counted as reads, each passed: the tests' loops step an index with add and store nothing)."""
    sub = x86.Loop(0, 2, x86.parse("\tvmovupd\t(%rsi,%rax), %zmm1\n\tsubq\t$-64, %rax\n\tjne\t.L\n")[0])
    assert sub.elements(8) == 8
    inc = x86.Loop(0, 2, x86.parse("\tvmovsd\t(%rsi,%rax,8), %xmm1\n\tincq\t%rax\n\tjne\t.L\n")[0])
    assert inc.elements(8) == 1
    base = x86.Loop(0, 2, x86.parse("\tvmovupd\t(%rsi), %zmm1\n\taddq\t$64, %rsi\n\tjne\t.L\n")[0])
    assert base.elements(8) == 8
    code, _ = x86.parse("\tvmovupd\t(%rsi,%rax,8), %zmm1\n\tvmovupd\t%zmm1, (%r12,%rax,8)\n"
                        "\tvaddpd\t8(%rdx), %zmm1, %zmm2\n")
    assert x86.memory_reads(code) == [code[0], code[2]]


def test_one_rows_figures_per_interaction():
    """`report.count` of the loop above for Zen 4: 9 instructions and 2 memory reads for 16
    interactions, 16 float32 lanes in 512 bits, and the pipe bound: 4 FMA-pipe instructions of
    two turns each on 2 pipes, 4 cycles for 16 interactions (a mutation hunt: the reads per
    iteration in place of per interaction passed)."""
    row = report.count("znver4", "znver4", "pairwise", "sp", LOOP, None)
    assert (row.loop_instructions, row.interactions_per_loop, row.lanes, row.vector_bits) == (9, 16, 16, 512)
    assert row.instructions_per_interaction == 0.5625 and row.memory_reads_per_interaction == 0.125
    assert row.predicted_cycles_per_interaction == 0.25 and row.bound == "fma" and row.costs == "table"
    assert row.mca_cycles_per_interaction is None and row.mca_note.startswith("llvm-mca not found")


def test_the_lanes_of_each_precision_are_its_floats_in_the_widest_arithmetic():
    """`report.count`'s lanes: of float32 for sp and dsp (whose loop computes in float32), of
    float64 for dp, in the widest arithmetic instruction: 16, 16, 8 in 512 bits and 8, 8, 4 in
    256 (a mutation hunt: dsp counted in 64-bit lanes passed, only sp's lanes were asserted)."""
    avx2 = LOOP.replace("%zmm", "%ymm").replace("vrsqrt14ps", "vrsqrtps")
    got = {(bits, p): report.count("znver4", "znver4", "pairwise", p, asm, None).lanes
           for bits, asm in ((512, LOOP), (256, avx2)) for p in ("sp", "dsp", "dp")}
    assert got == {(512, "sp"): 16, (512, "dsp"): 16, (512, "dp"): 8, (256, "sp"): 8, (256, "dsp"): 8, (256, "dp"): 4}


def test_the_hosts_row_takes_its_prediction_from_the_independent_replay_and_as_compiled_from_the_other():
    """`report.count` with the host's replays (`replay.Measured`, per loop: cycles per turn of its
    independent replay, then of its replay as compiled): the prediction is the first per
    interaction, "as comp" the second, the bound the class whose measured charge is the largest
    part of the prediction (a mutation hunt: the two figures swapped passed, no test handed
    `count` a measurement)."""
    costs = {("fma", 512): 1.0, ("mul", 512): 0.5}
    measured = replay.Measured(3e9, costs, {"pairwise_sp": (8.0, 24.0)})
    row = report.count("host", "znver4", "pairwise", "sp", LOOP, None, measured)
    assert row.interactions_per_loop == 16 and row.costs == "measured" and row.costs_note is None
    assert row.predicted_cycles_per_interaction == 0.5 and row.compiled_cycles_per_interaction == 1.5
    assert row.bound == "fma 25%"               # two FMAs at 1 cycle per 16 interactions: 0.125 of 0.5
    assert row.measured_costs == {"fma 512": 1.0, "mul 512": 0.5}
