"""`cpu_asm.replay`: the hot loops and each instruction class replayed on the host, the costs
`nbsymple cpu-asm` predicts the host's bound from. What is asserted is the code a replay runs
(static) and that it runs; how many cycles it takes is a measurement, shown by `cpu-asm` and
`peers`, never bounded here."""
import math
import re
from types import SimpleNamespace

import pytest

from nbsymple_versions.instruments import peers
from nbsymple_versions.instruments.cpu_asm import report, replay, x86
from nbsymple_versions.instruments.cpu_asm.toolchain import compile_targets

pytestmark = pytest.mark.skipif(not replay.runs_here(), reason="replays are x86-64 assembly")

LOOP = """
kernel:
.LBB0_7:
\tvmovups\t(%r12,%r13,4), %ymm15
\tvsubps\t%ymm12, %ymm15, %ymm5
\tvfmadd213ps\t%ymm3, %ymm5, %ymm15
\tvrsqrtps\t%ymm15, %ymm2
\tvmulps\t(%r10,%r13,4), %ymm2, %ymm2
\tvbroadcastss\t8(%rax), %ymm7
\tvfmadd231ps\t%ymm5, %ymm2, %ymm9
\tvmovups\t%ymm9, (%rdx,%r13,4)
\tvmovmskps\t%ymm9, %eax
\taddq\t$8, %r13
\tcmpq\t%r13, %rax
\tjne\t.LBB0_7
"""
_REGISTER = re.compile(r"%[xyz]mm(\d+)")


def _body():
    code, labels = x86.parse(LOOP)
    return max(x86.loops(code, labels), key=lambda loop: len(loop.body)).body


def _split(line):
    mnemonic, _, operands = line.partition(" ")
    return mnemonic, replay._operands(operands)


@pytest.mark.parametrize("registers", [16, 32])
def test_the_independent_replay_has_no_dependency(registers):
    """Sources read only registers 0-2, which nothing writes; destinations rotate over the rest
    (VEX-only instructions below 16); memory operands lie in the buffer, loads in its first
    half, stores in its second; integer, branch and general-register-writing instructions go."""
    lines = replay.independent(_body(), registers)
    assert [_split(line)[0] for line in lines] == ["vmovups", "vsubps", "vfmadd213ps", "vrsqrtps", "vmulps",
                                                 "vbroadcastss", "vfmadd231ps", "vmovups"]
    written = []
    for line in lines:
        mnemonic, ops = _split(line)
        *sources, destination = ops
        for op in sources:
            assert not (m := _REGISTER.fullmatch(op)) or int(m.group(1)) < 3, line
        if m := _REGISTER.fullmatch(destination):
            number = int(m.group(1))
            assert 3 <= number < (16 if mnemonic == "vrsqrtps" else registers), line
            written.append(number)
        else:
            assert mnemonic == "vmovups" and re.fullmatch(r"(\d+)\(%rdi\)", destination), line
            assert replay._STORES <= int(destination.split("(")[0]) < replay._MXCSR
        for op in ops:
            if "(" in op:
                assert op.endswith("(%rdi)") and 0 <= int(op.split("(")[0]) < replay._MXCSR, line
                assert op is destination or int(op.split("(")[0]) < replay._STORES, line
    assert len(set(written)) == len(written)            # no destination read back within the block


def test_vex_only_destinations_stay_below_16_however_many_registers():
    """With 32 registers, destinations rotate over 3-31, but a VEX-only instruction (vrsqrtps) has
    no encoding for registers 16-31 and rotates over 3-15 (a mutation hunt: rotating it over all
    32 passed, the loop above has too few instructions for a destination to pass 15)."""
    code, _ = x86.parse("".join(f"\tvmulps\t%ymm{k}, %ymm1, %ymm{k}\n\tvrsqrtps\t%ymm{k}, %ymm{k}\n"
                                for k in range(20)))
    out = [_split(line) for line in replay.independent(code, 32)]
    assert [m for m, _ in out] == ["vmulps", "vrsqrtps"] * 20
    highest = {m: max(int(_REGISTER.fullmatch(ops[-1]).group(1)) for n, ops in out if n == m) for m, _ in out}
    assert highest == {"vrsqrtps": 15, "vmulps": 31}, out


def test_the_compiled_replay_keeps_the_loop_but_its_memory():
    lines = replay.as_compiled(_body())
    assert lines[2] == "vfmadd213ps %ymm3, %ymm5, %ymm15" and lines[4] == "vmulps 32(%rdi), %ymm2, %ymm2"
    assert lines[0] == "vmovups 0(%rdi), %ymm15" and lines[-1] == f"vmovups %ymm9, {replay._STORES}(%rdi)"
    assert not any(line.startswith(("vmovmskps", "addq", "cmpq", "jne")) for line in lines)


def test_every_class_sample_is_its_class_at_its_width():
    for kind in replay.SAMPLES:
        for bits in (128, 256, 512):
            lines = replay.sample(kind, bits, 32)
            assert len(lines) == replay.BLOCK
            code, _ = x86.parse("".join(f"\t{line.replace(' ', chr(9), 1)}\n" for line in lines))
            assert {replay.cost_class(i) for i in code} == {kind}, (kind, bits, lines[:2])
            assert {i.bits for i in code} == {bits}, (kind, bits, lines[:2])


def test_each_instruction_is_charged_at_the_cost_of_its_own_kind():
    """A hunt: the mix's sqrt_div class was sampled as divides and square roots in turn, and each
    charged their mean: 6.87 cycles on a Zen 4 where a divide takes 4.76 and a square root 8.43,
    so the galactic loop's part of its bound was 109 %. Each kind is measured and charged apart
    (`replay.cost_class`), under its mix class."""
    code, _ = x86.parse("".join(f"\t{line}\n" for line in (
        "vdivpd\t%ymm0, %ymm1, %ymm2", "vsqrtpd\t%ymm0, %ymm3", "vsqrtsd\t%xmm0, %xmm0, %xmm4",
        "vcvtps2pd\t%xmm1, %ymm5", "vcvtpd2ps\t%ymm1, %xmm6", "vfmadd231pd\t%ymm0, %ymm1, %ymm7")))
    assert [replay.cost_class(i) for i in code] == ["div", "sqrt", "sqrt", "widen", "convert", "fma"]
    costs = {("div", 256): 4.0, ("sqrt", 256): 8.0, ("sqrt", 128): 6.0, ("widen", 256): 1.0, ("convert", 256): 2.0,
             ("fma", 256): 0.5}
    loop = SimpleNamespace(body=code)
    assert report._charges(loop, costs, 4) == {"sqrt_div": (4.0 + 8.0 + 6.0) / 4, "convert": 3.0 / 4, "fma": 0.5 / 4}


def test_a_class_costs_its_blocks_cycles_over_the_block(monkeypatch):
    """`class_costs` is cycles per instruction: a turn over a class's sample of `BLOCK`
    instructions, divided by `BLOCK` (a mutation hunt: the cycles of the whole block passed as
    one instruction's, only their being positive was asserted). The replay is stubbed: 0.75
    cycles per line of whatever it is given, at whatever clock."""
    monkeypatch.setattr(replay, "host", lambda: replay.Host(16, (128, 256)))
    monkeypatch.setattr(replay, "cycles_per_turn", lambda lines, hz: 0.75 * len(lines))
    costs = replay.class_costs(3e9)
    assert costs == {(k, b): pytest.approx(0.75) for k in replay.SAMPLES for b in (128, 256)}


def test_costs_and_loops_replay_on_this_core():
    """Every class at every width this host runs, and a loop both ways, assemble and run in the
    replay child; the figures are cycles (positive, finite), whatever their size."""
    measured = replay.measure({"loop": _body()})
    assert set(measured.costs) == {(k, b) for k in replay.SAMPLES for b in replay.host().widths}
    assert all(math.isfinite(c) and c > 0 for c in measured.costs.values()), measured.costs
    assert set(measured.loops) == {"loop"} and all(math.isfinite(c) and c > 0 for c in measured.loops["loop"])
    assert math.isfinite(measured.frequency_hz) and measured.frequency_hz > 1e8


def test_a_loop_that_cannot_be_replayed_costs_the_child_not_the_caller():
    """LLVM ends the process that asks it to assemble what it cannot (here a VEX-only instruction
    on register 20): the child ends, the caller gets one sentence, and `cpu-asm` then takes the
    table's bound for the host and says why."""
    code, _ = x86.parse("\tvrsqrtps\t%ymm20, %ymm3\n")
    with pytest.raises(replay.ReplayFailed, match="invalid operand"):
        replay.measure({"bad": code})
    asm = compile_targets(("haswell",))["haswell"][1]["pairwise_sp"]
    why = "its loops could not be replayed on this core (invalid operand)"
    r = report.count("host", "haswell", "pairwise", "sp", asm, tool=None, measured=why)
    assert r.costs == "table" and r.costs_note == why and r.bound == "fma" and r.compiled_cycles_per_interaction is None
    assert f"host (haswell): {why}; its bounds are the table's" in report.notes([r])


def test_the_class_that_takes_the_largest_part_of_a_bound():
    """A hunt: the label was the fewest classes whose costs summed to the bound within 10 %, and
    several sets fitted, chosen by noise (classes on separate pipes do not add): now the largest
    class and its part, the same for costs that differ within the noise."""
    charge = {"fma": 2.0, "mul": 1.5, "add": 2.1, "load": 0.3}
    assert report.explained_by(charge, 3.0) == "add 70%"
    assert report.explained_by({**charge, "add": 1.9}, 3.0) == "fma 67%"
    assert report.explained_by({"mul": 1.0, "fma": 1.0}, 2.0) == "fma 50%"     # a tie: by name
    assert report.explained_by({}, 1.0) == "mix"
    from nbsymple_versions.instruments.cpu_asm.x86 import MIX
    row = report.KernelCount("host", "znver3", "pairwise", "dp", 7.75, dict.fromkeys(MIX, 0.0), 1.0, 31, 4, 4, 256,
                             2.25, "fma+add+load+mul 100%", None, "no llvm-mca", "measured", 3.0)
    head, line = report.table([row]).splitlines()
    assert line[head.index("costs"):].startswith(row.costs), (head, line)     # the label never runs into it


@pytest.mark.parametrize("measured, compiled, share, says", [
    (1.0, 1.0, "100%", ["—"]),
    (0.85, 0.9, "—", ["contradicted"]),
    (2.0, 1.9, "50%", ["dependency chains (latency): as compiled, in L1, it takes 1.90x the bound"]),
    (2.0, 1.05, "50%", ["outside the loop's instructions (memory, the loops around it): A takes 1.90x that loop"]),
    (2.0, 1.25, "50%", ["it takes 1.25x the bound; outside the loop's instructions", "A takes 1.60x that loop"]),
    (1.15, 1.06, "87%", ["each within 10 %"]),
    (2.0, None, "50%", ["not a pipe of the table"]),
    (1.23, 1.57, "81%", ["at most 1.23x the bound", "the loop took 1.57x, slower than A itself"]),   # a hunt
    (2.0, 1.6, "50%", ["it takes 1.60x the bound; outside the loop's instructions", "A takes 1.25x that loop"]),
    (1.3, 1.05, "77%", ["outside the loop's instructions (memory, the loops around it): A takes 1.24x that loop"]),
])
def test_what_a_share_says(measured, compiled, share, says):
    """Each step from the bound to A's time that is more than 10 % is named with its factor: a Zen 1
    measured dsp at 1.8x its bound and 1.1x its loop in L1, and was told only the second. A mutation
    hunt: the step outside the loop named from 1.5x only passed, no case lay between 1.1x and 1.5x."""
    got_share, gap = peers._share(measured, 1.0, compiled)
    assert got_share == share and all(s in gap for s in says), gap
    assert ("in L1, it takes" in gap) == (compiled is not None and 1.1 < compiled <= measured / 0.9), gap
    assert peers._share(measured, None, compiled) == ("—", "—")
