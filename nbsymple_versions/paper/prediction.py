"""Predicted task times of the GPU versions C, D and E on a GPU this machine does not have.

Per force evaluation at N bodies on a GPU of S SMs at clock f, whose kernel costs c SM clocks
per pair interaction (the issue model of `nbsymple gpu-asm`, from the SASS of the kernels of
this commit), with tiles of T threads, Np = N padded to a multiple of T and B = Np / T blocks:

    pairwise   launch + ceil(B / S) T Np c / f       the busiest SM: whole blocks, padded sources
    transfer   2 latency + (Np r + N a) / bandwidth  r bytes per body record up (sp 16, dp and
                                                     dsp 32), a per acceleration down (3 floats
                                                     of the precision; E: 3 float64)

and per step of a scheme of e force evaluations, d drifts and k kicks (leapfrog 1, 2, 1;
SI6A 7, 8, 7), from the host kernels this machine's asv run timed (`tasks.HostTasks`: A's
serial ones for C, B's threaded ones for D and E, each at most A's: `bounded_by_serial`):

    galactic   e x the host's galactic force (E: inside the kernel, no task of its own)
    integrate  (d + k) / 2 x the host's one drift and one kick

E on k devices: every device gets all Np records and a slice of N/k targets over its own link;
the slowest slice sets the time, and its k launches, k uploads and k downloads (the gather) are
issued one after another. Left out: clocks below boost, latency the warps cannot hide
(occupancy), PCIe contention, the host's packing of body records and copying of accelerations
(which the TaskClock counts in task 4), and E's Galaxy inside the kernel (O(N) per thread).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import math

import numpy as np

from ..core.schemes import get_scheme
from ..core.vocabulary import TASKS
from ..instruments.gpu_asm import DEVICES, KINDS, count_all
from ..instruments.gpu_asm.model import Device
from ..gpu_pairwise.engine import slices
from ..gpu_pairwise.options import BACKENDS, DEFAULT_TILE, KERNEL_KINDS
from ..gpu_pairwise.records import WIDTH, padded, real_type
from ..instruments.provenance import git_commit
from ..versions import GPU_LETTERS, TABLE, get_version
from .data import PAPER_PAIRWISE_SHARE, TASK_TIMES, MissingData
from .results import Results

MODEL = "SASS issue model"


@dataclass(frozen=True)
class Link:
    """A host-device link: bytes per second in each direction, and seconds per copy (the
    driver call and its share of the stream synchronise)."""
    name: str
    bandwidth: float
    latency: float


# raw rate per direction: 16 lanes x 32 GT/s (PCIe 5.0) or 16 GT/s (4.0), 128b/130b encoding
PCIE5 = Link("PCIe 5.0 x16", 16 * 32e9 * 128 / 130 / 8, 10e-6)
PCIE4 = Link("PCIe 4.0 x16", 16 * 16e9 * 128 / 130 / 8, 10e-6)


@dataclass(frozen=True)
class Gpu:
    """A GPU model the prediction is for: its SASS target (device figures in `gpu_asm.DEVICES`)
    and its link to the host."""
    name: str
    arch: str
    link: Link

    @property
    def device(self) -> Device:
        return DEVICES[self.arch]


GPUS = {"H200": Gpu("H200", "sm_90", PCIE5), "B200": Gpu("B200", "sm_100", PCIE5),
        "A100": Gpu("A100", "sm_80", PCIE4)}
DEFAULT_GPU = "H200"
# seconds from a kernel launch in Python to the GPU starting it (docs/gpu.md)
LAUNCH = {"numba": 20e-6, "cupy": 10e-6}


@dataclass(frozen=True)
class Kernel:
    """One kernel's count (`nbsymple gpu-asm`): SM clocks per pair interaction on the bound
    resource, at `tile` threads per block."""
    name: str                   # gpu_asm.KINDS label: tiled, plain, fused, fused_plain
    instructions: float         # per interaction, innermost loop
    clocks: float               # SM clocks per interaction
    bound: str
    tile: int = DEFAULT_TILE

    @classmethod
    def of(cls, count) -> "Kernel":
        """From a `gpu_asm.model.KernelCount` counted for a target with device figures."""
        return cls(count.kernel, count.instructions_per_interaction, count.clocks_per_interaction, count.bound,
                   count.tile)


@dataclass(frozen=True)
class HostTimes:
    """Seconds of the O(N) host tasks at one N: one galactic force, one drift plus one kick."""
    galactic: float
    integrate: float


def record_bytes(precision: str) -> int:
    """Bytes of one body record uploaded (x, y, z, m; dsp: hi and lo)."""
    return WIDTH[precision] * np.dtype(real_type(precision)).itemsize


def acceleration_bytes(precision: str, fused_galactic: bool) -> int:
    """Bytes of one target's acceleration downloaded (E's fused kernel writes float64)."""
    return 3 * (8 if fused_galactic else np.dtype(real_type(precision)).itemsize)


def pairwise_seconds(targets: int, sources: int, kernel: Kernel, device: Device, launch: float) -> float:
    """One kernel over `targets` from `sources` bodies: the busiest SM's whole blocks."""
    blocks = -(-targets // kernel.tile)
    per_sm = -(-blocks // device.sms)
    return launch + per_sm * kernel.tile * padded(sources, kernel.tile) * kernel.clocks / (device.clock_ghz * 1e9)


def evaluation_seconds(n: int, kernel: Kernel, gpu: Gpu, precision: str = "dp", backend: str = BACKENDS[0],
                       fused_galactic: bool = False, devices: int = 1) -> dict[str, float]:
    """{'pairwise', 'transfer'} seconds of one force evaluation at n bodies on `devices` GPUs."""
    share = max(b - a for a, b in slices(n, devices))
    k = len(slices(n, devices))
    up = padded(n, kernel.tile) * record_bytes(precision)
    down = share * acceleration_bytes(precision, fused_galactic)
    return {"pairwise": (k - 1) * LAUNCH[backend] + pairwise_seconds(share, n, kernel, gpu.device, LAUNCH[backend]),
            "transfer": 2 * k * gpu.link.latency + (up + down) / gpu.link.bandwidth}


def step_tasks(letter: str, n: int, kernel: Kernel, gpu: Gpu, host: HostTimes, scheme: str = "leapfrog",
               precision: str = "dp", backend: str = BACKENDS[0], devices: int = 1) -> dict[str, float]:
    """Seconds of each task (`TASKS`) in one step of version `letter` at n bodies."""
    version, s = get_version(letter), get_scheme(scheme)
    per = evaluation_seconds(n, kernel, gpu, precision, backend, version.fused_galactic, devices)
    e = s.force_evaluations
    times = dict.fromkeys(TASKS, 0.0)
    times.update(pairwise=e * per["pairwise"], transfer=e * per["transfer"],
                 galactic=0.0 if version.fused_galactic else e * host.galactic,
                 integrate=s.drift_kick_pairs * host.integrate)
    return times


def host_version(letter: str) -> str:
    """The CPU version whose host kernels a GPU version runs (C: A's serial ones; D, E: B's)."""
    host = get_version(letter).host_kernels
    return next(v.letter for v in TABLE if not v.gpu and not v.distributed and v.host_kernels == host)


class PredictionUnavailable(Exception):
    """The GPU kernels could not be counted here (one sentence says why)."""


def kernel_name(letter: str, kind: str = KERNEL_KINDS[0]) -> str:
    """The `gpu_asm.KINDS` label of the kernel version `letter` runs (E: the fused one)."""
    fused = get_version(letter).fused_galactic
    return next(name for name, k in KINDS.items() if k == (kind, fused))


@lru_cache(maxsize=None)
def count_kernels(arch: str, tile: int, backend: str, precision: str, names: tuple) -> tuple[dict, str]:
    """({name: Kernel}, the commit counted) of the kernels `names`, compiled to SASS here
    (seconds; once per process and set of arguments)."""
    try:
        rows = count_all(arch, tile, backends=(backend,), precisions=(precision,), kinds=names)
    except Exception as exc:  # noqa: BLE001 - no toolchain, no real compiler (simulator), a compiler refusal
        first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else ""
        raise PredictionUnavailable(f"the GPU kernels could not be compiled to SASS here ({type(exc).__name__}"
                                    + (f": {first[:200]}" if first else "") + ")") from None
    return {r.kernel: Kernel.of(r) for r in rows}, git_commit()


@dataclass
class Prediction:
    """C, D and E predicted on `gpu` from counted kernels and this machine's host-task times."""
    gpu: Gpu
    commit: str                             # the kernels' commit
    kernels: dict                           # letter -> Kernel
    host: dict                              # CPU letter (A, B) -> {n: HostTimes}
    precision: str = "dp"
    backend: str = BACKENDS[0]
    letters: tuple = GPU_LETTERS

    @property
    def label(self) -> str:
        return f"predicted ({MODEL}, {self.gpu.name}, commit {self.commit})"

    def legend(self, scheme: str = "") -> str:
        """A predicted curve's words in a legend: "predicted, H200", or "predicted leapfrog, H200"
        where its panel mixes schemes."""
        return f"predicted{' ' + scheme if scheme else ''}, {self.gpu.name}"

    def ns(self, letter: str) -> list[int]:
        """The N at which the host tasks of `letter` were measured."""
        return sorted(self.host.get(host_version(letter), {}))

    def tasks(self, letter: str, n: int, scheme: str = "leapfrog", devices: int = 1) -> dict[str, float]:
        host = self.host[host_version(letter)]
        if n not in host:           # beyond the N measured: the O(N) host tasks scaled from the largest
            top = max(host)
            host = {n: HostTimes(host[top].galactic * n / top, host[top].integrate * n / top)}
        return step_tasks(letter, n, self.kernels[letter], self.gpu, host[n], scheme, self.precision, self.backend,
                          devices)

    def step(self, letter: str, n: int, scheme: str = "leapfrog") -> float:
        return sum(self.tasks(letter, n, scheme).values())

    def series(self, letter: str, scheme: str = "leapfrog") -> tuple[np.ndarray, np.ndarray]:
        """(N, seconds per step) at the N measured, like `data.series`."""
        ns = self.ns(letter)
        return np.array(ns, dtype=float), np.array([self.step(letter, n, scheme) for n in ns])

    def curves(self, measured: dict, scheme: str = "leapfrog") -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{version: (N, seconds per step)} of the versions `measured` ({version: series}) lacks."""
        out = {}
        for v in self.letters:
            n, t = self.series(v, scheme)
            keep = np.isfinite(t) & (t > 0)
            if v not in measured and keep.any():
                out[v] = (n[keep], t[keep])
        return out

    def shares(self, letter: str, n: int) -> dict[str, float]:
        """% of a leapfrog step in each task."""
        t = self.tasks(letter, n)
        total = sum(t.values())
        return {k: 100.0 * v / total for k, v in t.items()}

    def share_rows(self) -> list[dict]:
        """Rows of the task-share table (`data.task_share_table`), each with its source."""
        return [{"version": v, "n": n, **self.shares(v, n), "source": self.label}
                for v in self.letters for n in self.ns(v)]

    def n_for_share(self, letter: str, share: float = PAPER_PAIRWISE_SHARE) -> float:
        """The N from which task 1 takes `share` % of a leapfrog step (host tasks scaled as N)."""
        lo, hi = max(self.ns(letter)), 2 ** 40
        if self.shares(letter, lo)["pairwise"] >= share:
            return lo
        while hi - lo > 1:              # the share grows with N
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.shares(letter, mid)["pairwise"] < share else (lo, mid)
        return hi


def gpu_named(device: str, chosen: str | None = None) -> Gpu:
    """`chosen`, else the GPU model named in `device` (the results' GPU), else DEFAULT_GPU."""
    if chosen:
        return GPUS[chosen]
    return next((g for name, g in GPUS.items() if name.lower() in str(device).lower()), GPUS[DEFAULT_GPU])


def measured_host_times(res: Results) -> dict[str, dict[int, HostTimes]]:
    """{CPU letter: {n: HostTimes}} from `tasks.HostTasks` (finite, positive times only)."""
    got = {}
    for task in ("galactic", "integrate"):
        name = TASK_TIMES[task][0]
        if name not in res:
            raise MissingData(f"the results of commit {res.commit[:8]} have no {name} to predict "
                              f"{GPU_LETTERS[0]}-{GPU_LETTERS[-1]} from")
        got[task] = {(str(k[0]), k[1]): t for k, t in res.get(name).items()
                     if len(k) == 2 and isinstance(k[1], int) and k[1] > 0 and math.isfinite(t) and t > 0}
    out: dict[str, dict[int, HostTimes]] = {}
    for key in sorted(got["galactic"].keys() & got["integrate"].keys()):
        out.setdefault(key[0], {})[key[1]] = HostTimes(got["galactic"][key], got["integrate"][key])
    return bounded_by_serial(out)


def bounded_by_serial(host: dict[str, dict[int, HostTimes]]) -> dict[str, dict[int, HostTimes]]:
    """The threaded host times (B's), each at most the serial one (A's) at the same N: the
    threaded kernel is the serial source on more cores, and a slower timing is the parallel
    region's own cost (waking and joining its threads, at the small N of these ~10 us tasks) or a
    wait for a descheduled thread on a shared machine (their timings swing 100-fold there,
    docs/tracking_performance.md), not the kernel's work."""
    kinds = {v.letter: v.host_kernels for v in TABLE if not v.gpu and not v.distributed}
    serial = next((host[v] for v, kind in kinds.items() if kind == "serial" and v in host), {})
    out = dict(host)
    for v, kind in kinds.items():
        if kind == "threaded" and v in host:
            out[v] = {n: HostTimes(min(t.galactic, serial[n].galactic), min(t.integrate, serial[n].integrate))
                      if n in serial else t for n, t in host[v].items()}
    return out


def predict(res: Results, gpu: Gpu, precision: str = "dp", backend: str = BACKENDS[0],
            kind: str = KERNEL_KINDS[0], tile: int = DEFAULT_TILE) -> Prediction:
    """C, D and E on `gpu` at the N where `res` timed their host kernels. MissingData if it has
    no such timings, PredictionUnavailable if the kernels cannot be counted here."""
    host = measured_host_times(res)
    letters = tuple(v for v in GPU_LETTERS if host.get(host_version(v)))
    if not letters:
        raise MissingData(f"the results of commit {res.commit[:8]} have no host-task timings of "
                          f"{' or '.join(sorted({host_version(v) for v in GPU_LETTERS}))}")
    names = {v: kernel_name(v, kind) for v in letters}
    counted, commit = count_kernels(gpu.arch, tile, backend, precision, tuple(sorted(set(names.values()))))
    return Prediction(gpu, commit, {v: counted[names[v]] for v in letters}, host, precision, backend, letters)
