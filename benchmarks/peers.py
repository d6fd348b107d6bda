"""This suite's CPU versions side by side with peer codes (NumPy, REBOUND, NVIDIA Warp on the
CPU): the time of one pairwise-acceleration evaluation on the same bodies, N, masses and softening.

The candidates and how each is run and checked live in `nbsymple_versions/instruments/peers.py` (also
`python -m nbsymple_versions.instruments.peers`, which prints one table). `setup` builds the candidate for
a cluster at the origin, checks its first result against the float64 reference on that very
input (validation tolerance of its precision) and raises NotImplementedError, which asv
records as skipped, when the peer is not installed, fails to run or disagrees (then it is
reported, not timed).

N is 256, 4096 or 16384 on every grid; the grid (NBSYMPLE_BENCH_GRID, see grid.py) runs
smoke: 256; default: 4096 (NumPy takes 4 s per evaluation at 16384, which would put the default
grid over its 20-minute budget); large: 4096, 16384. Rates (interactions per second) are for
people and not asv's figures (it reads every figure as lower-is-better): N^2 / `time_evaluation`,
as `python -m nbsymple_versions.instruments.peers` prints them.
"""
import math

from .grid import GRID, configure_threads, left_out
from .package import public
from .validation import ValidationError

# literal, so that the parameters (and the history they key) stay the same on every commit;
# tests/test_benchmarks.py checks them against the keys of `peers.candidates()`
CANDIDATES = ("A-sp", "A-dp", "A-dsp", "B-sp", "B-dp", "B-dsp", "NumPy-dp", "REBOUND-dp", "Warp-sp", "Warp-dp")
PEER_NS = (256, 4096, 16384)
GRID_PEER_NS = {"smoke": (256,), "default": (4096,), "large": (4096, 16384)}[GRID]


class Peers:
    """One evaluation of the mutual accelerations by each candidate (REBOUND: one leapfrog
    step, its unit of work with one gravity evaluation)."""

    version = "1"
    params = [list(CANDIDATES), list(PEER_NS)]
    param_names = ["candidate", "n"]
    timeout = 300
    number = 1
    repeat = (2, 5, 10.0)
    rounds = 1
    warmup_time = 0

    def skip_reason(self, candidate, n):
        """Why (candidate, n) does not run on this grid (None: it runs; availability is asked
        in `setup`)."""
        if n not in GRID_PEER_NS:
            return f"N = {n} is not in the '{GRID}' grid's peer comparison (N = {', '.join(map(str, GRID_PEER_NS))})"
        return left_out(candidate.split("-")[0])        # this suite's versions (A-dp); a peer's name is no letter

    def setup(self, candidate, n):
        reason = self.skip_reason(candidate, n)
        if reason:
            raise NotImplementedError(reason)
        configure_threads()
        peers = public.peers
        c = {c.key: c for c in peers.candidates()}.get(candidate)
        if c is None:
            raise NotImplementedError(f"this commit's peers module has no candidate {candidate}")
        ok, reason = c.availability()
        if not ok:
            raise NotImplementedError(f"{candidate}: {reason}")
        state = public.make_cluster(int(n), seed=1, radius_kpc=None)
        run, status, err = peers.prepare(c, state)
        if status.startswith("disagrees"):          # a wrong kernel fails, never a skip (asv's n/a)
            raise ValidationError(f"{candidate} at N = {n}: {status}")
        if run is None and c.name in {v.letter for v in public.all_versions()} and " failed: " in status:
            raise RuntimeError(f"{candidate} at N = {n}: {status}")      # the suite's own kernel raised
        if run is None:                              # a peer that is not installed, or cannot run here
            raise NotImplementedError(f"{candidate} at N = {n}: {status}")
        self.run, self.max_relative_error = run, err

    def time_evaluation(self, candidate, n):
        """Wall time of one evaluation of all N accelerations."""
        self.run()

    def track_max_relative_error(self, candidate, n):
        """max_i |a_i - a_ref_i| / max_i |a_ref_i| of the checked (first) evaluation."""
        return self.max_relative_error if math.isfinite(self.max_relative_error) else math.nan

    track_max_relative_error.unit = "relative error"
