"""Host kernels made wrong on purpose, for the tests that a wrong kernel must fail (the asv
suite's set-up, `nbsymple check`)."""
from nbsymple_versions.core.pipeline import ForcePipeline


class GalaxyTwice:
    """Host kernels whose galactic acceleration is added twice (a hunt: the suite timed such a
    kernel, and `nbsymple check` passed it)."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def galactic(self, *args):
        self._inner.galactic(*args)
        self._inner.galactic(*args)


def with_galaxy_twice(forces: ForcePipeline) -> ForcePipeline:
    """`forces` with its host kernels' galactic acceleration added twice."""
    return ForcePipeline(forces.backend, GalaxyTwice(forces.host), forces.units, forces.clock)
