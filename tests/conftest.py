import os

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh random generator per test, its seed printed (shown when the test fails);
    NBSYMPLE_TEST_SEED=<seed> replays a failure."""
    seed = int(os.environ.get("NBSYMPLE_TEST_SEED") or np.random.SeedSequence().entropy % (2**32))
    print(f"random seed {seed} (replay with NBSYMPLE_TEST_SEED={seed})")
    return np.random.default_rng(seed)
