"""This suite's CPU versions side by side with peer codes (NumPy, REBOUND, NVIDIA Warp on the
CPU): pairwise-acceleration throughput on the same bodies, N, masses and softening.

The candidates and how each is run and checked live in `nbsymple_versions/peers.py` (also
`python -m nbsymple_versions.peers`, which prints one table). `setup` builds the candidate for
a cluster at the origin, checks its first result against the float64 reference on that very
input (validation tolerance of its precision) and raises NotImplementedError, which asv
records as skipped, when the peer is not installed, fails to run or disagrees (then it is
reported, not timed).

N is 256, 4096 or 16384 on every grid; the grid (NBSYMPLE_BENCH_GRID, see common.py) runs
smoke: 256; default: 4096 (NumPy takes 4 s per evaluation at 16384, which would put the default
grid over its 20-minute budget); large: 4096, 16384. The rates are for people (asv reads every
figure as lower-is-better; `asv.conf.json` keeps them out of the regression search).
"""
import math

from nbsymple_versions import make_cluster

from .common import GRID, configure_threads, median_call_seconds

try:
    from nbsymple_versions import peers
except ImportError:      # commits from before the peers module: skip, keep the rest of the suite
    peers = None

PEER_NS = (256, 4096, 16384)
GRID_PEER_NS = {"smoke": (256,), "default": (4096,), "large": (4096, 16384)}[GRID]
CANDIDATES = {c.key: c for c in peers.candidates()} if peers is not None else {}


class Peers:
    """One evaluation of the mutual accelerations by each candidate (REBOUND: one leapfrog
    step, its unit of work with one gravity evaluation)."""

    version = "1"
    params = [list(CANDIDATES) or ["none"], list(PEER_NS)]
    param_names = ["candidate", "n"]
    timeout = 300
    number = 1
    repeat = (2, 5, 10.0)
    rounds = 1
    warmup_time = 0
    min_seconds = 1.0

    def skip_reason(self, candidate, n):
        """Why (candidate, n) does not run on this grid (None: it runs; availability is asked
        in `setup`)."""
        if n not in GRID_PEER_NS:
            return f"N = {n} is not in the '{GRID}' grid's peer comparison (N = {', '.join(map(str, GRID_PEER_NS))})"
        return None

    def setup(self, candidate, n):
        reason = self.skip_reason(candidate, n)
        if reason:
            raise NotImplementedError(reason)
        configure_threads()
        if candidate not in CANDIDATES:
            raise NotImplementedError("this commit has no nbsymple_versions.peers module")
        c = CANDIDATES[candidate]
        ok, reason = c.availability()
        if not ok:
            raise NotImplementedError(f"{candidate}: {reason}")
        state = make_cluster(int(n), seed=1, radius_kpc=None)
        run, status, err = peers.prepare(c, state)
        if run is None:
            raise NotImplementedError(f"{candidate} at N = {n}: {status}")
        self.candidate, self.run, self.max_relative_error = c, run, err

    def time_evaluation(self, candidate, n):
        """Wall time of one evaluation of all N accelerations."""
        self.run()

    def _seconds(self) -> float:
        return median_call_seconds(self.run, self.min_seconds)

    def track_interactions_per_second(self, candidate, n):
        """N^2 / median seconds per evaluation: every candidate counted alike, as if it did all
        N^2 ordered pairs (REBOUND's wall-time rate)."""
        return peers.full_count(n) / self._seconds()

    track_interactions_per_second.unit = "interactions/s"

    def track_pairs_evaluated_per_second(self, candidate, n):
        """Pair interactions the candidate actually computes per second: N^2 for this suite,
        NumPy and Warp, N (N - 1) / 2 for REBOUND (Newton's third law)."""
        return self.candidate.counts[-1][1](n) / self._seconds()

    track_pairs_evaluated_per_second.unit = "pairs/s"

    def track_max_relative_error(self, candidate, n):
        """max_i |a_i - a_ref_i| / max_i |a_ref_i| of the checked (first) evaluation."""
        return self.max_relative_error if math.isfinite(self.max_relative_error) else math.nan

    track_max_relative_error.unit = "relative error"
