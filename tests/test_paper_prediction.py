"""paper/prediction.py: the predicted task times of C, D and E (hand-computed cases), their rows
and curves in `nbsymple paper`'s outputs when the results have no GPU version, and measured GPU
results replacing them (a synthetic GPU results file built from the CPU fixture). The SASS count
is stated here (the kernels are compiled in one test only, where the toolchain is installed)."""
import csv
import json
import math
import shutil
from pathlib import Path

import pytest

from nbsymple_versions import paper
from nbsymple_versions.paper import prediction
from nbsymple_versions.paper.figures import step_curves
from nbsymple_versions.paper.prediction import (GPUS, LAUNCH, HostTimes, Kernel,
                                                evaluation_seconds, predict, step_tasks)
from nbsymple_versions.paper.results import load_results

FIXTURE = Path(__file__).parent / "data" / "asv_fixture"
H200 = GPUS["H200"]                     # 132 SMs at 1.98 GHz, PCIe 5.0 x16
TILED = Kernel("tiled", 25.5, 0.25, "fp64")
FUSED = Kernel("fused", 25.5, 0.25, "fp64")
CLOCK = 1.98e9
PCIE5 = 16 * 32e9 * 128 / 130 / 8      # 63.0 GB/s
LABEL = "predicted (SASS issue model, H200, commit cafe0123)"


# ----------------------------------------------------------------------------- arithmetic

def test_one_evaluation_by_hand():
    # N = 16384, tile 256: 64 blocks on 132 SMs, so one block on the busiest SM, 16384 sources
    t = evaluation_seconds(16384, TILED, H200, "dp")
    assert t["pairwise"] == pytest.approx(20e-6 + 256 * 16384 * 0.25 / CLOCK)          # 549.6 us
    assert t["transfer"] == pytest.approx(2 * 10e-6 + (16384 * 32 + 16384 * 24) / PCIE5)  # 34.6 us
    # N = 300 pads to 512 sources (2 blocks); sp records are 16 bytes, accelerations 12
    t = evaluation_seconds(300, TILED, H200, "sp")
    assert t["pairwise"] == pytest.approx(20e-6 + 256 * 512 * 0.25 / CLOCK)
    assert t["transfer"] == pytest.approx(20e-6 + (512 * 16 + 300 * 12) / PCIE5)
    # E's fused kernel writes float64 accelerations in every precision
    assert evaluation_seconds(300, FUSED, H200, "sp", fused_galactic=True)["transfer"] == \
        pytest.approx(20e-6 + (512 * 16 + 300 * 24) / PCIE5)
    # A100: PCIe 4.0, half the bandwidth; 108 SMs at 1.41 GHz
    t = evaluation_seconds(2 ** 17, TILED, GPUS["A100"], "dp")
    assert t["pairwise"] == pytest.approx(20e-6 + 5 * 256 * 2 ** 17 * 0.25 / 1.41e9)     # 512 blocks: 5 per SM
    assert t["transfer"] == pytest.approx(20e-6 + 2 ** 17 * 56 / (PCIE5 / 2))


def test_a_step_by_hand():
    host = HostTimes(galactic=4e-4, integrate=4e-5)
    pairwise = 20e-6 + 256 * 16384 * 0.25 / CLOCK
    transfer = 20e-6 + 16384 * 56 / PCIE5
    c = step_tasks("C", 16384, TILED, H200, host)
    assert c == pytest.approx({"pairwise": pairwise, "galactic": 4e-4, "integrate": 1.5 * 4e-5,
                               "transfer": transfer, "communicate": 0.0})
    e = step_tasks("E", 16384, FUSED, H200, host, scheme="si6a")     # 7 evaluations, 8 drifts, 7 kicks
    assert e == pytest.approx({"pairwise": 7 * pairwise, "galactic": 0.0, "integrate": 7.5 * 4e-5,
                               "transfer": 7 * transfer, "communicate": 0.0})


def test_beyond_the_n_measured_the_host_tasks_grow_as_n():
    """`Prediction.tasks` at an N above the largest whose host tasks were timed: the O(N) galactic force and
    drift-kick scaled from the largest as N (a mutation hunt: scaled as 1 / N, they passed every test)."""
    p = prediction.Prediction(H200, "cafe0123", {"C": TILED}, {"A": {1024: HostTimes(2e-5, 4e-6)}}, letters=("C",))
    measured, beyond = p.tasks("C", 1024), p.tasks("C", 4096)
    for task in ("galactic", "integrate"):
        assert beyond[task] == pytest.approx(4 * measured[task]), task


def test_multi_device_e_is_the_slowest_slice_plus_the_gather():
    host = HostTimes(galactic=1.0, integrate=0.0)
    n = 2 ** 17                          # 512 blocks: 4 per SM on one H200, 2 on each of two
    one = step_tasks("E", n, FUSED, H200, host)
    two = step_tasks("E", n, FUSED, H200, host, devices=2)
    assert one["pairwise"] == pytest.approx(LAUNCH["numba"] + 4 * 256 * n * 0.25 / CLOCK)
    assert two["pairwise"] == pytest.approx(2 * LAUNCH["numba"] + 2 * 256 * n * 0.25 / CLOCK)
    # every device gets all records; the largest slice's accelerations come down; 2 copies each way
    assert two["transfer"] == pytest.approx(4 * 10e-6 + (n * 32 + n // 2 * 24) / PCIE5)
    # below one block per SM a second device buys nothing but a launch
    small = [step_tasks("E", 16384, FUSED, H200, host, devices=k)["pairwise"] for k in (1, 2)]
    assert small[1] - small[0] == pytest.approx(LAUNCH["numba"])


# ----------------------------------------------------------------------------- in the paper's outputs

def _results_file(root: Path) -> Path:
    return next(p for p in root.glob("*/*.json") if p.name != "machine.json")


def _set(d: dict, name: str, params: list[list[str]], values: list):
    """Benchmark `name` of results file `d` holds `values`, flat over the product of `params` (repr strings)."""
    d["results"][name] = [values, params] + [None] * (len(d["result_columns"]) - 2)


def results_copy(tmp_path, gpu_versions: str = "") -> Path:
    """The CPU fixture with the host tasks of A and B at N = 256 (`tasks.HostTasks`, which it
    predates) and, for `gpu_versions`, synthetic measured rows of a GPU machine (an H200)."""
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    path = _results_file(root)
    d = json.loads(path.read_text())
    _set(d, "tasks.HostTasks.time_galactic", [["'A'", "'B'"], ["256"]], [1.2e-5, 8.7e-6])
    _set(d, "tasks.HostTasks.time_integrate", [["'A'", "'B'"], ["256"]], [8.7e-6, 1.2e-5])
    if gpu_versions:
        versions = ["'A'", "'B'"] + [repr(v) for v in gpu_versions]
        cpu = d["results"]["steps.TaskShares.track_share"][0]
        _set(d, "steps.TaskShares.track_share", [versions, ["256"], ["'pairwise'", "'galactic'", "'integrate'",
                                                                      "'transfer'"]],
             cpu + [50.0, 20.0, 20.0, 10.0] * len(gpu_versions))
        for name in ("steps.Step.time_step_leapfrog", "tasks.Tasks.time_pairwise"):
            cpu = d["results"][name][0]
            _set(d, name, [versions, ["256"], ["'sp'", "'dp'", "'dsp'"]],
                 cpu + [1e-4, 2e-4 if "Step" in name else 5e-5, 1.5e-4] * len(gpu_versions))
        machine = path.parent / "machine.json"
        machine.write_text(json.dumps({**json.loads(machine.read_text()), "gpu": "NVIDIA H200"}))
    path.write_text(json.dumps(d))
    return root


@pytest.fixture
def stated_kernels(monkeypatch):
    """The SASS count as stated (numba dp, sm_90: 25.5 instructions, 0.25 SM clocks per interaction)."""
    monkeypatch.setattr(prediction, "count_kernels",
                        lambda arch, tile, backend, precision, names: ({k: Kernel(k, 25.5, 0.25, "fp64", tile)
                                                                        for k in names}, "cafe0123"))


def _run(results: Path, out: Path, *extra) -> int:
    return paper.main(["--results", str(results), "--out", str(out), "--no-science", "--quiet", *extra])


def test_without_gpu_results_c_d_e_are_predicted_and_labelled(tmp_path, stated_kernels):
    results = results_copy(tmp_path)
    out = tmp_path / "plots"
    assert _run(results, out) == 0
    rows = {(r["version"], r["n"]): r for r in csv.DictReader((out / "task_shares.csv").open())}
    assert rows["A", "256"]["source"] == "measured"
    pred = predict(load_results(results), H200)
    for v in "CDE":
        assert rows[v, "256"]["source"] == LABEL
        assert float(rows[v, "256"]["pairwise_percent"]) == pytest.approx(pred.shares(v, 256)["pairwise"], rel=1e-5)
    assert float(rows["E", "256"]["galactic_percent"]) == 0.0
    md = (out / "task_shares.md").read_text()
    assert f"| C | 256 | {pred.shares('C', 256)['pairwise']:.2f} |" in md and md.count(LABEL) >= 3
    # the figures' data: C-E dashed in both panels, their legend naming the prediction and the GPU
    panels = step_curves(load_results(results), pred)
    assert [(s, sorted(p)) for s, _, p in panels] == [("leapfrog", list("CDE")), ("si6a", list("CDE"))]
    n, t = panels[0][2]["C"]
    assert list(n) == [256] and t[0] == pytest.approx(pred.step("C", 256))
    assert pred.legend() == "predicted, H200" and pred.legend("leapfrog") == "predicted leapfrog, H200"
    # REPORT.md: the rows' label, the model's inputs, what it reproduces and what it cannot
    report = (out / "REPORT.md").read_text()
    for text in (LABEL, "25.5 instructions per interaction", "63.0 GB/s each way, 10 us per copy",
                 "20 us (numba)", "tasks.HostTasks.time_galactic",
                 "| 256 | 12 us | 8.7 us | 8.7 us | 8.7 us |",   # B's 12 us bounded by A's
                 "Task 1's share at the largest N", "spends the largest share outside task 1",
                 "Not in the model", "PCIe contention"):
        assert text in report, text
    assert "prediction and measurement" not in report


def test_a_measured_gpu_result_replaces_the_prediction(tmp_path, stated_kernels):
    results = results_copy(tmp_path, gpu_versions="C")
    out = tmp_path / "plots"
    assert _run(results, out) == 0
    rows = {(r["version"], r["n"]): r for r in csv.DictReader((out / "task_shares.csv").open())}
    assert rows["C", "256"]["source"] == "measured" and rows["C", "256"]["pairwise_percent"] == "50"
    assert rows["D", "256"]["source"] == rows["E", "256"]["source"] == LABEL     # not measured: still predicted
    res = load_results(results)
    pred = predict(res, H200)
    panels = step_curves(res, pred)
    assert "C" in panels[0][1] and sorted(panels[0][2]) == ["D", "E"]             # C's curve is the measured one
    report = (out / "REPORT.md").read_text()
    assert "## GPU versions: prediction and measurement" in report
    step, pairwise = pred.step("C", 256), pred.tasks("C", 256)["pairwise"]
    assert (f"| C | 256 | {step * 1e6:.3g} us | 200 us | {2e-4 / step:.2f} | {pairwise * 1e6:.3g} us | 50 us "
            f"| {5e-5 / pairwise:.2f} |") in report


def test_the_chosen_gpu_and_a_missing_input(tmp_path, stated_kernels, capsys):
    results = results_copy(tmp_path)
    assert _run(results, tmp_path / "a100", "--gpu-model", "a100") == 0
    assert "predicted (SASS issue model, A100, commit cafe0123)" in (tmp_path / "a100" / "task_shares.md").read_text()
    assert "31.5 GB/s each way" in (tmp_path / "a100" / "REPORT.md").read_text()
    # the fixture as committed predates tasks.HostTasks: one note, no predicted row, status 0
    capsys.readouterr()
    assert _run(FIXTURE, tmp_path / "plain") == 0
    assert "are not predicted: the results of commit f86a8e19 have no tasks.HostTasks" in capsys.readouterr().err
    assert "predicted" not in (tmp_path / "plain" / "task_shares.md").read_text()


def test_the_kernels_are_counted_from_their_sass():
    """The test extra installs ptxas and nvdisasm, so the count must succeed here (no skip)."""
    kernels, commit = prediction.count_kernels("sm_90", 256, "numba", "dp", ("fused", "tiled"))
    assert sorted(kernels) == ["fused", "tiled"] and commit
    for k in kernels.values():
        assert 10 < k.instructions < 60 and k.bound in ("issue", "fp64") and math.isfinite(k.clocks) and k.clocks > 0


def test_threaded_host_times_are_bounded_by_the_serial_ones():
    """B's host time at an N is at most A's there (a slower one is a descheduled thread, not the
    kernel); where A was not timed, B's stands."""
    host = {"A": {256: prediction.HostTimes(1e-5, 2e-5)},
            "B": {256: prediction.HostTimes(3e-6, 2e-3), 1024: prediction.HostTimes(4e-6, 5e-3)}}
    bounded = prediction.bounded_by_serial(host)
    assert bounded["A"] == host["A"]
    assert bounded["B"][256] == prediction.HostTimes(3e-6, 2e-5)
    assert bounded["B"][1024] == host["B"][1024]


def test_the_speedup_figures_predicted_curves_name_their_scheme(tmp_path, stated_kernels, monkeypatch):
    """speedup.png draws leapfrog solid and SI6A dotted, and the predicted C-E dashed: their legend
    said "(predicted, H200)" under a legend keyed "leapfrog" solid and "SI6A" dotted, so a reader
    could not tell which scheme the dashed speed-ups are of (leapfrog). They say it."""
    from nbsymple_versions.paper import figures
    kept = []
    monkeypatch.setattr(figures, "save", lambda fig, path, source: kept.append(fig) or Path(path))
    res = load_results(results_copy(tmp_path))
    figures.speedup(res, tmp_path / "s.png", predict(res, H200))
    labels = [t.get_text() for t in kept[0].axes[0].get_legend().get_texts()]
    dashed = [lab for lab in labels if "predicted" in lab]
    assert len(dashed) == 3 and all("(predicted leapfrog, H200)" in lab for lab in dashed), labels
    assert "leapfrog" in labels and "SI6A" in labels


def test_the_kernel_row_gives_the_rate_of_the_whole_gpu(tmp_path, stated_kernels):
    """REPORT.md's row of a kernel: SMs x clock / SM clocks per interaction, interactions per second on the
    whole GPU (H200: 132 x 1.98 GHz / 0.25 = 1.05e12; a mutation hunt: the clock taken in MHz passed)."""
    from nbsymple_versions.paper.report import prediction_lines
    res = load_results(results_copy(tmp_path))
    text = "\n".join(prediction_lines(res, predict(res, H200)))
    assert "0.25 SM clocks per interaction: 1.05e+12 interactions/s on the whole GPU" in text, text



def test_the_predicted_step_table_and_host_shares_read_as_the_model_computes_them(tmp_path, stated_kernels):
    """REPORT.md's predicted step of each GPU version: the sum of its tasks, E's galactic force in task 1;
    the share of the host tasks to one decimal (a mutation hunt: the step as tasks 1 and 4 alone, E's
    galactic time shown, two decimals, each passed every test); one block said as one ("the 1 blocks ... occupy")."""
    from nbsymple_versions.paper.report import prediction_lines
    res = load_results(results_copy(tmp_path))
    lines = prediction_lines(res, predict(res, H200))
    assert "| C | 256 | 28.3 us | 12 us | 13 us | 20.2 us | 73.6 us |" in lines
    assert "| E | 256 | 28.3 us | in task 1 | 13 us | 20.2 us | 61.6 us |" in lines
    assert ("- Share of the O(N) host tasks (2 galactic, 3 integrate): 34.1 % (C), 31.0 % (D), 21.2 % (E): as in "
            "the paper, C (one core) spends the largest share outside task 1.") in lines
    assert any("at N = 256 the 1 block of 256 threads occupies 1 of the 132 SMs" in line for line in lines), lines


def test_the_n_where_task_1_would_pass_the_paper_s_share_is_said_to_two_digits():
    """`prediction_findings`: the N from which the model puts task 1 above the paper's share, 5.14e7, reads 5.1e7
    (a mutation hunt: three digits passed every test)."""
    from types import SimpleNamespace
    from nbsymple_versions.paper.report import prediction_findings
    model = SimpleNamespace(letters=("C",), ns=lambda v: [1024], n_for_share=lambda v: 5.14e7,
                            shares=lambda v, n: {"pairwise": 99.5, "galactic": 0.3, "integrate": 0.2},
                            gpu=SimpleNamespace(device=SimpleNamespace(clock_ghz=1.98, sms=132)),
                            kernels={"C": SimpleNamespace(tile=256)})
    assert prediction_findings(model)[0].endswith("the model puts task 1 above 99.8 % from N = 5.1e7 (C).")
