"""The suite's in-process runner of commands (tests/cli_call.py): a command called deep in pytest
and hypothesis runs as it does in its own process."""
import resource

from cli_call import on_a_fresh_stack

CALLS = 4000


def _leaf():
    return None


def _loop():
    for _ in range(CALLS):
        _leaf()
    return "done"


def _at_depth(depth: int, function, *args):
    return function(*args) if depth == 0 else _at_depth(depth - 1, function, *args)


def _page_faults(function, *args) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    assert function(*args) == "done"
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_a_loop_of_calls_at_any_depth_maps_no_memory_when_run_on_a_fresh_stack():
    """A loop of 4000 calls, started at every depth from 0 to 599 frames: run through
    `on_a_fresh_stack`, none maps fresh memory per call (page faults, not time: load does not
    change them). Called directly, CPython 3.11 maps and unmaps a 16 KiB chunk of its frame stack
    on every call at the depths where the called frame starts a new chunk: 4000 faults or more
    (the hostile `paper` cases spent half their time so)."""
    faults = {depth: _page_faults(_at_depth, depth, on_a_fresh_stack, _loop) for depth in range(600)}
    worst = max(faults, key=faults.get)
    assert faults[worst] < CALLS // 10, f"{faults[worst]} page faults for {CALLS} calls at depth {worst}"
