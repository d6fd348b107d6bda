"""The committed reference run in results/ reads with the paper's reader and is complete."""
import math
from pathlib import Path

from nbsymple_versions.paper.results import load_results

RESULTS = Path(__file__).resolve().parent.parent / "results"
REFERENCE_MACHINE = "x86_64-2cores-nogpu"
DEFAULT_NS = (256, 1024, 4096, 16384)


def test_reference_run_has_every_cpu_version_at_every_n():
    res = load_results(RESULTS, machine=REFERENCE_MACHINE)
    assert res.machine_info.get("num_cpu") == "2" and res.machine_info.get("gpu") == "none"
    steps = res.get("steps.Step.time_step_leapfrog")
    shares = res.get("steps.TaskShares.track_share")
    for version in "AB":                       # the versions the reference machine can run
        for n in DEFAULT_NS:
            for precision in ("sp", "dp", "dsp"):
                t = steps[(version, n, precision)]
                assert math.isfinite(t) and t > 0, (version, n, precision)
            total = sum(shares[(version, n, task)] for task in ("pairwise", "galactic", "integrate", "transfer"))
            assert abs(total - 100) < 1e-6
    # O(N^2): the largest N costs far more than the smallest
    assert steps[("A", 16384, "dp")] > 100 * steps[("A", 256, "dp")]
