import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A fresh random generator per test run (seed printed on failure via the test id)."""
    seed = np.random.SeedSequence().entropy % (2**32)
    print(f"random seed {seed}")
    return np.random.default_rng(seed)
