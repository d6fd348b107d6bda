"""Version D: pairwise forces on the GPU, galactic force and integration on all CPU cores."""
from ..gpu_pairwise import _unavailable
from ..versions import Version

VERSION = Version("D", "gpu_threaded", pairwise="GPU", galactic="all CPU cores", integrate="all CPU cores",
                  build=None, availability=_unavailable)
