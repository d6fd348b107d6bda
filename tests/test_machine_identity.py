"""A machine's name carries its CPU microarchitecture beside the ISA, cores and GPUs, so that two
machines of one model name and ISA (Zen 4 and Zen 5 both say "AMD EPYC", avx512) keep apart
series; `tools.migrate` renames committed results to such a name without re-running them."""
import json
import shutil
import sys
from pathlib import Path

import llvmlite.binding
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from nbsymple_versions.instruments import provenance  # noqa: E402
from tools import migrate, tracking  # noqa: E402

REFERENCE_MACHINE = "amd-epyc-znver4-avx512-2cores-nogpu"


@pytest.fixture
def host(monkeypatch):
    """A fixed CPU model, ISA, core count and no GPU; the host CPU name is the test's to set
    (`host(name)`), with cpu_uarch's cache cleared around it."""
    monkeypatch.delenv("BENCH_MACHINE", raising=False)
    monkeypatch.delenv("NBSYMPLE_BENCH_THREADS", raising=False)
    monkeypatch.setattr(provenance, "cpu_model", lambda: "AMD EPYC")
    monkeypatch.setattr(provenance, "vector_isa", lambda: "avx512")
    monkeypatch.setattr(provenance, "gpus", lambda: ([], ""))
    monkeypatch.setattr(provenance.os, "cpu_count", lambda: 2)

    def set_host(name):
        provenance.cpu_uarch.cache_clear()
        monkeypatch.setattr(llvmlite.binding, "get_host_cpu_name", lambda: name)
    yield set_host
    provenance.cpu_uarch.cache_clear()


def test_this_machines_name_carries_its_microarchitecture(monkeypatch):
    monkeypatch.delenv("BENCH_MACHINE", raising=False)
    uarch = provenance.cpu_uarch()
    assert uarch and uarch != "unknown"
    assert f"-{uarch}-{provenance.vector_isa()}-" in provenance.machine_name([])
    info = tracking.machine_info()
    assert info["uarch"] == uarch and uarch in info["machine"]
    assert provenance.describe(gpu=False)["uarch"] == uarch


BOUND_B = """
import json, os
import numpy as np
from nbsymple_versions.environment import usable_cores
from nbsymple_versions.instruments import provenance
from nbsymple_versions.threaded.kernels import THREADED
started = len(os.sched_getaffinity(0))
THREADED.axpy(np.zeros(64), np.ones(64), 1.0)          # B's first kernel: libgomp loads and binds
import numba
print(json.dumps({"started": started, "main_thread_now": len(os.sched_getaffinity(0)), "layer": numba.threading_layer(),
                  "usable": usable_cores(), "line": provenance.machine_line()}))
"""


def test_b_with_its_threads_bound_counts_the_cpus_the_process_started_on():
    """A hunt: under OMP_PROC_BIND=close, libgomp (loaded by B's first kernel) binds the main
    thread to its first place, and `peers --only A B` then printed "1 of 2 logical CPUs" for a B
    that had run on both (the machine's name would say "1of2cores"). The process's CPUs are
    counted as it started."""
    import os
    import subprocess
    env = {**os.environ, "OMP_PROC_BIND": "close"}
    env.pop("NUMBA_NUM_THREADS", None)
    done = subprocess.run([sys.executable, "-c", BOUND_B], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["layer"] == "omp", seen          # the case: libgomp's threads (the suite's layer)
    assert seen["usable"] == seen["started"], seen
    cores = seen["started"]
    assert (f", {cores} logical CPUs;" if cores >= (os.cpu_count() or 1) else f", {cores} of ") in seen["line"], seen
    if cores > 1:                    # the case itself: the main thread was bound to fewer CPUs than it started on
        assert seen["main_thread_now"] < cores, seen


def test_a_process_held_to_some_cores_names_the_machine_by_them(monkeypatch):
    """Under `taskset` or a batch job's cpuset (Slurm gives a job some of a node's cores) numba starts
    one thread per core this process may use, and B's times are those cores' times: the machine's
    name (and asv's `num_cpu`, which `tools.migrate` names it by) says `<k>of<n>cores`, where it
    said the whole machine's and mixed such results into the whole machine's history."""
    import os
    import subprocess
    monkeypatch.delenv("BENCH_MACHINE", raising=False)
    held = subprocess.run([sys.executable, "-c", "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
                           "from nbsymple_versions.environment import usable_cores; print(usable_cores())"],
                          capture_output=True, text=True, timeout=120)
    assert held.returncode == 0 and held.stdout.strip() == "1", held.stderr
    cores = os.cpu_count()
    monkeypatch.setattr(provenance, "usable_cores", lambda: 1)
    monkeypatch.setattr(tracking, "usable_cores", lambda: 1)
    name, info = provenance.machine_name([]), tracking.machine_info()
    if cores > 1:
        assert f"-1of{cores}cores-nogpu" in name and info["num_cpu"] == f"1of{cores}", (name, info)
        assert f", 1 of {cores} logical CPUs;" in provenance.machine_line(), provenance.machine_line()
    else:                                # a 1-CPU machine: all of it
        assert "-1cores-nogpu" in name and info["num_cpu"] == "1", (name, info)
    monkeypatch.setattr(provenance, "usable_cores", lambda: cores)
    assert f"-{cores}cores-nogpu" in provenance.machine_name([])


def test_threads_written_with_a_sign_or_zeros_name_the_machine_as_the_number(host, monkeypatch):
    """A hunt: NBSYMPLE_BENCH_THREADS=+2 (the check takes it, as C's atoi does) named the machine
    '...-+2threads', and '02' '...-02threads', though the process ran the machine's 2 threads:
    another machine's folder in results/. The benchmarks read it as the same number."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import grid
    host("znver4")
    monkeypatch.setattr(provenance, "usable_cores", lambda: 2)
    for typed, tail in (("+2", "-2cores-nogpu"), (" 02 ", "-2cores-nogpu"), ("+1", "-nogpu-1threads")):
        monkeypatch.setenv("NBSYMPLE_BENCH_THREADS", typed)
        assert provenance.machine_name().endswith(tail), (typed, provenance.machine_name())
        assert grid.bench_threads() == int(typed)


def test_zen4_and_zen5_get_different_names(host):
    names = {}
    for uarch in ("znver4", "znver5"):
        host(uarch)
        names[uarch] = tracking.machine_info()
        assert names[uarch]["uarch"] == uarch
    assert names["znver4"]["machine"] == REFERENCE_MACHINE
    assert names["znver5"]["machine"] == "amd-epyc-znver5-avx512-2cores-nogpu"


def test_the_widest_vector_isa_of_the_cpu_names_it(monkeypatch):
    """`vector_isa`: of the CPU's flags, the widest vector ISA: avx512 on a CPU that has avx2 too (a mutation
    hunt: avx2 found first passed)."""
    for flags, isa in (("fpu sse4_2 avx avx2 avx512f avx512dq", "avx512"), ("fpu sse4_2 avx avx2", "avx2"),
                       ("fpu sse4_2 avx", "avx")):
        monkeypatch.setattr(provenance, "_cpuinfo", lambda flags=flags: {"flags": flags})
        assert provenance.vector_isa() == isa


def test_each_gpu_model_is_named_with_its_count(host):
    """`machine_name`: each GPU model with how many the machine has, sorted ("2x-" for two of one; a mutation
    hunt: "1x-" for any count passed)."""
    host("znver4")
    assert provenance.machine_name(["NVIDIA H200", "NVIDIA A100", "NVIDIA H200"]) == \
        "amd-epyc-znver4-avx512-2cores-1x-nvidia-a100-2x-nvidia-h200"


def test_without_llvm_the_family_and_model_name_the_microarchitecture(host, monkeypatch):
    def no_llvm():
        raise OSError("no LLVM")
    host("")
    monkeypatch.setattr(llvmlite.binding, "get_host_cpu_name", no_llvm)
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: {"vendor_id": "AuthenticAMD", "cpu family": "26", "model": "2"})
    assert provenance.cpu_uarch() == "amd-f26m2"
    provenance.cpu_uarch.cache_clear()
    monkeypatch.setattr(provenance, "_cpuinfo", lambda: {})
    assert provenance.cpu_uarch() == "unknown"
    provenance.cpu_uarch.cache_clear()
    host("generic")                      # LLVM's name for a CPU it does not know
    assert provenance.cpu_uarch() == "unknown"


def test_migrate_renames_a_machine_and_keeps_its_history(tmp_path):
    """The committed reference run, migrated again as if it came from Zen 5: the folder,
    machine.json and every result's machine fields take the new name; values and provenance
    stay; a folder whose machine.json lacks a microarchitecture is refused without one."""
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results)
    old_folder = results / REFERENCE_MACHINE
    old_files = {p.name: json.loads(p.read_text()) for p in old_folder.glob("*-existing-*.json")}
    new_folder = migrate.migrate(old_folder, uarch="znver5", evidence="a test")
    assert new_folder.name == "amd-epyc-znver5-avx512-2cores-nogpu" and not old_folder.exists()
    machine = json.loads((new_folder / "machine.json").read_text())
    assert (machine["machine"], machine["uarch"], machine["isa"]) == (new_folder.name, "znver5", "avx512")
    for name, old in old_files.items():
        new = json.loads((new_folder / name).read_text())
        assert new["params"] == dict(old["params"], machine=new_folder.name, uarch="znver5")
        assert new["results"] == old["results"]
        assert new["provenance"][:-1] == old["provenance"]
        assert new["provenance"][-1] == {"migrated_from": f"{REFERENCE_MACHINE}/{name}", "uarch": "znver5",
                                         "note": "machine renamed to today's identity; values untouched",
                                         "evidence": "a test"}
    machine.pop("uarch")
    (new_folder / "machine.json").write_text(json.dumps(machine))
    with pytest.raises(ValueError, match="--uarch"):
        migrate.migrate(new_folder, dry_run=True)


def test_migrating_todays_results_again_changes_nothing(tmp_path):
    """A hunt: `tools.migrate` of a folder already named as today renamed the `history` runs' files
    (virtualenv-py3.11, asv's name for them) to existing-py3.11, out of the series history adds
    to, and gave every file one more provenance entry saying its machine was renamed. Every
    committed folder, migrated, is left byte for byte as it was; so is one migrated twice."""
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results)
    before = {p: p.read_bytes() for p in results.rglob("*.json")}
    assert any("-virtualenv-" in p.name for p in before), "no history run's file: the case tests nothing"
    for folder in sorted(p for p in results.iterdir() if p.is_dir()):
        assert migrate.migrate(folder) == folder
    assert {p: p.read_bytes() for p in results.rglob("*.json")} == before
    renamed = migrate.migrate(results / REFERENCE_MACHINE, uarch="znver5")
    once = {p: p.read_bytes() for p in renamed.rglob("*.json")}
    assert migrate.migrate(renamed) == renamed and {p: p.read_bytes() for p in renamed.rglob("*.json")} == once


@pytest.mark.parametrize("key, value", [("ram", "abc"), ("ram", "24 GB"), ("ram", "\u0663"), ("ram", "-5"),
                                        ("num_cpu", "abc"), ("num_cpu", "2 "), ("num_cpu", "0")])
def test_migrate_refuses_a_count_that_is_none(tmp_path, key, value):
    """A hunt: machine.json's ram "abc" was refused as "invalid literal for int() with base 10" (no file
    named), and an Arabic-Indic three or "-5" became "0 GiB" in the new machine.json, in silence; a
    num_cpu of "abc" named the machine "...-abccores-...", one of "2 " put a blank in its folder's name."""
    folder = tmp_path / "results" / "old"
    shutil.copytree(ROOT / "tests" / "data" / "asv_fixture" / "fixture-2core-nogpu", folder)
    machine = json.loads((folder / "machine.json").read_text())
    (folder / "machine.json").write_text(json.dumps({**machine, key: value}))
    with pytest.raises(ValueError, match=rf"old/machine.json is not an asv machine file this tool can rename \(its "
                                         rf"{key}, .+, is not (a count of cores|asv's count of bytes or today's)"):
        migrate.migrate(folder, isa="avx2", uarch="znver4", dry_run=True)


def test_migrate_keeps_the_python_a_run_had(tmp_path):
    """The H200's run had its image's Python 3.12: migrated from a 3.11 interpreter (a machine
    renamed), its files keep 3.12 in their parameters and their environment name, as a new run
    there writes them (`tracking.fixed_env_name`), not this interpreter's."""
    h200 = "intel-r-xeon-r-processor-emeraldrapids-avx512-16cores-1x-nvidia-h200"
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results)
    old = {p.name: json.loads(p.read_text()) for p in (results / h200).glob("*-existing-*.json")}
    assert old and all(d["params"]["python"] == "3.12" for d in old.values())
    new_folder = migrate.migrate(results / h200, uarch="sapphirerapids", evidence="a test")
    for name, data in old.items():
        new = json.loads((new_folder / name).read_text())        # the same file name: existing-py3.12
        assert new["params"]["python"] == "3.12" and new["python"] == "3.12"
        assert new["env_name"] == tracking.fixed_env_name("3.12") == "existing-py3.12"
        assert new["results"] == data["results"]


def test_migrate_in_place_rewrites_an_old_machine_file_and_names_only_what_was_given(tmp_path):
    """A folder already of today's name whose machine.json is asv's older form (the full os string, ram in
    bytes) is migrated in place into today's form, not refused as another machine's; and the provenance of a
    renamed folder names only the values given that machine.json did not hold (a mutation hunt: the folder's
    own machine.json refused, the os kept whole, and an --isa equal to its own recorded as given, passed)."""
    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results)
    folder = results / REFERENCE_MACHINE
    machine = json.loads((folder / "machine.json").read_text())
    (folder / "machine.json").write_text(json.dumps({**machine, "os": "Linux 6.8.0-1015-aws", "ram": str(24 * 2**30)}))
    assert migrate.migrate(folder) == folder
    assert json.loads((folder / "machine.json").read_text()) == machine
    renamed = migrate.migrate(folder, isa="avx512", uarch="znver5")
    files = sorted(renamed.glob("*-existing-*.json"))
    assert files and renamed != folder
    for path in files:
        assert json.loads(path.read_text())["provenance"][-1] == {
            "migrated_from": f"{REFERENCE_MACHINE}/{path.name}", "uarch": "znver5",
            "note": "machine renamed to today's identity; values untouched"}
