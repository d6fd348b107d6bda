"""Version C: pairwise forces on the GPU, galactic force and integration on one CPU core."""
from ..versions import Version


def _unavailable():
    return False, "needs a CUDA GPU (not built yet)"


VERSION = Version("C", "gpu_pairwise", pairwise="GPU", galactic="1 CPU core", integrate="1 CPU core",
                  build=None, availability=_unavailable)
