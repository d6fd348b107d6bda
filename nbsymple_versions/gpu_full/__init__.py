"""Version E: pairwise and galactic forces on 1..n GPUs in one kernel, integration on all CPU cores."""
from ..gpu_pairwise import _unavailable
from ..versions import Version

VERSION = Version("E", "gpu_full", pairwise="1..n GPUs", galactic="GPU (same kernel)", integrate="all CPU cores",
                  build=None, availability=_unavailable)
