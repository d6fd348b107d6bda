"""Version F: A-E's pipeline across MPI ranks (mpi4py), beyond one machine.

Each of K ranks owns a contiguous slice of the N bodies (`comm.bounds`: any N and K, slices
differ by at most one body) and runs the best *node version* it has on the pairwise forces of
its targets against all N sources: B's threaded CPU kernels, or the GPU kernels of D or E
when the ranks see a GPU (`node_version`, default E where every rank sees one, else B; one rank
per GPU).
Each rank drifts and kicks only its slice, so the O(N) work splits too; for energy and angular
momentum the state is gathered whole on every rank and only the O(N^2) W sum is shared out
(`core.diagnostics.potential_energy`: chunks by rank, `MPI_Allreduce`); rank 0 alone prints and
writes.

Exchange: every force evaluation, the positions (float64, 24 bytes a body) go from each rank
to all others with one in-place `MPI_Allgatherv` of (x, y, z) columns (an MPI vector datatype
over the (3, N) rows: no packing). Why Allgatherv and not a ring (systolic) pass that would
overlap compute and communication: (1) each target's sum then runs over all N sources in
index order in one kernel call, as in B, so F reproduces B's numbers bit for bit; a ring
that adds the slices as they arrive sums in a rank-dependent order, and one that keeps index
order must wait for the slices in turn; (2) the bytes are the same ((K-1)/K of 24 N per rank
per evaluation) and MPI picks the collective's algorithm (ring, recursive doubling, Bruck)
for the message size and K, which a hand-made ring cannot beat; (3) what overlap could hide
is small: at N = 16384 the exchange is under 1 % of a dp step on one node (docs/mpi.md).

Timing: the fifth task of the TaskClock, `communicate`, is the wall time (perf_counter) of
each blocking collective on this rank, with no barrier before it: time spent waiting for a
slower rank (load imbalance) counts as communicate, where it belongs, instead of being
hidden by a barrier or moved into the compute tasks. Each rank keeps its own clock; rank 0's
is reported (a collective every evaluation keeps the ranks' totals within one exchange).

Failure: an exception on one rank aborts the job (`MPI_Abort`) with that rank's message;
checks that may differ between ranks are agreed collectively (`comm.World.agree`).

F runs through the same driver as A-E (`Simulation`, `nbsymple run`, checkpoints and all):
its pipeline's `world` (an `mpi.comm.World`) carries the collective hooks that do nothing on
one process (`core.ranks.OneRank`): gather the state, share out the W sum, agree on a stop,
rank 0 alone writes and prints.

Files: `comm.py` (the ranks and collectives), `engines.py` (slice kernels of the node versions),
`pipeline.py` (`MpiPipeline`, built on this rank's slice). F's timing job and its scaling model
measure it from outside (`instruments/mpi_timing.py`, `instruments/mpi_model.py`). mpi4py is
imported on first use, never here.
"""


from dataclasses import dataclass

from ..core.options import option
from ..gpu_pairwise.options import GpuOptions

GPU = False            # the node version decides: B's CPU kernels, or D's or E's GPU kernels
HOST_KERNELS = "threaded"
GALAXY_IN_KERNEL = False
NODE_VERSIONS = ("B", "D", "E")     # node versions: B's threaded CPU kernels, D's or E's GPU kernels


def check_node_version(letter):
    if letter is not None and (not isinstance(letter, str) or letter.upper() not in NODE_VERSIONS):
        raise ValueError(f"node_version must be one of {', '.join(NODE_VERSIONS)} (the version each rank runs), "
                         f"got {letter!r}")
    return None if letter is None else letter.upper()


@dataclass(frozen=True)
class Options(GpuOptions):
    """The node version each rank runs (default E where every rank sees a GPU, else B), and C's GPU
    options for a GPU node version (D, E: either backend, any tile and kernel)."""

    node_version: str | None = option(None, "--node-version", "the version each MPI rank runs, B, D or "
                                      "E (default E where every rank sees a GPU, else B)", check_node_version,
                                      NODE_VERSIONS)


def availability(options: Options) -> tuple[bool, str]:
    from . import comm
    return comm.availability()


def world():
    """This job's ranks (`comm.World`; MPI is initialised here, on first call)."""
    from ..core.pipeline import VersionUnavailable
    from . import comm
    try:
        return comm.world()
    except RuntimeError as e:       # launched by mpiexec, but mpi4py or an MPI library is missing
        raise VersionUnavailable(f"version F is not available: {e}") from None


def build_pipeline(state, precision, clock, options: Options):
    from .pipeline import build
    return build(state, precision, clock, world(), options)
