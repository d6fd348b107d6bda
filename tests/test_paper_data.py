"""paper/data.py: the task-share table from the per-task timings when the TaskClock shares
are absent (each task from its own benchmark; tasks a version lacks count as zero, a task it has
but that was not timed leaves its row out)."""
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
