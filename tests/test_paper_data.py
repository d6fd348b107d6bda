"""paper/data.py: the task-share table from the per-task timings when the TaskClock shares
are absent (each task from its own benchmark; tasks a version lacks count as zero)."""
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
    assert rows["A"]["pairwise"] == pytest.approx(75.0) and rows["A"]["transfer"] == 0.0
    assert rows["C"]["pairwise"] == pytest.approx(60.0) and rows["C"]["transfer"] == pytest.approx(20.0)
    assert all(math.isclose(sum(v for k, v in r.items() if k not in ("version", "n", "source")), 100.0) for r in table)
    assert {r["source"] for r in table} == {"measured"}


def test_no_task_timings_is_missing_data():
    with pytest.raises(MissingData, match="tasks.Tasks.time_pairwise"):
        task_share_table(results({"tasks.HostTasks.time_galactic": ([["A"], [256]], [1.0])}))
