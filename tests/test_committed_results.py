"""The committed results/ stay usable: benchmarks.json is what asv discovers in this working
tree (regenerate it with `make benchmarks-json` in the commit that changes benchmarks/), every
results file lines up with the series a new run writes (machine, environment name, parameters,
explicit versions), and the reference run reads with the paper's reader and is complete."""
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
REFERENCE_MACHINE = "amd-epyc-znver4-avx512-2cores-nogpu"
DEFAULT_NS = (256, 1024, 4096, 16384)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools import tracking  # noqa: E402


@pytest.fixture(scope="module")
def discovered():
    return tracking.discovered_benchmarks()


def _result_files():
    return [p for p in RESULTS.glob("*/*.json") if p.name != "machine.json"]


def test_committed_benchmarks_json_matches_discovery(discovered):
    committed = json.loads((RESULTS / "benchmarks.json").read_text())
    stale = sorted(set(committed) ^ set(discovered)) + sorted(
        k for k in set(committed) & set(discovered) if committed[k] != discovered[k])
    assert not stale, (f"results/benchmarks.json differs from asv's discovery for {stale}: "
                       "run `make benchmarks-json` and commit it with the change to benchmarks/")


def test_every_benchmark_declares_its_version(discovered):
    hashed = [k for k, b in discovered.items() if k != "version" and len(str(b["version"])) == 64]
    assert not hashed, f"benchmarks without an explicit `version` (their history would break on refactoring): {hashed}"


def test_results_line_up_with_a_new_run(discovered):
    """Same machine parameters, environment name (`make bench`'s for the Python the run had, as
    the H200 machine's image has 3.12, or a history's asv-built one) and benchmark versions as a
    run today writes, so the dashboard draws old and new points as one series; the rows of
    retired benchmarks (`tracking.RETIRED`) stay as they were measured."""
    assert _result_files(), "no committed results"
    for path in _result_files():
        data = json.loads(path.read_text())
        machine = json.loads((path.parent / "machine.json").read_text())
        machine.pop("version")
        assert data["env_name"] in (tracking.fixed_env_name(data["python"]), tracking.history_env_name()), path.name
        assert path.name == f"{data['commit_hash'][:8]}-{data['env_name']}.json", path.name
        assert data["params"] == dict(machine, python=data["python"]), path.name
        assert path.parent.name == machine["machine"] and "isa" in machine and "uarch" in machine, path.name
        cols = data["result_columns"]
        for name, row in data["results"].items():
            row = dict(zip(cols, row))
            if name in tracking.RETIRED:                 # kept as it was measured, no new series
                assert name not in discovered, f"{name} is retired but still in the suite"
                continue
            assert name in discovered, f"{path.name}: {name} is no benchmark any more (nor in tracking.RETIRED)"
            assert row["version"] == discovered[name]["version"], f"{path.name}: {name} has an old version"
            assert row["params"] == discovered[name]["params"], f"{path.name}: {name} has other params"


def test_reference_run_is_named_for_its_zen4_machine():
    """The reference run came from a Zen 4 machine (`tools.migrate` gave its microarchitecture,
    with the evidence, in each file's provenance): its history stays under that machine's name,
    apart from any other machine's, Zen 5 or Zen 3 with the same model name and core count."""
    folders = [p.name for p in RESULTS.iterdir() if p.is_dir()]
    assert REFERENCE_MACHINE in folders and "amd-epyc-avx512-2cores-nogpu" not in folders, folders
    machine = json.loads((RESULTS / REFERENCE_MACHINE / "machine.json").read_text())
    assert (machine["machine"], machine["uarch"], machine["isa"]) == (REFERENCE_MACHINE, "znver4", "avx512")
    for path in (RESULTS / REFERENCE_MACHINE).glob("*-existing-*.json"):
        assert any(run.get("uarch") == "znver4" and run.get("evidence")
                   for run in json.loads(path.read_text())["provenance"]), path.name


def test_reference_run_has_every_cpu_version_at_every_n():
    from nbsymple_versions.paper.results import load_results
    res = load_results(RESULTS, machine=REFERENCE_MACHINE)
    info = res.machine_info
    assert [info.get(k) for k in ("num_cpu", "gpu", "isa", "uarch")] == ["2", "none", "avx512", "znver4"]
    steps = res.get("steps.Step.time_step_leapfrog")
    shares = res.get("steps.TaskShares.track_share")
    for version in "AB":                       # the versions the reference machine can run
        for n in DEFAULT_NS:
            for precision in ("sp", "dp", "dsp"):
                t = steps[(version, n, precision)]
                assert math.isfinite(t) and t > 0, (version, n, precision)
            total = sum(v for (ver, nn, _), v in shares.items() if (ver, nn) == (version, n))
            assert abs(total - 100) < 1e-6
    # O(N^2): the largest N costs far more than the smallest
    assert steps[("A", 16384, "dp")] > 100 * steps[("A", 256, "dp")]
