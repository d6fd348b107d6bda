"""paper/data.py: the task-share table from the per-task timings when the TaskClock shares
are absent (each task from its own benchmark; tasks a version lacks count as zero, a task it has
but that was not timed leaves its row out); the speed-ups, the conservation table and the local
slopes, each from results whose figures differ so that a mix-up shows."""
import math

import pytest

from nbsymple_versions.paper.data import MissingData, task_share_table
from nbsymple_versions.paper.results import Results


def results(rows: dict) -> Results:
    """Results holding `rows` {benchmark: (param lists, flat values)}."""
    res = Results("m", "0123abcd", 0, "py", {})
    for name, (params, values) in rows.items():
        res._rows[name] = {"params": [[repr(v) for v in p] for p in params], "result": values}
    return res


def test_shares_from_the_task_timings():
    res = results({
        "tasks.Tasks.time_pairwise": ([["A", "C"], [256], ["sp", "dp"]], [9.0, 6.0, 9.0, 3.0]),
        "tasks.HostTasks.time_galactic": ([["A", "C"], [256]], [1.0, 0.5]),
        "tasks.HostTasks.time_integrate": ([["A", "C"], [256]], [1.0, 0.5]),
        "tasks.Transfer.time_transfer": ([["C"], [256], ["sp", "dp"]], [9.0, 1.0]),
    })
    table, origin = task_share_table(res)
    assert "dp" in origin
    rows = {r["version"]: r for r in table}
    # a leapfrog step: one force evaluation (pairwise, galactic, transfer) and 1.5 of integrate's
    # drift and kick (found by a hunt: integrate was counted once, its share too small)
    assert rows["A"]["pairwise"] == pytest.approx(100 * 6 / 8.5) and rows["A"]["transfer"] == 0.0
    assert rows["A"]["integrate"] == pytest.approx(100 * 1.5 / 8.5)
    assert rows["C"]["pairwise"] == pytest.approx(100 * 3 / 5.25) and rows["C"]["transfer"] == pytest.approx(100 / 5.25)
    assert all(math.isclose(sum(v for k, v in r.items() if k not in ("version", "n", "source")), 100.0) for r in table)
    assert {r["source"] for r in table} == {"measured"}


def test_no_task_timings_is_missing_data():
    with pytest.raises(MissingData, match="tasks.Tasks.time_pairwise"):
        task_share_table(results({"tasks.HostTasks.time_galactic": ([["A"], [256]], [1.0])}))


def test_a_task_not_timed_leaves_its_row_out_and_is_named():
    """The H200's first asv run timed the host tasks at the large N only: C at N = 1024 had its
    pairwise and transfer timings, and its galactic and integration ones were NaN (not run). Its
    share table drew them as 0 % "measured"; now the row is left out and the origin says why.
    E has no galactic task (in its kernel), so E's row needs only the integration timing."""
    nan = math.nan
    res = results({
        "tasks.Tasks.time_pairwise": ([["C", "E"], [1024, 16384], ["dp"]], [1.0, 2.0, 1.0, 2.0]),
        "tasks.HostTasks.time_galactic": ([["C", "E"], [1024, 16384]], [nan, 1.0, nan, nan]),
        "tasks.HostTasks.time_integrate": ([["C", "E"], [1024, 16384]], [nan, 1.0, 0.5, 1.0]),
        "tasks.Transfer.time_transfer": ([["C", "E"], [1024, 16384], ["dp"]], [1.0, 1.0, 0.5, 1.0]),
    })
    table, origin = task_share_table(res)
    assert sorted((r["version"], r["n"]) for r in table) == [("C", 16384), ("E", 1024), ("E", 16384)]
    assert "C left out at N = 1024 (galactic, integrate)" in origin and "E left out" not in origin
    e = {r["n"]: r for r in table if r["version"] == "E"}
    assert e[1024]["galactic"] == 0.0 and e[1024]["pairwise"] == pytest.approx(100 * 1 / 2.25)


def test_speedups_are_the_reference_time_over_the_version_time_at_each_common_n():
    """t_A / t_B where both were measured: B twice as fast as A at N = 256 and four times at 1024
    is a speed-up of 2 and 4 (above 1: faster), and N that A lacks is left out."""
    from nbsymple_versions.paper.data import STEP, speedups
    res = results({STEP["leapfrog"]: ([["A", "B"], [256, 1024, 4096], ["dp"]],
                                      [2.0, 8.0, math.nan, 1.0, 2.0, 30.0])})
    n, s = speedups(res)["B"]
    assert list(n) == [256, 1024] and list(s) == [2.0, 4.0]


def test_the_largest_n_share_is_taken_at_each_versions_largest_n():
    """Task 1's share "at the largest N" (the paper's > 99.8 %) is that of each version's own
    largest N, whatever the rows' order."""
    from nbsymple_versions.paper.data import largest_n_shares
    row = lambda v, n, p: {"version": v, "n": n, "pairwise": p, "galactic": 0.0, "integrate": 0.0,
                           "transfer": 0.0, "communicate": math.nan, "source": "measured"}
    table = [row("A", 4096, 99.9), row("A", 256, 90.0), row("A", 1024, 98.0), row("B", 256, 80.0)]
    assert largest_n_shares(table) == [("A", 4096, 99.9, "measured"), ("B", 256, 80.0, "measured")]


def test_the_conservation_table_puts_each_figure_in_its_column():
    """The per-step and the 1000-step energy errors land in their own columns, as do the internal
    energy and angular momentum errors (a mutation hunt: two benchmarks swapped passed)."""
    from nbsymple_versions.paper.data import ANGULAR, ENERGY, ENERGY_STEP, INTERNAL, conservation_table
    params = [["leapfrog", "si6a"], ["dp"]]
    res = results({ENERGY_STEP: (params, [1e-10, 1e-14]), ENERGY: (params, [1e-8, 1e-12]),
                   INTERNAL: (params, [1e-6, 1e-11]), ANGULAR: (params, [1e-13, 1e-15])})
    assert conservation_table(res)[("si6a", "dp")] == {"per_step": 1e-14, "after_1000": 1e-12, "internal": 1e-11,
                                                       "angular": 1e-15}


def test_the_local_slope_is_taken_between_each_versions_two_largest_n():
    """B's step of 1, 10 and 160 ms at N = 256, 1024 and 4096: its slope between the two largest
    is log(16) / log(4) = 2.00, not the 1.83 over the whole range (a mutation hunt: the slope
    over other N passed, the tests having two N per version)."""
    from nbsymple_versions.paper.data import STEP
    from nbsymple_versions.paper.report import findings
    res = results({STEP["leapfrog"]: ([["B"], [256, 1024, 4096], ["dp"]], [1e-3, 1e-2, 0.16])})
    assert "B: 2.00 (N = 1024 to 4096)" in " ".join(findings(res, None))


def test_the_dsp_over_dp_ratio_is_dsp_time_over_dp_time():
    """B's dp leapfrog step 2 ms, its dsp step 1 ms at N = 1024: "dsp / dp" reads 0.50 (a mutation
    hunt: the ratio inverted, 2.00, passed)."""
    from nbsymple_versions.paper.data import STEP
    from nbsymple_versions.paper.report import findings
    res = results({STEP["leapfrog"]: ([["B"], [1024], ["dp", "dsp"]], [2e-3, 1e-3])})
    assert "dsp / dp time per leapfrog step: B 0.50 (N = 1024)" in " ".join(findings(res, None))


def test_sp_over_dp_orders_of_magnitude_have_the_sign_of_dp_being_better(tmp_path):
    """SI6A after 1000 steps: sp 1e-6, dp 1e-12, so dp is 6.0 orders of magnitude better (a
    mutation hunt: log10(dp / sp), -6.0, passed)."""
    from nbsymple_versions.paper.data import ENERGY, ENERGY_STEP
    from nbsymple_versions.paper.tables import write_conservation
    params = [["si6a"], ["sp", "dp"]]
    res = results({ENERGY_STEP: (params, [1e-8, 1e-14]), ENERGY: (params, [1e-6, 1e-12])})
    write_conservation(res, tmp_path / "conservation.md", "test")
    assert "conserves energy (total) 6.0 orders of magnitude better than sp" in \
        (tmp_path / "conservation.md").read_text()


def test_a_total_error_at_one_rounding_of_e_is_no_measured_ratio(tmp_path):
    """The committed results: SI6A dp's total error after 1000 steps is 2.01e-16, one float64
    rounding of E (E0 = -1.8e4: ulp / |E0| = 2.0e-16), sp's 4.27e-10. The report said dp conserves
    energy (total) "6.3 orders of magnitude better than sp (paper: 7 to 8)", while the same
    change in internal units (9.54e-13 against 1.84e-05) is 7.3 orders: the 6.3 was E's rounding.
    A total error within two roundings of E is said to be at its resolution, and the ratio is a
    lower bound; one far above it is a measured ratio as before."""
    from nbsymple_versions.paper.data import ENERGY, ENERGY_STEP, INTERNAL
    from nbsymple_versions.paper.tables import write_conservation
    params = [["si6a"], ["sp", "dp"]]
    res = results({ENERGY_STEP: (params, [7.08e-12, 2.01e-16]), ENERGY: (params, [4.27e-10, 2.01e-16]),
                   INTERNAL: (params, [1.84e-5, 9.54e-13])})
    write_conservation(res, tmp_path / "conservation.md", "test")
    text = (tmp_path / "conservation.md").read_text()
    assert "conserves energy (total) 6.3 orders of magnitude better" not in text
    assert "conserves energy (total) at least 6.3 orders of magnitude better than sp" in text
    assert "conserves energy (internal) 7.3 orders of magnitude better than sp" in text
    assert "| SI6A | dp | 2.01e-16 (at E's float64 resolution) | 2.01e-16 (at E's float64 resolution) |" in text
    assert "below the paper's range)" not in text          # a rounding of E is not below the paper's 1.4e-14
    assert "| SI6A | sp | 7.08e-12 | 4.27e-10 |" in text


def test_the_conservation_table_says_the_n_and_seed_its_errors_come_from(tmp_path):
    """The errors of `accuracy.Conservation` depend on N (the internal error at dt = 5e-4 T grows with
    the number of close pairs), yet conservation.md named dt and the step count alone: N = 1024,
    seed 1, version B on one thread were nowhere in the table or REPORT.md. They are stated, and are
    the benchmark's own."""
    from benchmarks.accuracy import Conservation
    from benchmarks.grid import CONSERVATION_N, DT
    from nbsymple_versions.paper.data import CONSERVATION_SETUP, ENERGY, ENERGY_STEP
    from nbsymple_versions.paper.tables import write_conservation
    assert CONSERVATION_SETUP == {"n": CONSERVATION_N, "seed": Conservation.seed, "version": Conservation.letter,
                                  "steps": Conservation.steps, "dt": DT}
    assert Conservation.run_threads == 1 and Conservation.version == "1"     # what the sentence says, or bump both
    params = [["si6a"], ["sp", "dp"]]
    write_conservation(results({ENERGY_STEP: (params, [1e-8, 1e-14]), ENERGY: (params, [1e-6, 1e-12])}),
                       tmp_path / "conservation.md", "test")
    text = (tmp_path / "conservation.md").read_text()
    assert "with N = 1024, seed 1, version B on one thread" in text and "1000 steps of dt = 5e-4 T" in text


def test_a_figure_outside_the_papers_range_is_said_to_lie_below_or_above_it():
    """conservation.md's comparison of SI6A dp's per-step error with the paper's 1.4e-14 to 8.8e-14 (a
    mutation hunt: below and above swapped passed every test)."""
    from nbsymple_versions.paper.data import PAPER_SI6A_DP_ENERGY_PER_STEP as paper
    from nbsymple_versions.paper.tables import _within
    lo, hi = paper
    assert _within(hi * 10, paper) == "above the paper's range"
    assert _within(lo / 10, paper) == "below the paper's range"
    assert _within((lo + hi) / 2, paper) == "within the paper's range"


def test_the_load_said_is_that_of_the_run_whose_load_peaked_highest():
    """`load_problem`: of the runs' load records, the one whose 1-minute load reached the most is said, with
    its own median (a mutation hunt: the record of the highest median passed)."""
    from nbsymple_versions.paper.data import load_phrase, load_problem
    from nbsymple_versions.paper.results import Results
    provenance = [{"load_average": {"min": 0.1, "median": 0.5, "max": 3.0, "cores": 2}},
                  {"load_average": {"min": 2.0, "median": 2.4, "max": 2.5, "cores": 2}}]
    res = Results("m", "a" * 40, 0, "3.11", {}, provenance=provenance)
    assert "the 1-minute load average reached 3 (median 0.5) on 2 cores" in load_problem(res)
    assert load_phrase(res).startswith("TAKEN UNDER LOAD (1-min load up to 3 on 2 cores)")


def test_a_threaded_host_task_is_set_against_the_fastest_serial_kernel():
    """`data._waited`: a threaded host task more than 3x the fastest serial kernel's time at its N is said to
    have waited, whichever serial version is slower (a mutation hunt: the slowest serial time passed)."""
    from nbsymple_versions.paper.data import _waited
    times = {("A", 256): {"galactic": 1e-3}, ("B", 256): {"galactic": 5e-3}, ("C", 256): {"galactic": 1e-2}}
    [said], cells = _waited(times)
    assert said.startswith("B's threaded host tasks took more than the serial kernel's (galactic at N = 256 5x A's)")
    assert cells == {("B", 256)}


def test_a_one_core_machine_and_the_threads_of_the_threaded_versions_are_shown():
    """`describe_machine`: machine.json's num_cpu of 1 is a count (shown as 1, not "?"), and the threads are
    the most any version ran (B's 2, not A's 1: the threads of the threaded host work) (a mutation hunt)."""
    from nbsymple_versions.paper.data import THREADS, describe_machine
    from nbsymple_versions.paper.results import Results
    row = {"params": [["'A'", "'B'", "'C'"]], "result": [1.0, 2.0, 1.0]}
    res = Results("m-1cores-nogpu", "a" * 40, 0, "3.11", {"num_cpu": "1", "ram": "1 GiB"}, _rows={THREADS: row})
    m = describe_machine(res)
    assert (m["num_cpu"], m["ram"], m["threads"]) == ("1", "1 GiB", "2"), m


def test_a_machine_named_nogpu_has_no_gpu_and_one_named_by_its_gpu_has_it():
    """`describe_machine` without a GPU in machine.json: the device from `make bench`'s machine name, whose
    tail after "cores-" is the GPU's or "nogpu" (a mutation hunt: "nogpu" shown as a GPU's name passed)."""
    from nbsymple_versions.paper.data import describe_machine
    from nbsymple_versions.paper.results import Results
    for machine, device in (("amd-epyc-znver3-avx2-2cores-nogpu", "no GPU (CPU only)"),
                            ("amd-epyc-9r14-znver4-avx512-16cores-1x-nvidia-h200", "1x-nvidia-h200")):
        assert describe_machine(Results(machine, "a" * 40, 0, "3.11", {}))["device"] == device


def test_a_gpu_version_with_results_is_compared_and_not_said_to_have_none():
    """C measured beside B (D and E not): C is set against B, and no sentence says the GPU versions have no
    results (a mutation hunt: "No GPU versions (C-E) have results" where only some lacked them passed)."""
    from nbsymple_versions.paper.data import STEP
    from nbsymple_versions.paper.report import findings
    res = results({STEP["leapfrog"]: ([["B", "C"], [1024], ["dp"]], [2e-3, 1e-3])})
    text = " ".join(findings(res, None))
    assert "Version C is faster than B at every N measured (no noise recorded: by the values alone)." in text, text
    assert "No GPU versions" not in text, text


def test_task_1_s_share_is_said_above_at_or_below_the_papers_as_shown():
    """REPORT.md's task-1 sentence: a share shown as 99.80 % is at the paper's 99.8 %, one of 99.90 % above it,
    one of 99.50 % below it, each version named once on its side (a mutation hunt: a version at it also said
    below it, one above it said at it, and "so do all versions here" beside one at it, passed every test)."""
    from nbsymple_versions.paper.data import MEASURED
    from nbsymple_versions.paper.report import findings

    def said(**pairwise):
        shares = [{"version": v, "n": 1024, "pairwise": p, "source": MEASURED} for v, p in pairwise.items()]
        return [s for s in findings(results({}), shares) if s.startswith("At the largest N, task 1")]

    head = "At the largest N, task 1 (pairwise) takes 99.90 % of the step for A (N = 1024), "
    assert said(A=99.9, B=99.7983) == [head + "99.80 % of the step for B (N = 1024); the paper reports above 99.8 % "
                                       "at its largest N; B is at it to the 0.01 % shown."]
    assert said(A=99.9, B=99.5) == [head + "99.50 % of the step for B (N = 1024); the paper reports above 99.8 % at "
                                    "its largest N; B below it: the O(N) tasks still weigh more at these N."]
    assert said(A=99.9, B=99.95)[0].endswith("; the paper reports above 99.8 % at its largest N, and so do all "
                                             "versions here.")


def test_a_threaded_host_task_at_exactly_3x_the_serial_one_is_not_said_to_have_waited():
    """`data._waited`: more than WAITED (3) times the serial kernel's time is a wait, 3 times itself is not (a
    mutation hunt: "more than" read as "at least" passed every test)."""
    from nbsymple_versions.paper.data import _waited
    assert _waited({("A", 256): {"integrate": 1.0}, ("B", 256): {"integrate": 3.0}}) == ([], set())
    [said], _ = _waited({("A", 256): {"integrate": 1.0}, ("B", 256): {"integrate": 3.5}})
    assert said.startswith("B's threaded host tasks took more than the serial kernel's (integrate at N = 256 4x A's)")


def test_a_gpu_step_measured_without_its_pairwise_task_is_set_beside_the_prediction():
    """`predicted_vs_measured`: C's step measured at N = 1024, its task 1 not: the row is kept, task 1 NaN (shown
    "not measured") (a mutation hunt: a row kept only where both were measured passed every test)."""
    from types import SimpleNamespace
    from nbsymple_versions.paper.data import STEP, predicted_vs_measured
    prediction = SimpleNamespace(letters=("C",), ns=lambda v: [1024], step=lambda v, n: 1e-3,
                                 tasks=lambda v, n: {"pairwise": 5e-4})
    [row] = predicted_vs_measured(results({STEP["leapfrog"]: ([["C"], [1024], ["dp"]], [2e-3])}), prediction)
    assert (row["version"], row["n"], row["step"]) == ("C", 1024, (1e-3, 2e-3))
    assert row["pairwise"][0] == 5e-4 and math.isnan(row["pairwise"][1])


def test_the_task_shares_tables_number_the_tasks_from_1_and_show_each_share_as_written(tmp_path):
    """task_shares.md: the tasks numbered 1 to 5 as the paper and the text number them, each share to two
    decimals in the table and in the largest-N sentence, a predicted row said so there, the sentence for one
    version as for several; task_shares.csv: six digits (a mutation hunt: tasks numbered from 0, one decimal in
    the sentence, the sentence only for several versions, each passed every test)."""
    from nbsymple_versions.paper.data import MEASURED
    from nbsymple_versions.paper.tables import write_task_shares_csv, write_task_shares_md

    def row(v, n, pairwise, galactic, integrate, source=MEASURED):
        return {"version": v, "n": n, "pairwise": pairwise, "galactic": galactic, "integrate": integrate,
                "transfer": 0.0, "communicate": math.nan, "source": source}
    a = [row("A", 256, 95.1234, 3.0, 1.8766), row("A", 1024, 99.4563, 0.3, 0.2437)]
    c = [row("C", 1024, 98.7654, 0.6, 0.6346, "predicted (H100)")]
    write_task_shares_md(a + c, "test", tmp_path / "task_shares.md", "test")
    lines = (tmp_path / "task_shares.md").read_text().splitlines()
    assert "| version | N | 1 pairwise [%] | 2 galactic [%] | 3 integrate [%] | 4 transfer [%] | 5 communicate [%] " \
           "| source |" in lines
    assert "| A | 1024 | 99.46 | 0.30 | 0.24 | 0.00 |  | measured |" in lines
    assert "| C | 1024 | 98.77 | 0.60 | 0.63 | 0.00 |  | predicted (H100) |" in lines
    assert lines[-1] == ("At the largest N of each version, task 1 takes 99.46 % (A, N = 1024), 98.77 % (C, N = 1024, "
                         "predicted) of the step (paper: above 99.8 % at its largest N).")
    write_task_shares_md(a, "test", tmp_path / "task_shares.md", "test")
    assert (tmp_path / "task_shares.md").read_text().splitlines()[-1] == (
        "At the largest N of each version, task 1 takes 99.46 % (A, N = 1024) of the step (paper: above 99.8 % at "
        "its largest N).")
    write_task_shares_csv(a + c, tmp_path / "task_shares.csv")
    assert (tmp_path / "task_shares.csv").read_text().splitlines()[2] == "A,1024,99.4563,0.3,0.2437,0,,measured"


def test_the_conservation_table_shows_each_row_in_order_and_each_figure_as_written(tmp_path):
    """conservation.md as a user reads it: the rows leapfrog then SI6A, sp then dp, each figure in its column
    to three digits, an angular error of 0 as 0 and one of 2e-16 as a number (E's resolution is the energy's),
    a row not measured as skipped, the internal column of results without it said so; the paper's L_x, L_y
    range; SI6A dp's per-step error at the paper's upper bound within its range; the orders of magnitude,
    total and internal, to one decimal (a mutation hunt: the rows in another order, an angular 0 or 2e-16
    said at E's resolution, the upper bound left out of the range, the L range replaced by the energy's,
    "at least" said of the internal ratio, the paper's 7 to 8 as 7 to 7, N for the step count in the text,
    each passed every test)."""
    from nbsymple_versions.paper.data import ANGULAR, ENERGY, ENERGY_STEP, INTERNAL
    from nbsymple_versions.paper.tables import write_conservation
    params = [["leapfrog", "si6a"], ["sp", "dp"]]
    rows = {ENERGY_STEP: (params, [3.33e-9, 4.44e-15, 5.55e-10, 8.8e-14]),
            ENERGY: (params, [1.11e-6, 2.22e-12, 3.33e-7, 3.33e-14]),
            INTERNAL: (params, [1.5e-5, math.nan, 4.5e-6, 4.5e-14]), ANGULAR: (params, [0.0, 1.23e-15, 2e-16, 3e-15])}
    path = tmp_path / "conservation.md"
    write_conservation(results(rows), path, "test")
    text = path.read_text()
    lines = text.splitlines()
    assert "about the Galactic centre after 1000 steps (the axisymmetric" in text
    at = lines.index("| leapfrog | sp | 3.33e-09 | 1.11e-06 | 1.50e-05 | 0 |")
    assert lines[at:at + 4] == ["| leapfrog | sp | 3.33e-09 | 1.11e-06 | 1.50e-05 | 0 |",
                                "| leapfrog | dp | 4.44e-15 | 2.22e-12 | skipped | 1.23e-15 |",
                                "| SI6A | sp | 5.55e-10 | 3.33e-07 | 4.50e-06 | 2.00e-16 |",
                                "| SI6A | dp | 8.80e-14 | 3.33e-14 | 4.50e-14 | 3.00e-15 |"]
    assert "| reported range | dp | 1.4e-14 to 8.8e-14 | | | 1.4e-13 to 6.0e-11 |" in lines
    assert "| none | leapfrog, SI6A | their Makefile builds no leapfrog in dp or dsp and no SI6A in sp" in text
    assert "| not known | leapfrog dp, dsp; SI6A sp | not known |" in text
    assert ("here SI6A dp (float64 throughout) has 8.80e-14 per step (within the paper's range); its internal-energy "
            "error after 1000 steps is 4.50e-14. Its angular-momentum error is 3.00e-15 (the paper") in text
    assert ("After 1000 steps SI6A dp conserves energy (total) 7.0 orders of magnitude better than sp (paper: 7 to 8, "
            "from an sp build that is not public).") in lines
    assert ("After 1000 steps SI6A dp conserves energy (internal) 8.0 orders of magnitude better than sp (paper: 7 "
            "to 8, from an sp build that is not public).") in lines
    rows[ENERGY] = (params, [1.11e-6, 2.22e-12, 4.27e-10, 2.01e-16])       # dp's total at E's resolution, ...
    rows[INTERNAL] = (params, [1.5e-5, 2.5e-11, 1.84e-5, 3.0e-16])         # its internal error below it
    write_conservation(results(rows), path, "test")
    text = path.read_text()
    assert ("conserves energy (total) at least 6.3 orders of magnitude better than sp (dp's figure is within two "
            "float64 roundings of E, so this is a lower bound, and the internal error measures the ratio; paper: "
            "7 to 8,") in text
    assert "conserves energy (internal) 10.8 orders of magnitude better than sp (paper: 7 to 8," in text
    del rows[INTERNAL]
    write_conservation(results(rows), path, "test")
    assert ("| SI6A | dp | 8.80e-14 | 2.01e-16 (at E's float64 resolution) | not measured in these results "
            "| 3.00e-15 |") in path.read_text().splitlines()



def test_the_speed_up_over_a_is_said_to_two_digits():
    """REPORT.md's speed-up of B over A: 3.456 at N = 1024 reads 3.5 (a mutation hunt: three digits passed every
    test, whose speed-ups were whole numbers)."""
    from nbsymple_versions.paper.data import STEP
    from nbsymple_versions.paper.report import findings
    res = results({STEP["leapfrog"]: ([["A", "B"], [256, 1024], ["dp"]], [1e-3, 1.6e-2, 5e-4, 4.63e-3])})
    assert any(s.endswith(" over A (1 thread): 2 at N = 256, 3.5 at N = 1024.") for s in findings(res, None))


def test_a_machine_with_a_gpu_named_in_machine_json_is_not_said_to_have_none():
    """No GPU version measured on a machine whose machine.json names its GPU: it has one, and their
    benchmarks were skipped or failed (a mutation hunt: any device naming "GPU" read as none passed)."""
    from nbsymple_versions.paper.data import STEP
    from nbsymple_versions.paper.report import findings
    res = Results("m", "0123abcd", 0, "py", {"gpu": "Radeon Pro GPU"})
    res._rows[STEP["leapfrog"]] = {"params": [["'A'"], ["256"], ["'dp'"]], "result": [1e-3]}
    assert ("No GPU versions (C-E) have results on this machine: it has a GPU (Radeon Pro GPU), but their step "
            "benchmarks were skipped or failed there.") in findings(res, None)


def test_task_1_s_share_is_compared_as_shown_and_of_measured_rows_alone():
    """REPORT.md's task-1 sentence: 99.76 % is below the paper's 99.8 % (shown to two decimals, not one), and a
    predicted row is left out of it (a mutation hunt: one decimal, and the predicted rows taken, each passed
    every test)."""
    from nbsymple_versions.paper.data import MEASURED
    from nbsymple_versions.paper.report import findings

    def said(*rows):
        shares = [{"version": v, "n": 1024, "pairwise": p, "source": source} for v, p, source in rows]
        return next(s for s in findings(results({}), shares) if s.startswith("At the largest N, task 1"))

    assert said(("A", 99.76, MEASURED)).endswith("; A below it: the O(N) tasks still weigh more at these N.")
    assert said(("A", 99.9, MEASURED), ("C", 50.0, "predicted (H100)")) == (
        "At the largest N, task 1 (pairwise) takes 99.90 % of the step for A (N = 1024); the paper reports above "
        "99.8 % at its largest N, and so do all versions here.")


def test_a_version_is_said_the_fastest_beyond_the_intervals_only_where_every_one_was_recorded():
    """`fastest_sentence`: B's time without a recorded interval makes the verdict by the values alone, even where
    A's has one (a mutation hunt: any one interval with width taken for all passed every test)."""
    from nbsymple_versions.paper.report import fastest_sentence
    assert fastest_sentence({"A": 2.0, "B": 1.0}, {"A": (1.9, 2.1), "B": (1.0, 1.0)}) == \
        "version B is the fastest (no noise recorded: by the values alone)"


def test_an_interpreter_path_of_any_system_is_not_shown():
    """REPORT.md's Python row: a Windows path to the interpreter is no version to show, as a POSIX one is not
    (a mutation hunt: only "/" looked for passed every test)."""
    from nbsymple_versions.paper.report import _python
    assert _python(Results("m", "0123abcd", 0, "C:\\Python311\\python.exe", {})) == \
        "the installed interpreter (asv --python=same)"
