"""The suite's base class, `Benchmark` (as numpy's and scipy's), and the cache of a
`setup_cache` that measures every combination once. Its jobs live beside it: `grid` (what runs
here, and why not), `package` (the package through its public names), `validation`.

Nothing here is a benchmark (no `time_` / `track_` names); the benchmark modules import
`Benchmark` and the helpers from these modules.
"""
import numpy as np

from .grid import DT, budget_reason, configure_threads, grid_reason
from .package import build_pipeline, public, timing_state
from .validation import VALIDATION_N, ValidationError, validation_rules


def measure_each(keys, measure) -> dict:
    """For asv's `setup_cache`: {key: ("ok", measure(*key)) | ("skip", why) | ("error", what)}
    over every key, so one unrunnable combination does not lose the others."""
    results = {}
    for key in keys:
        try:
            results[key] = ("ok", measure(*key))
        except NotImplementedError as e:
            results[key] = ("skip", str(e))
        except Exception as e:      # reported per combination by `cached_result`
            results[key] = ("error", f"{type(e).__name__}: {e}")
    return results


def cached_result(results: dict, key):
    """The value `measure_each` stored for `key`; a skip or an error is raised again (in `setup`)."""
    kind, value = results[key]
    if kind == "skip":
        raise NotImplementedError(value)
    if kind == "error":
        raise (ValidationError if value.startswith("ValidationError") else RuntimeError)(value)
    return value


class Benchmark:
    """Base of the suite's classes (like numpy's and scipy's `Benchmark`): asv settings, the skip
    reasons, the injectable pipeline factory, validation, and `prepare` for (version, N, precision)."""

    # asv settings for time_ benchmarks: 3 to 10 samples within ~2 s after a 0.1 s warm-up; one
    # round (one process per combination). `number` chosen by asv so that a sample lasts >= 10 ms
    # (asv_runner < 0.3), or one call a sample with `setup` run again before each (asv_runner >= 0.3,
    # asv#966: hence `prepare` builds once per process). timeout is per combination (set-up included).
    timeout = 180
    repeat = (3, 10, 2.0)
    number = 0
    rounds = 1
    min_run_count = 2
    warmup_time = 0.1

    validation_n = VALIDATION_N
    # {method name: reason(*params) or None}: skips that only one method of the class has
    method_skips = {}

    def skip_reason(self, *params):
        """Why these params do not run on this machine and grid (None: they run). Cheap: it
        builds nothing, so `tools.tracking.selection()` can ask it for every combination."""
        p = dict(zip(self.param_names, params))
        return grid_reason(p["version"], p.get("n")) if "version" in p else None

    def check_params(self, *params):
        """In `setup`: raise NotImplementedError if the class skips `params`, and keep each
        method's own reason in `self.method_skip` (the method raises SkipNotImplemented)."""
        reason = self.skip_reason(*params)
        if reason:
            raise NotImplementedError(reason)
        self.method_skip = {m: f(self, *params) for m, f in self.method_skips.items()}

    # ---- the hook tests override to inject a wrong kernel
    def make_pipeline(self, letter, state, precision, clock=None):
        """A ready ForcePipeline of `letter` for `state`. Both the validation and the timed
        pipeline come from here, so what is validated is what is timed."""
        return build_pipeline(letter, state, precision, clock)

    def validate(self, letter: str, precision: str) -> float:
        """Check the pipeline factory's forces against the float64 reference on a fresh cluster
        of `validation_n` bodies (dp, dsp far from the origin, sp near it); raise on failure."""
        tolerance, frame_kpc, check = validation_rules()
        state = public.make_cluster(self.validation_n, seed=None, radius_kpc=frame_kpc[precision])
        forces = self.make_pipeline(letter, state, precision)
        tol = tolerance[precision]
        err, ok = check(forces, state, tol)
        if not ok:
            raise ValidationError(
                f"version {letter} {precision}: max relative pairwise-force error {err:.3g} at "
                f"N = {self.validation_n} exceeds the tolerance {tol:.0e}; refusing to time a wrong kernel")
        if public.has("check_host_tasks"):     # (its galactic, drift and kick; a commit before it: the forces alone)
            tol = public.HOST_TOLERANCE if public.has("HOST_TOLERANCE") else tol     # float64 in every precision
            host, ok = public.check_host_tasks(forces, state, tol)
            if not ok:
                raise ValidationError(
                    f"version {letter} {precision}: max relative error {host:.3g} of the host tasks (galactic, "
                    f"drift, kick) at N = {self.validation_n} exceeds the tolerance {tol:.0e}; refusing to time "
                    f"a wrong kernel")
        return err

    def prepare(self, letter: str, n: int, precision: str):
        """Skip if over budget or unavailable, validate, build the timed state and pipeline,
        and make one warm call (compiles everything). Sets state, clock, forces, acc, threads.
        Once per instance and (letter, n, precision, options): asv_runner >= 0.3 runs `setup`
        before every timed call (asv#966), and each would have validated and built anew, the
        timed call then the first after that work, its caches cold and B's threads idle (a hunt:
        A's integrate task 1.3-4.6x its time inside a step, B's 2.3-3.8x, up to 4 ms for 15 us)."""
        reason = budget_reason(letter, n)
        if reason:
            raise NotImplementedError(reason)
        key = (letter, n, precision, tuple(sorted(getattr(self, "options", {}).items())))
        if getattr(self, "_prepared", None) == key:
            return self.forces
        self.threads = configure_threads()
        self.validate(letter, precision)
        self.state = timing_state(n)
        self.clock = public.TaskClock()
        self.forces = self.make_pipeline(letter, self.state, precision, self.clock)
        self.compile_seconds = self.forces.warm_up(self.state.x)
        self.acc = np.zeros_like(self.state.x)
        self._prepared = key
        return self.forces

    def stepper(self, letter: str, precision: str, scheme: str):
        """(one step of dt = DT with `scheme`, the TaskClock that times it) on the prepared state:
        `advance` with the timed pipeline, the loop of `Simulation.step` (which also checks the
        state after each step); where the measured commit does not make `advance` public, its
        `Simulation.step` (that loop alone then) on a simulation of the same version and precision."""
        if public.has("advance"):
            advance, chosen = public.advance, public.get_scheme(scheme)
            return (lambda: advance(self.state, self.forces, chosen, DT, 1, self.acc)), self.clock
        sim = public.Simulation(self.state, letter, scheme, precision, DT, diagnostics=False)
        return (lambda: sim.step(1)), sim.clock

    @property
    def on_device(self) -> bool:
        """True for GPU backends (upload / compute / download)."""
        return hasattr(self.forces.backend, "upload")
