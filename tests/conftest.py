import os

import numpy as np
import pytest


def pytest_configure(config):
    seed = os.environ.get("NBSYMPLE_TEST_SEED", "")
    if seed and not (seed.isdigit() and int(seed) < 2**32):
        raise pytest.UsageError(f"NBSYMPLE_TEST_SEED must be a whole number below 2**32 (a printed seed), got {seed!r}")


@pytest.fixture
def rng():
    """A fresh random generator per test, its seed printed (shown when the test fails);
    NBSYMPLE_TEST_SEED=<seed> replays a failure."""
    seed = int(os.environ.get("NBSYMPLE_TEST_SEED") or np.random.SeedSequence().entropy % (2**32))
    print(f"random seed {seed} (replay with NBSYMPLE_TEST_SEED={seed})")
    return np.random.default_rng(seed)
