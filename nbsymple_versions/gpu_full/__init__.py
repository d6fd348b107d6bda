"""Version E: pairwise and galactic forces in one kernel on 1..n GPUs (`devices=n` contiguous
slices of targets, round-robin over the physical GPUs), integration on all CPU cores."""
from ..gpu_pairwise import availability, build
from ..versions import Version


def _build(state, precision, **options):
    from ..kernels.cpu import THREADED
    return build(state, precision, THREADED, galactic=True, **options)


VERSION = Version("E", "gpu_full", pairwise="1..n GPUs", galactic="GPU (same kernel)", integrate="all CPU cores",
                  build=_build, availability=availability, options=("tile", "devices"))
