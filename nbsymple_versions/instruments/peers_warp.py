"""NVIDIA Warp as a peer: Warp's tile N-body kernel and a plain Warp kernel, on Warp's CPU device
or a CUDA GPU (`peers.py`, `gpu_report.py`). Importing this module imports and initialises Warp.

Both compute the softened accelerations of all N targets from all N sources, in cluster units
(G = 1), a_i = sum_j m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2), in float32 (sp) or float64
(dp), from the body records of the suite's GPU kernels (x, y, z, m; `gpu_pairwise/records.py`)
padded with zero-mass bodies to whole tiles (a padded source pulls with zero mass, a padded
target's result is dropped):

- `tile`: the kernel of Warp's own example, `warp/examples/tile/example_tile_nbody.py` (after GPU
  Gems 3 ch. 31, the tiling this suite's C/D/E kernels follow): each block of TILE threads loads
  TILE source records into shared memory with `wp.tile_load`, then each thread sums their pull on
  its target; TILE = 64 and `1 / wp.sqrt` as in the example, whose constant mass becomes each
  record's mass.
- `plain`: one thread per target, a loop over every source record in global memory.

`WarpForces` has the suite's GPU engine cycle (`upload`, `compute`, `download`, each ending
synchronised), so the suite's kernels and Warp's are timed alike. Warp's kernel cache goes to
$NBSYMPLE_WARP_CACHE, else this user's private folder in the temp dir (`warp_cache_dir`), never into
the repository; a first compile takes about a second per kernel on the CPU device.
"""
import atexit
import os
import shutil
import stat
import sys
import tempfile
from functools import cache

import numpy as np
import warp as wp

from ..core import reference
from ..environment import said_on_stderr
from ..gpu_pairwise.records import fill_masses, pack, padded
from ..validation import TOLERANCE, max_relative_error

KERNELS = ("tile", "plain")
WARP_PRECISIONS = ("sp", "dp")             # Warp has no double-single
EXAMPLE_TILE = 64                          # example_tile_nbody.py's TILE_SIZE
WARP_CACHE_ENV = "NBSYMPLE_WARP_CACHE"
NO_DRIVER = "Could not find or load the NVIDIA CUDA driver"
_TYPES = {"sp": (wp.float32, wp.vec3, wp.vec4), "dp": (wp.float64, wp.vec3d, wp.vec4d)}


def warp_cache_dir() -> str:
    """Where Warp's kernel cache goes: $NBSYMPLE_WARP_CACHE (checked by `environment.FOLDERS`), else
    this user's folder in the temp dir, `nbsymple-warp-cache-<uid>`, made private (0700). Where that
    name holds anything else (a file: every Warp row was skipped with NotADirectoryError; a link;
    a folder of another user's, or one others may write, whose compiled kernels Warp would load),
    a private folder of this process's own, removed at its exit (the kernels compiled again)."""
    if given := os.environ.get(WARP_CACHE_ENV):      # as written: the folder the check saw (blanks alone refused)
        return given
    folder = os.path.join(tempfile.gettempdir(), f"nbsymple-warp-cache-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except OSError:
        pass                             # there already (checked below), or a temp dir that takes none
    try:
        st = os.lstat(folder)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022:
            return folder
    except OSError:
        pass
    own = tempfile.mkdtemp(prefix="nbsymple-warp-cache-")
    atexit.register(shutil.rmtree, own, ignore_errors=True)
    return own


wp.config.kernel_cache_dir = warp_cache_dir()
wp.config.log_level = wp.LOG_WARNING
# Warp's words on every machine without a CUDA driver (a hunt: on stderr at every `peers` run), where its rows run on
# its CPU device, as `peers` says; any other words it has are shown
for line in said_on_stderr(wp.init).splitlines():
    if line.strip() and NO_DRIVER not in line:
        print(line, file=sys.stderr)


def _load(kernel, device, block_dim: int):
    """Load `kernel`'s module on `device` from Warp's kernel cache, or build it there. Where Warp
    cannot read its cached entry back (a .meta or an object file cut short: a full disk, a copy
    stopped), every Warp row was "skipped: Warp failed: JSONDecodeError: Unterminated string": the
    cache's kernels of this Warp version are removed (`wp.clear_kernel_cache`: its `wp_*` folders
    alone) and the module built again, once; a second failure is Warp's own, and raised."""
    try:
        wp.load_module(kernel.module, device=device, block_dim=block_dim)
    except Exception:                    # noqa: BLE001 - whatever reading a damaged entry raises in Warp
        wp.clear_kernel_cache()
        wp.load_module(kernel.module, device=device, block_dim=block_dim)


def availability(device: str) -> tuple[bool, str]:
    """(True, "") when Warp can run on `device` ("cpu", "cuda", "cuda:1"), else (False, why)."""
    if device.startswith("cuda") and not wp.is_cuda_available():
        return False, "Warp sees no CUDA device"
    try:
        wp.get_device(device)
    except Exception as exc:
        return False, f"Warp has no device {device!r}: {exc}"
    return True, ""


@cache
def kernels(precision: str, tile: int = EXAMPLE_TILE) -> dict:
    """{"tile": kernel, "plain": kernel} in `precision`, each run with one thread per padded record
    (bodies: vec4 records, eps2: softening squared, out: vec3 accelerations)."""
    scalar, vec3, vec4 = _TYPES[precision]

    @wp.func
    def position(record: vec4):
        return vec3(record[0], record[1], record[2])

    @wp.func
    def pull(target: vec3, source: vec4, eps2: scalar):
        """m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2): the example's body_body_interaction."""
        r = position(source) - target
        inv_dist = scalar(1.0) / wp.sqrt(wp.length_sq(r) + eps2)
        return (source[3] * inv_dist * inv_dist * inv_dist) * r

    # integrate_bodies_tiled of Warp's examples/tile/example_tile_nbody.py, less its kick and
    # drift; every thread of a block reaches the cooperative tile_load: the launch covers the
    # padded records, whole blocks of `tile` threads
    @wp.kernel(module="unique")
    def tile_kernel(bodies: wp.array(dtype=vec4), eps2: scalar, out: wp.array(dtype=vec3)):
        target = position(bodies[wp.tid()])
        acc = vec3()
        for t in range(bodies.shape[0] // tile):
            sources = wp.tile_load(bodies, shape=tile, offset=t * tile, storage="shared")
            for k in range(tile):
                acc += pull(target, sources[k], eps2)
        out[wp.tid()] = acc

    @wp.kernel(module="unique")
    def plain_kernel(bodies: wp.array(dtype=vec4), eps2: scalar, out: wp.array(dtype=vec3)):
        target = position(bodies[wp.tid()])
        acc = vec3()
        for j in range(bodies.shape[0]):
            acc += pull(target, bodies[j], eps2)
        out[wp.tid()] = acc

    return {"tile": tile_kernel, "plain": plain_kernel}


class WarpForces:
    """Warp's `kind` kernel for N bodies of masses m (softening eps) on `device`, in `precision`.

    Allocated once: the padded records (masses written here) and accelerations on the device, and
    on a GPU their pinned host copies. `upload(x)` packs positions (3, N) float64 into the records
    and copies them to the device, `compute()` runs the kernel, `download(out)` assigns the
    accelerations to out (3, N) float64; each ends synchronised."""

    def __init__(self, m, eps, precision="sp", kind="tile", device="cpu", tile=EXAMPLE_TILE):
        if kind not in KERNELS or precision not in WARP_PRECISIONS:
            raise ValueError(f"Warp kernels: kind in {KERNELS}, precision in {WARP_PRECISIONS}; "
                             f"got {kind!r}, {precision!r}")
        self.n, self.precision, self.kind = len(m), precision, kind
        self.device = wp.get_device(device)
        self.block_dim = tile if kind == "tile" else 256     # plain: Warp's default block
        scalar, vec3, vec4 = _TYPES[precision]
        self.kernel, self.eps2 = kernels(precision, tile)[kind], scalar(eps * eps)
        _load(self.kernel, self.device, self.block_dim)
        npad, gpu = padded(self.n, tile), self.device.is_cuda
        self.host_bodies = wp.zeros(npad, dtype=vec4, device="cpu", pinned=gpu)
        self.records = self.host_bodies.numpy()          # (npad, 4) view of the host records
        fill_masses(self.records, np.asarray(m, dtype=np.float64))
        self.bodies = wp.clone(self.host_bodies, device=self.device) if gpu else self.host_bodies
        self.out = wp.zeros(npad, dtype=vec3, device=self.device)
        self.host_out = wp.zeros(npad, dtype=vec3, device="cpu", pinned=True) if gpu else self.out

    def synchronize(self):
        wp.synchronize_device(self.device)

    def upload(self, x):
        """Positions x (3, N) float64 -> the records in the kernel's type -> the device."""
        pack(x, self.records, self.precision)
        if self.bodies is not self.host_bodies:
            wp.copy(self.bodies, self.host_bodies)
        self.synchronize()

    def compute(self):
        wp.launch(self.kernel, dim=self.bodies.shape[0], inputs=[self.bodies, self.eps2, self.out],
                  block_dim=self.block_dim, device=self.device)
        self.synchronize()

    def download(self, out):
        """Accelerations -> out (3, N) float64 (assigned)."""
        if self.host_out is not self.out:
            wp.copy(self.host_out, self.out)
        self.synchronize()
        out[...] = self.host_out.numpy()[:self.n].T

    def evaluate(self, x) -> np.ndarray:
        """upload, compute, download: the accelerations (N, 3) float64 of positions x (3, N)."""
        out = np.empty_like(x, dtype=np.float64)
        self.upload(x)
        self.compute()
        self.download(out)
        return out.T


def check(forces: WarpForces, state, ref=None) -> tuple[float, bool]:
    """(max relative error against the float64 reference, within the precision's tolerance) of
    `forces` on `state`'s bodies (ref: the reference accelerations, computed when not given)."""
    if ref is None:
        ref = reference.pairwise_acceleration(state.positions, state.m, state.eps)
    err = max_relative_error(forces.evaluate(state.x), ref)
    return err, bool(np.isfinite(err) and err <= TOLERANCE[forces.precision])
