"""How many cases a hypothesis property of the suite draws, and which (`hostile`).

`make test` draws the same cases on every run (derandomised): a CI run cannot fail on a case no
earlier run met. A search for new ones draws fresh cases with NBSYMPLE_HOSTILE_RANDOM=1 (and
NBSYMPLE_HOSTILE_SCALE=K times as many); a case it finds goes into the test as an `@example`."""
import os

from hypothesis import HealthCheck, Phase, settings

SLOW = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much,
        HealthCheck.data_too_large]


def hostile(examples: int, commands: bool = True):
    """Settings of a property: `examples` cases (times NBSYMPLE_HOSTILE_SCALE, for a longer search).
    A failing case of `commands` (each a whole command: shrinking takes minutes) is reported as
    found, and shrunk to a minimal one with NBSYMPLE_HOSTILE_SHRINK=1; one run in process is shrunk."""
    scale = float(os.environ.get("NBSYMPLE_HOSTILE_SCALE") or 1)
    shrink = not commands or os.environ.get("NBSYMPLE_HOSTILE_SHRINK") == "1"
    phases = list(Phase) if shrink else [p for p in Phase if p not in (Phase.shrink, Phase.explain)]
    return settings(max_examples=max(1, round(examples * scale)), deadline=None, database=None,
                    suppress_health_check=SLOW, phases=phases, report_multiple_bugs=False,
                    derandomize=os.environ.get("NBSYMPLE_HOSTILE_RANDOM") != "1")
