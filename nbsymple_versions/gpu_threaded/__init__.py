"""Version D, `gpu_threaded`: C's GPU engine for the pairwise forces with B's threaded host
kernels for the galactic force and the integration.

D owns no kernel and no engine: it is the composition of `gpu_pairwise.gpu_pipeline` with
`threaded.kernels.THREADED`, and takes C's options. Files: `__init__.py` (this composition).
"""
from ..gpu_pairwise import Options, availability, gpu_pipeline  # noqa: F401  (C's options and GPUs)

GPU = True
HOST_KERNELS = "threaded"
GALAXY_IN_KERNEL = False


def build_pipeline(state, precision, clock, options: Options):
    from ..threaded.kernels import THREADED
    return gpu_pipeline(state, precision, clock, options, THREADED)
