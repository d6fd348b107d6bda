"""The five versions of the paper's Table 1, each a choice of where every task runs.

A version package holds only its `VERSION`: the letter, the Table 1 row and a `build`
function that composes a pairwise backend with host kernels. This module finds them by
letter and imports them lazily (GPU packages pull in numba-cuda, never a GPU at import).
"""
from dataclasses import dataclass
import importlib
from typing import Callable

from .core.clock import TaskClock
from .core.pipeline import ForcePipeline, check_precision


class VersionUnavailable(RuntimeError):
    """The version cannot run on this machine (one sentence says why)."""


@dataclass(frozen=True)
class Version:
    letter: str
    name: str
    pairwise: str        # where the O(N^2) pairwise forces run (paper Table 1)
    galactic: str        # where the O(N) galactic force runs
    integrate: str       # where the O(N) time integration runs
    build: Callable      # (state, precision, **options) -> (backend, host kernels)
    availability: Callable = lambda: (True, "")   # () -> (available, reason if not)
    options: tuple = ()  # names of the keyword options `build` takes (e.g. "tile", "devices")

    @property
    def description(self) -> str:
        return f"pairwise: {self.pairwise}; galactic: {self.galactic}; integration: {self.integrate}"

    def available(self) -> tuple[bool, str]:
        return self.availability()

    def pipeline(self, state, precision: str = "dp", clock: TaskClock | None = None, **options) -> ForcePipeline:
        """A ready force pipeline for `state` (masses, softening, units) in `precision`."""
        check_precision(precision)
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            takes = ", ".join(self.options) if self.options else "none"
            raise ValueError(f"version {self.letter} takes no option {', '.join(unknown)} (its options: {takes})")
        ok, reason = self.available()
        if not ok:
            raise VersionUnavailable(f"version {self.letter} is not available: {reason}")
        backend, host = self.build(state, precision, **options)
        return ForcePipeline(backend, host, state.units, clock)


_PACKAGES = {"A": "serial", "B": "threaded", "C": "gpu_pairwise", "D": "gpu_threaded", "E": "gpu_full"}
LETTERS = tuple(_PACKAGES)


def get_version(letter: str) -> Version:
    key = str(letter).upper()
    if key not in _PACKAGES:
        raise ValueError(f"unknown version {letter!r}; choose one of {', '.join(LETTERS)}")
    return importlib.import_module(f"{__package__}.{_PACKAGES[key]}").VERSION


def all_versions() -> list[Version]:
    return [get_version(letter) for letter in LETTERS]
