"""Version C: pairwise forces on the GPU, galactic force and integration on one CPU core."""
from ..versions import Version


def availability():
    """(available, reason): numba-cuda must see a GPU, or NUMBA_ENABLE_CUDASIM=1 must be set.
    Checked lazily (importing this package never touches numba-cuda or a GPU)."""
    try:
        from ..kernels import cuda
    except ImportError as e:    # numba-cuda (the `gpu` extra) is not installed
        return False, ("needs a CUDA GPU (or NUMBA_ENABLE_CUDASIM=1 for the simulator) and numba-cuda "
                       f"(pip install 'nbsymple-versions[gpu]'): {e}")
    return cuda.availability()


def build(state, precision, host, galactic=False, **options):
    """(backend, host kernels) of a GPU version; `options` are `tile` and `devices`."""
    from ..kernels import cuda
    return cuda.build(state, precision, host, galactic=galactic, **options)


def _build(state, precision, **options):
    from ..kernels.cpu import SERIAL
    return build(state, precision, SERIAL, **options)


VERSION = Version("C", "gpu_pairwise", pairwise="GPU", galactic="1 CPU core", integrate="1 CPU core",
                  build=_build, availability=availability, options=("tile", "devices"))
