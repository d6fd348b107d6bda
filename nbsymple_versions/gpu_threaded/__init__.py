"""Version D: pairwise forces on the GPU, galactic force and integration on all CPU cores."""
from ..gpu_pairwise import availability, build
from ..versions import Version


def _build(state, precision, **options):
    from ..kernels.cpu import THREADED
    return build(state, precision, THREADED, **options)


VERSION = Version("D", "gpu_threaded", pairwise="GPU", galactic="all CPU cores", integrate="all CPU cores",
                  build=_build, availability=availability, options=("tile", "devices"))
