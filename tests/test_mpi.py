"""Version F across MPI ranks (nbsymple_versions/mpi): same physics, same numbers as B.

Jobs run under `mpiexec -n K` (K = 1, 2, 3) at N = 301, which neither 2 nor 3 divides, through
tests/mpi_helper.py or `python -m nbsymple_versions.cli`; each has a timeout, so a hang fails
instead of blocking. B's reference runs in this process. In dp, F must give B's positions,
velocities and diagnostics bit for bit; sp and dsp within the precision's tolerance (they are
bit-identical too today: each rank runs B's own compiled kernel on its slice). The GPU node
engine runs in numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) at N = 97. Without mpi4py or
mpiexec every test fails with what to install (the `mpi` extra, part of `test`, brings both).
"""
import contextlib
import io
import json
import os
from pathlib import Path
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from nbsymple_versions import Simulation, make_cluster
from nbsymple_versions.cli import main as cli
from nbsymple_versions.core.vocabulary import PRECISIONS, TASKS
from nbsymple_versions.mpi.comm import bounds, have_mpi4py
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot
from nbsymple_versions.validation import TOLERANCE

from cli_call import signals_default

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
HELPER = str(TESTS / "mpi_helper.py")
N, SEED, STEPS = 301, 7, 2          # 301 = 7 x 43: 2 and 3 ranks get slices of 150/151 and 100/100/101
SCHEMES = ("leapfrog", "si6a")
TIMEOUT = 240                       # per job: a hang fails the test


def _mpiexec():
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
JOB = pytest.mark.unshared          # a job under mpiexec (2 or 3 ranks poll the cores while they wait): alone


@pytest.fixture(autouse=True)
def mpi_installed():
    """The test extra installs mpi4py and mpich: a missing MPI fails here, it is never a skip."""
    assert have_mpi4py() and MPIEXEC, "needs mpi4py and mpiexec: pip install -e '.[test]' (or '.[mpi]')"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "NUMBA_NUM_THREADS")}
    env.update(extra)
    return env


def mpirun(ranks, *args, env=None, timeout=TIMEOUT):
    return subprocess.run([MPIEXEC, "-n", str(ranks), sys.executable, *args], cwd=REPO, env=env or _env(),
                          capture_output=True, text=True, timeout=timeout)


@JOB
def test_ranks_given_other_settings_than_rank_0s_refuse_together(tmp_path):
    """A hunt: F's ranks given different dt stepped a wrong trajectory in silence (0.34 off B's),
    different precisions mixed them, different schemes hung the job. Every rank now raises the
    same sentence, together, before a step."""
    p = mpirun(2, HELPER, "differ", str(tmp_path / "said"))
    assert p.returncode == 0, p.stderr
    for rank in (0, 1):
        said = (tmp_path / f"said.{rank}").read_text().splitlines()
        assert said == [f"{what}: the ranks were given different settings (rank 1: its {what} differs from rank 0's): "
                        f"give every rank the same Simulation arguments and steps"
                        for what in ("dt", "precision", "scheme", "steps")], (rank, said)


def relative_change(after, before, start):
    """max_i |after_i - before_i| / max_i |before_i - start_i| (as the conformance battery)."""
    return float(np.linalg.norm(after - before, axis=0).max() / np.linalg.norm(before - start, axis=0).max())


@pytest.fixture(scope="module")
def version_b():
    """B's runs in this process: {(precision, scheme): (initial state, final state, errors)}."""
    runs = {}
    for precision in PRECISIONS:
        for scheme in SCHEMES:
            start = make_cluster(N, seed=SEED)
            sim = Simulation(start.copy(), "B", scheme, precision)
            sim.step(STEPS)
            runs[precision, scheme] = (start, sim.state, sim.errors())
    return runs


def test_slices_cover_any_n_on_any_number_of_ranks():
    for n in (1, 2, 3, 97, 301, 1024, 16385):
        for k in (1, 2, 3, 4, 7, 64):
            b = bounds(n, k)
            sizes = np.diff(b)
            assert b[0] == 0 and b[-1] == n and (sizes >= 0).all(), (n, k, b)
            assert sizes.max() - sizes.min() <= 1, (n, k, sizes)


def test_ranks_on_one_node_share_its_cores_and_its_gpus(monkeypatch):
    """A mutation hunt: F's ranks given each all of their node's cores (2 ranks of 2 threads on 2
    cores: its MPI tests ten times as long, `mpi_timing` recording the threads wrongly), and every
    rank of a node put on its GPU 0, passed every test. The ranks of a node share its cores
    (`threads_per_rank`) and its GPUs (`gpu_slice_pairwise`: GPU local rank % GPUs)."""
    import types
    from nbsymple_versions.gpu_pairwise import backends
    from nbsymple_versions.mpi import engines, pipeline
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setattr(pipeline.os, "sched_getaffinity", lambda pid: set(range(4)))
    monkeypatch.setattr(pipeline.numba.config, "NUMBA_NUM_THREADS", 4)
    chosen = []
    monkeypatch.setattr(pipeline.numba, "set_num_threads", chosen.append)
    monkeypatch.setattr(pipeline.numba, "get_num_threads", lambda: chosen[-1] if chosen else 4)
    for local_size, threads in ((1, 4), (2, 2), (3, 1), (8, 1)):
        chosen.clear()
        assert pipeline.threads_per_rank(types.SimpleNamespace(local_size=local_size)) == threads, local_size

    class Engine:
        device_count = staticmethod(lambda: 2)

        def __init__(self, *args, gpus, **kwargs):
            self.gpus = gpus
    monkeypatch.setattr(backends, "engine_class", lambda backend: Engine)
    options = types.SimpleNamespace(backend="numba", tile=64, kernel="tiled")
    gpus = [engines.gpu_slice_pairwise(None, 0.1, "dp", 0, 8, rank, galactic, None, options).gpus
            for rank in range(4) for galactic in (False, True)]
    assert gpus == [[0], [0], [1], [1], [0], [0], [1], [1]], gpus


def test_one_rank_outside_mpi_is_b_bit_for_bit(version_b):
    """Outside mpiexec F is one rank (MPI's singleton start): B's numbers, communicate timed."""
    for precision in PRECISIONS:
        start, b, errors = version_b[precision, "leapfrog"]
        sim = Simulation(start.copy(), "F", "leapfrog", precision)
        sim.step(STEPS)
        assert np.array_equal(sim.state.x, b.x) and np.array_equal(sim.state.v, b.v), precision
        assert sim.errors() == errors, precision
        assert sim.clock.calls["communicate"] == STEPS and sim.device.startswith("1 MPI rank x CPU")
    assert list(sim.clock.seconds) == list(TASKS)


@JOB
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_ranks_give_b_numbers(version_b, tmp_path, ranks):
    """mpiexec -n 1, 2, 3 at N = 301, leapfrog and SI6A, sp/dp/dsp: dp bit for bit with B
    (positions, velocities, all three errors), sp and dsp within their force tolerance."""
    out = tmp_path / "f.npz"
    start = time.perf_counter()
    p = mpirun(ranks, HELPER, "compare", str(out), str(N), str(SEED), str(STEPS))
    print(f"mpiexec -n {ranks}: {time.perf_counter() - start:.1f} s")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    info = json.loads(Path(str(out) + ".json").read_text())
    assert info["size"] == ranks
    sizes = [b - a for a, b in info["slices"]]
    assert sum(sizes) == N and max(sizes) - min(sizes) <= 1, info["slices"]
    with np.load(out) as f:
        for precision in PRECISIONS:
            for scheme in SCHEMES:
                x0, b, errors = version_b[precision, scheme]
                key = f"{precision}_{scheme}"
                x, v = f[f"{key}_x"], f[f"{key}_v"]
                run = info["runs"][key]
                bitwise = np.array_equal(x, b.x) and np.array_equal(v, b.v)
                print(f"{key}: bit for bit {bitwise}, errors {run['errors']}")
                if precision == "dp":
                    assert bitwise, key
                    assert run["errors"] == errors, (run["errors"], errors)
                else:
                    err = max(relative_change(v, b.v, x0.v), relative_change(x, b.x, x0.x))
                    assert err <= TOLERANCE[precision], (key, err)
                evaluations = STEPS * (1 if scheme == "leapfrog" else 7)
                calls = run["calls"]
                assert calls["pairwise"] == calls["galactic"] == evaluations and calls["transfer"] == 0, calls
                # one exchange per force evaluation, and the finite check's reduction per step
                assert calls["communicate"] == evaluations + (STEPS if ranks > 1 else 0), calls
                assert run["node_version"] == "B" and run["device"].startswith(f"{ranks} MPI rank")


@JOB
def test_cli_across_ranks_writes_b_snapshots(tmp_path):
    """`mpiexec -n 3 nbsymple run --version F ...`: rank 0 alone prints one JSON object and
    writes the snapshots, and they hold B's arrays bit for bit."""
    folder = tmp_path / "snaps"
    p = mpirun(3, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--n", str(N), "--steps", "4",
               "--every", "2", "--snapshots", str(folder), "--seed", str(SEED), "--scheme", "si6a", "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)                      # exactly one JSON object: rank 0's
    assert out["version"] == "F" and out["device"].startswith("3 MPI ranks") and out["seed"] == SEED
    assert set(out["task_shares"]) == set(TASKS) and out["task_seconds"]["communicate"] > 0
    files = list_snapshots(folder)
    assert [f.name for f in files] == ["snap_00000000.npz", "snap_00000002.npz", "snap_00000004.npz"]
    b = Simulation(make_cluster(N, seed=SEED), "B", "si6a", "dp")
    for path in files:
        state, step = read_snapshot(path)
        b.step(step - b.steps_done)
        assert np.array_equal(state.x, b.state.x) and np.array_equal(state.v, b.state.v), path.name
        assert state.t == b.state.t
    assert out["energy_error"] == b.errors()["energy_error"]


@JOB
def test_a_failing_rank_ends_the_job_with_its_message():
    """Rank 1 raises at its third kick (mid-run): the job ends non-zero, the message on stderr;
    no rank is left waiting in a collective (the job's timeout, a hang guard, would fail). The
    time from the raise to the end is printed, not asserted: load sets it."""
    p = mpirun(2, HELPER, "fail", "1", "3", "--", "--version", "F", "--n", str(N), "--steps", "20", "--seed", "1")
    ended = time.time()
    assert p.returncode != 0, p.stdout
    assert "injected failure on rank 1 at kick 3" in p.stderr, p.stderr[-3000:]
    assert "rank 1 of 2 failed" in p.stderr
    raised = float(p.stderr.split("raising at ", 1)[1].split()[0])
    print(f"the job ended {ended - raised:.2f} s after the rank raised")


@JOB
def test_gpu_node_engine_in_the_simulator(version_b, tmp_path):
    """Under NUMBA_ENABLE_CUDASIM=1 each rank runs the GPU engine (E by default, D when asked)
    on its slice, and agrees with B (dp to 1e-12, sp to its tolerance)."""
    n = 97
    b = {}
    for precision in ("dp", "sp"):
        start = make_cluster(n, seed=SEED)
        sim = Simulation(start.copy(), "B", "leapfrog", precision)
        sim.step(1)
        b[precision] = (start, sim.state)
    for node, precisions in (("", "dp,sp"), ("D", "dp")):
        out = tmp_path / f"gpu{node}.npz"
        p = mpirun(2, HELPER, "compare", str(out), str(n), str(SEED), "1", node, precisions, "leapfrog",
                   env=_env(NUMBA_ENABLE_CUDASIM="1"))
        assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
        info = json.loads(Path(str(out) + ".json").read_text())
        with np.load(out) as f:
            for precision in precisions.split(","):
                run = info["runs"][f"{precision}_leapfrog"]
                assert run["node_version"] == (node or "E") and "CUDA simulator" in run["device"], run
                assert run["calls"]["transfer"] == 2 * run["calls"]["pairwise"] > 0, run["calls"]
                assert run["calls"]["galactic"] == (run["calls"]["pairwise"] if node == "D" else 0)
                x0, ref = b[precision]
                x, v = f[f"{precision}_leapfrog_x"], f[f"{precision}_leapfrog_v"]
                err = max(relative_change(v, ref.v, x0.v), relative_change(x, ref.x, x0.x))
                print(f"node {node or 'E'} {precision}: {err:.2e}")
                assert err <= TOLERANCE[precision], (node, precision, err)


_NO_MPI4PY = r"""
import json, sys
sys.modules["mpi4py"] = None                 # as if not installed
from nbsymple_versions import Simulation, make_cluster, get_version
sim = Simulation(make_cluster(64, seed=1), "F", diagnostics=False)
sim.step(1)
print(json.dumps({"library": sim.forces.world.library, "available": get_version("F").available()}))
"""


def test_without_mpi4py_f_is_one_rank_and_refuses_a_launcher():
    p = subprocess.run([sys.executable, "-c", _NO_MPI4PY], cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out == {"library": "no MPI (one rank)", "available": [True, ""]}
    p = subprocess.run([sys.executable, "-c", _NO_MPI4PY], cwd=REPO, env=_env(PMI_RANK="0", PMI_SIZE="2"),
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode != 0 and "mpi4py is not installed" in p.stderr, p.stderr[-2000:]


def test_f_joins_its_ranks_after_the_warm_up_and_records_its_node_version(monkeypatch, capsys):
    """Hunts: each rank started stepping as soon as its own warm-up ended, so a timing job without
    diagnostics (`mpi_timing`, the asv `MpiStep`) counted the other ranks' compilation as its
    first step's `communicate`; F's default node version was not recorded, so a run resumed
    where a GPU was (or was not) seen ran another node version, not bit for bit; GPU options given
    to node version B were dropped in silence (refused where B is asked for; said where it is the
    default, so that an earlier version's checkpoint recording them still resumes)."""
    from nbsymple_versions import VersionUnavailable
    from nbsymple_versions.core.pipeline import ForcePipeline
    from nbsymple_versions.mpi.comm import World
    seen, warm, any_ = [], ForcePipeline.warm_up, World.any
    monkeypatch.setattr(ForcePipeline, "warm_up", lambda self, x: seen.append("warm-up") or warm(self, x))
    monkeypatch.setattr(World, "any", lambda self, flag: seen.append("any") or any_(self, flag))
    sim = Simulation(make_cluster(16, seed=1), "F", diagnostics=False)
    assert seen[:2] == ["warm-up", "any"], seen
    record = sim.record()
    assert record["options"] == {"node_version": "B"} and sim.forces.node_version == "B"
    gpu = {**record, "options": {"node_version": "E"}}
    with pytest.raises(VersionUnavailable, match="version F is not available: node version E on rank 0: "):
        Simulation.restore(sim.state, gpu)
    capsys.readouterr()
    from nbsymple_versions.mpi import pipeline
    monkeypatch.setattr(pipeline, "_SAID", set())
    for options, said in (({"tile": 1024}, "--tile 1024 is"), ({"backend": "cupy", "kernel": "plain"},
                                                              "--gpu-kernel plain and --gpu-backend cupy are"),
                          ({"tile": 256}, "--tile 256 is")):       # a hunt: its default value was taken in silence
        with pytest.raises(VersionUnavailable) as e:
            Simulation(make_cluster(16, seed=1), "F", diagnostics=False, node_version="B", **options)
        assert str(e.value) == (f"version F is not available: {said} for a GPU node version (D, E), and "
                                f"--node-version B has none")
        sim = Simulation(make_cluster(16, seed=1), "F", diagnostics=False, **options)
        backend = options.get("backend", "numba")
        assert sim.forces.node_version == "B" and capsys.readouterr().err == (
            f"version F: {said} for a GPU node version (D, E), not used: not every rank can run one ({backend} "
            f"backend), so each runs node version B\n")
        Simulation(make_cluster(16, seed=1), "F", diagnostics=False, **options)   # a hunt: `check` said it thrice
        assert capsys.readouterr().err == ""


_NODE = r"""
import json, sys
from nbsymple_versions import Simulation, make_cluster
sim = Simulation(make_cluster(16, seed=1), "F", "leapfrog", "sp", diagnostics=False)
with open(f"{sys.argv[1]}/rank{sim.forces.world.rank}.json", "w") as f:      # (stdout: the ranks' lines interleave)
    json.dump([sim.forces.world.rank, sim.forces.node_version, sim.record()["options"]], f)
"""


@JOB
def test_ranks_that_see_a_gpu_and_ranks_that_do_not_run_one_node_version(tmp_path):
    """A hunt: each rank chose its default node version alone, so a job whose ranks differed
    (mixed nodes; here the CUDA simulator on one rank) ran B on one rank and E on another, in sp
    with other numbers than B's. They agree now: E where every rank sees a GPU, else B."""
    p = subprocess.run([MPIEXEC, "-n", "1", sys.executable, "-c", _NODE, tmp_path, ":", "-n", "1", "env",
                        "NUMBA_ENABLE_CUDASIM=1", sys.executable, "-c", _NODE, tmp_path], cwd=REPO, env=_env(),
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert ranks == [[0, "B", {"node_version": "B"}], [1, "B", {"node_version": "B"}]], ranks


def test_cli_refusals(capsys):
    assert cli(["run", "--version", "A", "--node-version", "B", "--n", "8", "--steps", "1"]) == 2
    assert "version A takes no option node_version (--node-version) (its options: none)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli(["run", "--version", "F", "--node-version", "C", "--n", "8", "--steps", "1"])
    assert e.value.code == 2 and "invalid choice: 'C'" in capsys.readouterr().err


def _final_snapshot(folder, steps):
    state, step = read_snapshot(list_snapshots(folder)[-1])
    assert step == steps, (folder, step)
    return state


@JOB
@pytest.mark.parametrize("ranks", [2, 3])
def test_f_killed_after_a_checkpoint_resumes_bit_for_bit(tmp_path, ranks):
    """`mpiexec -n K nbsymple run --version F --checkpoint` killed with SIGKILL after a
    checkpoint, then `--resume`d: it ends bit for bit where the uninterrupted F run and B end
    (dp, N = 301, SI6A), and rank 0 alone wrote one checkpoint. The job is held still after its
    checkpoint of step 100 (`tests/write_faults.py pause`: the next checkpoint's write waits),
    so the kill comes after that checkpoint whatever the load, and 300 steps are enough."""
    from nbsymple_versions.runs.checkpoint import load
    steps, every = 300, 100
    run = ["run", "--version", "F", "--n", str(N), "--seed", str(SEED), "--scheme", "si6a", "--precision", "dp",
           "--steps", str(steps), "--json"]
    p = mpirun(ranks, "-m", "nbsymple_versions.cli", *run, "--snapshots", str(tmp_path / "whole"),
               "--every", str(steps))
    assert p.returncode == 0, p.stderr[-3000:]
    whole = _final_snapshot(tmp_path / "whole", steps)
    ck, folder = tmp_path / "f.ck", tmp_path / "killed"
    held = [str(TESTS / "write_faults.py"), "pause", ".f.ck.", "3", "-"]   # writes at steps 0, 100, then waits
    job = subprocess.Popen([MPIEXEC, "-n", str(ranks), sys.executable, *held, *run, "--snapshots", str(folder),
                            "--every", str(steps), "--checkpoint", str(ck), "--checkpoint-every", str(every)],
                           cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           start_new_session=True)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline and job.poll() is None:
        if _steps_done(ck) >= every:
            break
        time.sleep(0.05)
    assert job.poll() is None, job.communicate()[1][-3000:]
    segments = _named_segments(_descendants(job.pid))
    os.killpg(job.pid, 9)
    job.wait(timeout=60)
    for segment in segments:            # what no process can release after SIGKILL: the test's own leftovers
        Path(segment).unlink(missing_ok=True)
    killed_at = load(ck)[1]["steps_done"]
    assert killed_at == every, killed_at
    assert sorted(f.name for f in tmp_path.iterdir()) == [".f.ck.lock", "f.ck", "killed", "whole"]   # no temporaries
    p = mpirun(ranks, "-m", "nbsymple_versions.cli", "run", "--resume", str(ck), "--json")
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)                      # one JSON object: rank 0's
    assert out["resumed_from_step"] == killed_at and out["device"].startswith(f"{ranks} MPI ranks")
    resumed = _final_snapshot(folder, steps)
    b = Simulation(make_cluster(N, seed=SEED), "B", "si6a", "dp")
    b.step(steps)
    for state in (whole, resumed):
        assert np.array_equal(state.x, b.state.x) and np.array_equal(state.v, b.state.v)
        assert state.t == b.state.t
    assert out["energy_error"] == b.errors()["energy_error"]


@JOB
def test_f_takes_the_run_options_of_a_e(tmp_path):
    """F reads `--ics` (rank 0 reads, every rank gets the bodies), draws `--mass-classes` and
    writes `--snapshot-format nbsymple`, as A-E do: B's numbers bit for bit."""
    from nbsymple_versions.runs.authors_format import read_nbsymple, write_nbsymple
    ics = write_nbsymple(tmp_path / "ExtData.txt", make_cluster(N, seed=SEED))
    for name, extra in (("ics", ["--ics", str(ics), "--ics-mass", "15360"]),
                        ("classes", ["--mass-classes", "3", "--n", str(N), "--seed", str(SEED)])):
        folder = tmp_path / name
        p = mpirun(2, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--steps", "3", "--every", "3",
                   "--snapshots", str(folder), "--snapshot-format", "nbsymple", "--json", *extra)
        assert p.returncode == 0, p.stderr[-3000:]
        out = json.loads(p.stdout)
        start = make_cluster(N, seed=SEED, mass_classes=3) if name == "classes" else read_nbsymple(ics)
        b = Simulation(start, "B", "leapfrog", "dp")
        b.step(3)
        state, step = read_snapshot(folder / "snap_00000003.txt")
        assert step == 3 and np.array_equal(state.x, b.state.x), name     # 17 digits: float64 round trip
        assert out["energy_error"] == b.errors()["energy_error"], name


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (mpiexec's proxy and the ranks it started), read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):       # ended while read
            continue
        children.setdefault(ppid, []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _named_segments(pids) -> set[str]:
    """The shared-memory files (/dev/shm) that the processes `pids` map and that still have a
    name: MPICH's segment for the ranks of a node, until MPI_Finalize (or the job's end) unlinks it."""
    found = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        except OSError:
            continue
        found |= {f[5] for f in map(str.split, maps) if len(f) == 6 and f[5].startswith("/dev/shm/")}
    return found


def _released(segments: set[str]):
    """MPICH's shared memory of a job that was there while it ran is gone once it ended: 2 MB of
    the machine's memory that every stopped job left in /dev/shm until a reboot (MPI_Abort does
    not unlink it; found in a machine's /dev/shm after many runs of this suite)."""
    assert segments, "the ranks mapped no named shared memory: nothing to check (MPICH without its shm segment?)"
    left = sorted(s for s in segments if os.path.exists(s))
    assert not left, f"the stopped job left its shared memory behind: {left}"


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (OSError, IndexError):
        return False


@JOB
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGUSR1, 138)])
def test_a_signal_to_mpiexec_ends_every_rank(tmp_path, sig, status):
    """SIGINT, SIGTERM or SIGUSR1 (a batch system's warning before the job's time is up, which
    mpiexec passes on to the ranks) to mpiexec mid-run (a 2-rank F job with a checkpoint, and one without):
    the job ends with 128 + the signal and every process it started (proxy, both ranks) ends,
    leaving no shared memory behind,
    rank 0 alone saying why in one sentence; with a checkpoint that sentence names it and the
    command that resumes it, and the checkpoint is there, whole. How long the job took to end
    is printed, not asserted (load sets it); a minutes-long timeout guards against a hang."""
    from nbsymple_versions.runs.checkpoint import load
    for checkpoint in (tmp_path / f"{sig.name}.ck", None):
        extra = ["--checkpoint", str(checkpoint), "--checkpoint-every", "20"] if checkpoint else \
            ["--snapshots", str(tmp_path / sig.name), "--every", "20"]
        job = subprocess.Popen([MPIEXEC, "-n", "2", sys.executable, "-m", "nbsymple_versions.cli", "run", "--version",
                                "F", "--n", "512", "--steps", "1000000", "--seed", "1", *extra], cwd=REPO, env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        marker = checkpoint if checkpoint else tmp_path / sig.name / "snap_00000040.npz"
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and not (marker.exists() and (checkpoint is None or _steps_done(marker) >= 20)):
            time.sleep(0.05)
        started = _descendants(job.pid)
        assert len([p for p in started if _running(p)]) >= 3, started       # the proxy and two ranks
        segments = _named_segments(started)
        sent = time.time()
        job.send_signal(sig)
        try:
            _, err = job.communicate(timeout=TIMEOUT)
            while time.time() < sent + TIMEOUT and any(map(_running, started)):
                time.sleep(0.05)
        finally:
            for pid in [job.pid, *started]:
                if _running(pid):
                    os.kill(pid, signal.SIGKILL)
        took = time.time() - sent
        print(f"{sig.name}, checkpoint {checkpoint is not None}: every rank ended {took:.2f} s after the signal: "
              f"{err!r}")
        assert job.returncode == status, (job.returncode, err)
        assert not any(map(_running, started)), "a rank outlived mpiexec"
        _released(segments)
        lines = [line for line in err.splitlines() if line.startswith("nbsymple run:")]
        assert len(lines) == 1 and f"stopped by {sig.name} after step" in lines[0], err
        if checkpoint:
            assert f"continue with: nbsymple run --resume {checkpoint}" in lines[0]
            stopped_after = int(lines[0].split("after step", 1)[1].split()[0].strip(",;:."))
            assert load(checkpoint)[1]["steps_done"] == stopped_after >= 20, (lines[0], load(checkpoint)[1])


def _ranks(pid: int) -> dict[int, int]:
    """{rank: process id} of the ranks below mpiexec `pid` (their PMI_RANK, read from /proc)."""
    ranks = {}
    for p in _descendants(pid):
        try:
            env = Path(f"/proc/{p}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        rank = [e.split(b"=", 1)[1] for e in env if e.startswith(b"PMI_RANK=")]
        if rank and b"nbsymple_versions.cli" in Path(f"/proc/{p}/cmdline").read_bytes():
            ranks[int(rank[0])] = p
    return ranks


def _steps_done(checkpoint) -> int:
    """Steps done in a running job's checkpoint, 0 while there is none yet (one the job renames
    over it while it is read is read whole: `runs.paths.open_file`)."""
    from nbsymple_versions.runs.checkpoint import load
    return load(checkpoint)[1]["steps_done"] if checkpoint.exists() else 0


def _checkpointed_job(checkpoint):
    """A 2-rank F run (N = 256) with a checkpoint every 20 steps, once its step-20 checkpoint is
    there: (the mpiexec process, every process below it, {rank: process id})."""
    job = subprocess.Popen([MPIEXEC, "-n", "2", sys.executable, "-m", "nbsymple_versions.cli", "run", "--version", "F",
                            "--n", "256", "--steps", "1000000", "--seed", "1", "--checkpoint", str(checkpoint),
                            "--checkpoint-every", "20"], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=signals_default)
    try:
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and _steps_done(checkpoint) < 20:
            time.sleep(0.05)
        ranks = _ranks(job.pid)
        assert sorted(ranks) == [0, 1], ranks
        return job, _descendants(job.pid), ranks
    except BaseException:               # no job left running past its test
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(timeout=60)
        raise


def _ended(job, started) -> str:
    """Wait (a hang guard) for mpiexec and every process it started to end; its stderr."""
    try:
        _, err = job.communicate(timeout=TIMEOUT)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and any(map(_running, started)):
            time.sleep(0.05)
    finally:
        for pid in [job.pid, *started]:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    assert not any(map(_running, started)), "a rank outlived mpiexec"
    return err


def _one_stop_sentence(err: str, sig, checkpoint):
    """At most 3 lines on stderr, no traceback, no launcher's error lines, one sentence of ours:
    stopped by `sig` after step K, the checkpoint written at step K and named with the command
    that resumes it."""
    from nbsymple_versions.runs.checkpoint import load
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) <= 3 and "Traceback" not in err and "[proxy" not in err and "[mpiexec" not in err, err
    ours = [line for line in lines if line.startswith("nbsymple run:")]
    assert len(ours) == 1 and f"stopped by {sig.name} after step" in ours[0], err
    assert f"continue with: nbsymple run --resume {checkpoint}" in ours[0]
    stopped_after = int(ours[0].split("after step", 1)[1].split()[0])
    assert load(checkpoint)[1]["steps_done"] == stopped_after >= 20, (ours[0], load(checkpoint)[1])


@JOB
@pytest.mark.parametrize("rank, sig, status", [(1, signal.SIGINT, 130), (1, signal.SIGTERM, 143),
                                               (0, signal.SIGINT, 130), (0, signal.SIGTERM, 143),
                                               (1, signal.SIGHUP, 129), (1, signal.SIGXCPU, 152)])
def test_a_signal_to_one_rank_ends_the_job(tmp_path, rank, sig, status):
    """SIGINT, SIGTERM, SIGHUP or SIGXCPU (one rank's CPU-time limit) sent to one rank of
    `mpiexec -n 2` alone (not to mpiexec, not to the group): every rank stops after the same
    step, the job ends with 128 + that signal (130 for SIGINT, as A-E), one sentence, the
    checkpoint of that step kept, MPICH's shared memory released. (SIGHUP: UCX, under MPICH, takes
    it for its debug mode in MPI_Init; the run takes it back.)"""
    checkpoint = tmp_path / "one.ck"
    job, started, ranks = _checkpointed_job(checkpoint)
    segments = _named_segments(started)
    os.kill(ranks[rank], sig)
    err = _ended(job, started)
    assert job.returncode == status, (job.returncode, err)
    _one_stop_sentence(err, sig, checkpoint)
    _released(segments)


@JOB
def test_a_second_ctrl_c_to_mpiexec_after_the_stop(tmp_path):
    """Two Ctrl-C to mpiexec: the first stops every rank after the step under way (checkpoint
    written), the ranks then end the job at once, so that the second, sent as soon as they are
    gone, finds no rank for mpiexec to kill: status 130 and one sentence, never mpiexec's proxy
    assertion and 255."""
    checkpoint = tmp_path / "twice.ck"
    job, started, ranks = _checkpointed_job(checkpoint)
    job.send_signal(signal.SIGINT)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline and any(map(_running, ranks.values())):
        time.sleep(0.005)
    if job.poll() is None:
        job.send_signal(signal.SIGINT)
    err = _ended(job, started)
    assert job.returncode == 130, (job.returncode, err)
    _one_stop_sentence(err, signal.SIGINT, checkpoint)


@JOB
@pytest.mark.parametrize("case", ["truncated checkpoint", "--version with --resume", "unknown flag", "--n 1",
                                  "--checkpoint-every alone", "--every alone"])
def test_a_refusal_under_mpiexec_is_printed_once(tmp_path, case):
    """Every rank of `mpiexec -n 2 nbsymple run ...` refuses alike; rank 0 alone says why (before
    the ranks are joined as after): exit 2, one line naming the flag or file, no traceback."""
    truncated = tmp_path / "truncated.ck"
    if case == "truncated checkpoint":
        p = mpirun(1, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--n", "64", "--steps", "2",
                   "--seed", "1", "--checkpoint", str(tmp_path / "whole.ck"))
        assert p.returncode == 0, p.stderr[-3000:]
        truncated.write_bytes((tmp_path / "whole.ck").read_bytes()[:300])
    args, named = {"truncated checkpoint": (["--resume", str(truncated)], str(truncated)),
                   "--version with --resume": (["--version", "F", "--resume", str(truncated)], "--version"),
                   "unknown flag": (["--version", "F", "--bogus"], "--bogus"),
                   "--n 1": (["--version", "F", "--n", "1"], "--n"),
                   "--checkpoint-every alone": (["--version", "F", "--n", "64", "--steps", "2",
                                                 "--checkpoint-every", "1"], "--checkpoint-every"),
                   "--every alone": (["--version", "F", "--n", "64", "--steps", "2", "--every", "1"], "--every")}[case]
    p = mpirun(2, "-m", "nbsymple_versions.cli", "run", *args)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and len(lines) == 1 and named in lines[0] and "Traceback" not in p.stderr, p.stderr


@JOB
@pytest.mark.parametrize("refusing", [(1,), (0,), (0, 1)], ids=["rank 1", "rank 0", "both"])
def test_ranks_whose_start_differs_end_the_job_and_one_of_them_says_why(refusing):
    """A hunt: the start's checks (the environment, the limits) run on each rank before MPI is up;
    a rank that refused left the others waiting in MPI_Init for good (rank 1's refusal said
    nothing). Now the job ends, status 2, the refusing rank saying why (rank 0 alone where all do)."""
    parts = []
    for rank in (0, 1):
        env = ["-env", "NUMBA_OPT", "9"] if rank in refusing else []
        parts += [":"] * bool(parts) + ["-n", "1", *env, sys.executable, "-m", "nbsymple_versions.cli", "run",
                                        "--version", "F", "--n", "16", "--steps", "2", "--seed", "5"]
    p = subprocess.run([MPIEXEC, *parts], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and len(lines) == 1 and "NUMBA_OPT='9'" in lines[0], p.stderr
    assert ("rank 1: " in lines[0]) == (refusing == (1,)), lines


@JOB
def test_a_refusing_rank_does_not_wait_for_a_rank_that_never_joins():
    """A review: rank 1 refused at its start and waited in MPI_Init for rank 0, which had refused
    before MPI for a reason of its own (its command line) and ended: for good, deaf to SIGTERM.
    The wait is bounded (`comm.JOIN_LIMIT_S`, here 3 s): the job ends."""
    refusing = ("from nbsymple_versions.mpi import comm; comm.JOIN_LIMIT_S = 3; "
                "comm.refuse_the_job(lambda: print('rank 1 refused'), 2)")
    p = subprocess.run([MPIEXEC, "-n", "1", sys.executable, "-c", "raise SystemExit(2)", ":", "-n", "1",
                        sys.executable, "-c", refusing], cwd=REPO, env=_env(), capture_output=True, text=True,
                       timeout=TIMEOUT)
    assert p.returncode != 0 and "rank 1 refused" not in p.stdout, p.stdout + p.stderr


LAST_WORDS = 500                    # lines of 100 characters: 50 kB, which a pipe holds unread (64 kB)
ENDINGS = {   # rank 1's way of ending the job once it has written them to stdout and stderr
    "abort": "w = comm.world(); say(); w.abort(3)",
    "an exception": "w = comm.world(); say(); raise RuntimeError('rank 1 raised')",
    "a refusal at its start": "comm.refuse_the_job(say, 2)",
    "a stop": "w = comm.world(); say(); comm.end_stopped_job(130)",
}


@JOB
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_what_a_rank_wrote_before_it_ended_the_job_reaches_mpiexec_whole(ending):
    """A test under load: rank 1, refusing its start, said why and called MPI_Abort at once; the
    job ended with status 2 and no sentence. MPI_Abort ends mpiexec's forwarding with the job, and
    what was still in the rank's pipe was lost (500 lines written just before a bare abort arrived
    whole in 12 of 20 jobs). Every way a rank ends the job now waits until mpiexec has read it."""
    say = ("import sys\ndef say():\n    for stream in (sys.stdout, sys.stderr):\n"
           f"        for i in range({LAST_WORDS}): stream.write(f'last word {{i:4d}} ' + 'x' * 85 + '\\n')\n")
    rank_0 = "from nbsymple_versions.mpi import comm; comm.world().comm.Barrier()"
    rank_1 = f"from nbsymple_versions.mpi import comm\n{say}{ENDINGS[ending]}\n"
    p = subprocess.run([MPIEXEC, "-n", "1", sys.executable, "-c", rank_0, ":", "-n", "1", sys.executable, "-c", rank_1],
                       cwd=REPO, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode != 0, p.stdout[-2000:]
    for stream in (p.stdout, p.stderr):
        assert [line.split()[2] for line in stream.splitlines() if line.startswith("last word")] == \
            [f"{i:4d}".strip() for i in range(LAST_WORDS)], (p.returncode, stream[-2000:])


def test_a_refusing_rank_that_cannot_join_mpi_still_says_why():
    """A review: rank 1 refusing at its start with no MPI to join (mpi4py cannot load) ended alone,
    status 2, without a word; rank 0 says its own reasons before it joins, rank 1 had only this one."""
    code = ("import sys; sys.modules['mpi4py'] = None; from nbsymple_versions.mpi import comm\n"
            "comm.refuse_the_job(lambda: print('rank 1 refused', file=sys.stderr), 2)")
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT,
                       env=_env(PMI_PORT="localhost:1", PMI_RANK="1", PMI_SIZE="2"))
    assert (p.returncode, p.stderr) == (2, "rank 1 refused\n"), p


def test_a_rank_ending_the_job_waits_until_its_output_is_read():
    """`comm._flush`, before every MPI_Abort: with 50 kB in each of its stdout and stderr pipes it
    does not return until their reader has read them (its limit here 600 s, a hang guard), then at
    once. Nothing is read for a second first: a flush that did not wait has returned by then."""
    code = ("import os, sys; from nbsymple_versions.mpi import comm; comm.READ_LIMIT_S = 600\n"
            "for stream in (sys.stdout, sys.stderr): stream.write('x' * 50000)\n"
            "comm._flush(); os.write(int(sys.argv[1]), b'flushed')")
    (out, out_w), (err, err_w), (said, said_w) = os.pipe(), os.pipe(), os.pipe()
    child = subprocess.Popen([sys.executable, "-c", code, str(said_w)], cwd=REPO, env=_env(), stdout=out_w,
                             stderr=err_w, pass_fds=(said_w,))
    for fd in (out_w, err_w, said_w):
        os.close(fd)
    try:
        assert select.select([said], [], [], 1.0)[0] == [], "it returned with 100 kB unread"
        for fd in (out, err):
            read = b""
            while len(read) < 50000 and select.select([fd], [], [], TIMEOUT)[0]:
                read += os.read(fd, 65536) or b"!"
            assert read == b"x" * 50000, read[-200:]
        assert select.select([said], [], [], TIMEOUT)[0] and os.read(said, 16) == b"flushed"
        assert child.wait(timeout=TIMEOUT) == 0
    finally:
        child.kill()
        for fd in (out, err, said):
            os.close(fd)


def test_unread_output_is_counted_in_pipes_and_sockets_and_nowhere_else(tmp_path):
    from nbsymple_versions.mpi.comm import _unread
    r, w = os.pipe()
    a, b = socket.socketpair()
    with open(tmp_path / "file", "w") as f:
        for fd in (w, a.fileno(), f.fileno()):
            os.write(fd, b"12345")
        assert (_unread(w), _unread(a.fileno()) > 0, _unread(f.fileno())) == (5, True, 0)   # a socket: its buffers
        os.read(r, 5), b.recv(5)
        assert (_unread(w), _unread(a.fileno())) == (0, 0)
    os.close(r), os.close(w), a.close(), b.close()
    assert _unread(1 << 30) == 0        # no such descriptor: nothing it can tell


@JOB
def test_every_rank_resumes_the_checkpoint_rank_0_read(tmp_path):
    """A hunt: each rank read `--resume FILE` itself, and ranks run from other folders read other
    files of that name: rank 1 stepped its bodies in sp in a run reported dp (or, of another
    scheme, the ranks hung in mismatched collectives). Refused now, status 2, in one sentence."""
    folders = {name: tmp_path / name for name in ("a", "b")}
    for name, precision in (("a", "dp"), ("b", "sp")):
        folders[name].mkdir()
        p = subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--n", "16",
                            "--steps", "2", "--seed", "5", "--precision", precision, "--checkpoint", "ck.ck"],
                           cwd=folders[name], env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
        assert p.returncode == 0, p.stderr
    parts = []
    for name in ("a", "b"):
        parts += [":"] * bool(parts) + ["-n", "1", "-wdir", str(folders[name]), sys.executable, "-m",
                                        "nbsymple_versions.cli", "run", "--resume", "ck.ck", "--steps", "4"]
    p = subprocess.run([MPIEXEC, *parts], cwd=REPO, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and len(lines) == 1 and "is not the checkpoint rank 0 read" in lines[0], p.stderr


def test_rank_variables_a_process_inherited_do_not_silence_it(monkeypatch):
    """A hunt: `PMI_RANK=1 nbsymple run --n 1` (a process a rank started, say) refused in silence,
    as if it were rank 1 of a job: no launcher started it (no PMI descriptor open here)."""
    from nbsymple_versions.core.ranks import launcher_rank, launcher_size
    from nbsymple_versions.entry import speaks
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_FD", "987654")            # inherited: not open in this process
    monkeypatch.delenv("PMI_PORT", raising=False)
    assert speaks() and launcher_rank() == 0 and launcher_size() == 1
    with open(os.devnull) as f:
        monkeypatch.setenv("PMI_FD", str(f.fileno()))  # open here: a launcher's
        assert not speaks() and launcher_rank() == 1 and launcher_size() == 2


@JOB
def test_a_version_of_one_process_under_mpiexec_is_refused_once(tmp_path):
    """`mpiexec -n 2 nbsymple run --version A --checkpoint c.ck`: each rank ran A whole, the
    second one refused silently (its checkpoint's lock held by the first), exit 2 with nothing
    said; `check` and `paper` ran twice over, writing the same files. Now every rank refuses
    alike before anything is made, rank 0 naming version F, which runs across ranks; so does
    the resume of an A checkpoint (found by hand)."""
    p = mpirun(2, "-m", "nbsymple_versions.cli", "run", "--version", "A", "--n", "16", "--steps", "2",
               "--checkpoint", str(tmp_path / "c.ck"))
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert p.returncode == 2 and len(lines) == 1 and p.stdout == "", p.stderr
    assert "version A runs in one process" in lines[0] and "mpiexec -n 2 nbsymple run --version F" in lines[0], p.stderr
    assert sorted(tmp_path.iterdir()) == []
    assert cli(["run", "--n", "16", "--steps", "2", "--checkpoint", str(tmp_path / "a.ck")]) == 0
    before = sorted(tmp_path.iterdir())
    p = mpirun(2, "-m", "nbsymple_versions.cli", "run", "--resume", str(tmp_path / "a.ck"), "--steps", "4")
    assert p.returncode == 2 and "version A runs in one process" in p.stderr and p.stdout == "", p.stderr
    assert f"run it without mpiexec: nbsymple run --resume {tmp_path / 'a.ck'} (" in p.stderr, p.stderr   # not F:
    assert "--version F" not in p.stderr and sorted(tmp_path.iterdir()) == before     # --resume refuses --version


@pytest.mark.parametrize("argv", [["check", "--n", "16"], ["info"], ["paper", "--no-science", "--out", "plots"]])
def test_every_command_of_one_process_refuses_a_launcher_of_several(tmp_path, monkeypatch, argv):
    """What a rank of `mpiexec -n 3` finds in its environment (rank 0 speaks; the others refuse
    alike, silently), in this process: a command other than F's run is refused in one sentence."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PMI_SIZE", "3")
    monkeypatch.setenv("PMI_RANK", "0")
    launcher = open(os.devnull)                   # the launcher's descriptor, open in its ranks
    monkeypatch.setenv("PMI_FD", str(launcher.fileno()))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        assert cli(argv) == 2
    assert "runs in one process: under an MPI launcher of 3 ranks" in err.getvalue() and out.getvalue() == ""
    assert len(err.getvalue().strip().splitlines()) == 1 and sorted(tmp_path.iterdir()) == [], err.getvalue()
    launcher.close()


PROGRESS_END = "version F, 2 ranks: step 20/20 (100 %)"


@JOB
def test_f_shows_its_progress_once_when_asked():
    """`--progress` off a terminal: rank 0 alone writes A-E's progress lines (one per 10 %)."""
    p = mpirun(2, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--n", "64", "--steps", "20",
               "--seed", "1", "--progress")
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stderr.count(PROGRESS_END) == 1 and p.stderr.count("( 50 %)") == 1, p.stderr
    quiet = mpirun(2, "-m", "nbsymple_versions.cli", "run", "--version", "F", "--n", "64", "--steps", "20",
                   "--seed", "1")
    assert quiet.returncode == 0 and "step 20/20" not in quiet.stderr, quiet.stderr


@JOB
def test_f_under_mpiexec_on_a_terminal_shows_its_progress(tmp_path):
    """mpiexec run from a terminal (its stderr a pseudo-terminal) pipes the ranks' stderr; rank 0
    still finds that a person watches (the launcher's stderr) and shows the progress unasked."""
    import pty
    import select
    master, slave = pty.openpty()
    proc = subprocess.Popen([MPIEXEC, "-n", "2", sys.executable, "-m", "nbsymple_versions.cli", "run", "--version", "F",
                             "--n", "64", "--steps", "20", "--seed", "1"], cwd=REPO, env=_env(),
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + TIMEOUT          # a hang guard
    try:
        while (proc.poll() is None or select.select([master], [], [], 0.2)[0]) and time.monotonic() < deadline:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    data = os.read(master, 65536)
                except OSError:         # the terminal's other end closed
                    break
                if not data:
                    break
                chunks.append(data)
        proc.wait(timeout=TIMEOUT)
    finally:
        os.close(master)
        proc.stdout.close()
    seen = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, seen[-3000:]
    assert seen.count(PROGRESS_END) == 1, seen


def test_the_model_keeps_its_runs_and_never_writes_through_a_link(tmp_path, monkeypatch):
    """`mpi_model --measure` adds each run to the runs already in its file, whole at every step,
    each of node version B (on a GPU machine it measured E's, a hunt found); `--plot` replaces a
    link at its path with the figure and leaves the link's target alone."""
    from types import SimpleNamespace

    from nbsymple_versions.instruments import mpi_model
    made = iter(range(100))
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"run": "earlier"}\n')
    monkeypatch.setattr(mpi_model.subprocess, "run", lambda argv, **k: SimpleNamespace(
        stdout=f'log\n{{"run": {next(made)}}}\n') if argv[-2:] == ["--node-version", "B"] else None)
    mpi_model.measure(runs, ns=(8,), ranks=(1, 2), repeats=1)       # the CPU node the model's rate is of
    assert runs.read_text() == '{"run": "earlier"}\n{"run": 0}\n{"run": 1}\n'
    victim, png = tmp_path / "victim.txt", tmp_path / "model.png"
    victim.write_text("precious\n")
    png.symlink_to(victim)
    mpi_model.plot(png, [], 1e9)
    assert victim.read_text() == "precious\n" and not png.is_symlink() and png.read_bytes()[:4] == b"\x89PNG"


def test_the_model_s_terms_thresholds_and_tables_are_docs_mpi_md_s():
    """`mpi_model`: compute N^2 / (K R), communicate (K - 1) alpha + (K - 1)/K 24 N / beta (none on one node),
    N_break where K nodes take as long as one, N_half where compute is communicate (the same N for K = 2),
    and the H200 rows of its tables, which no --measured run enters, docs/mpi.md's (a mutation hunt: no test
    read a number of the model)."""
    from nbsymple_versions.instruments import mpi_model as m
    net, rate = (1e9, 1e-6), 1e9
    assert m.compute_seconds(1000, 4, rate) == pytest.approx(1000 ** 2 / (4 * rate), rel=1e-12)
    assert m.communicate_seconds(1000, 4, net) == pytest.approx(3e-6 + 0.75 * 24 * 1000 / 1e9, rel=1e-12)
    assert m.communicate_seconds(1000, 1, net) == 0.0
    for k in (2, 8, 64):
        n_break, n_half = m.n_break(k, rate, net), m.n_half(k, rate, net)
        assert 1 < n_break <= n_half
        one = m.step_seconds(n_break, 1, rate, net)
        assert m.step_seconds(n_break, k, rate, net) == pytest.approx(one, rel=1e-9)
        assert m.compute_seconds(n_half, k, rate) == pytest.approx(m.communicate_seconds(n_half, k, net), rel=1e-9)
    assert m.n_break(2, rate, net) == pytest.approx(m.n_half(2, rate, net), rel=1e-9)
    docs = (REPO / "docs" / "mpi.md").read_text()
    rows = [line for line in m.tables(1.5e9).splitlines() if line.startswith(f"| {m.GPU_NODE}")]
    assert len(rows) == 2 + 2 * 3 and all(line in docs for line in rows), rows
    # and the CPU's rows those of the committed runs its rate and docs/mpi_model.png's points came from (the figure
    # and the tables were once of runs never committed, and of another rate than the text's)
    measured = m.read_measured(REPO / "docs" / "mpi_measured.jsonl")
    rate = m.cpu_rate(measured)
    rows = [line for line in m.tables(rate, m.cpu_node(measured, False)).splitlines()
            if line.startswith("| the measured CPU")]
    assert len(rows) == 2 + 2 * 3 and all(line in docs for line in rows), rows
    assert f"({rate:.3g}".replace("e+09", "e9") + " interactions/s" in docs, rate


def test_the_model_s_rate_is_the_fastest_one_rank_run_at_the_largest_n():
    """`mpi_model.best` keeps the fastest run of each (ranks, N) (the least disturbed on a shared machine) and
    `cpu_rate` is N^2 pair forces a step, its steps over its pairwise seconds, of the 1-rank run at the largest
    N (a mutation hunt)."""
    from nbsymple_versions.instruments import mpi_model as m

    def run(ranks, n, steps, pairwise, per_step):
        return {"ranks": ranks, "n": n, "steps": steps, "seconds_per_step": per_step,
                "task_seconds": {"pairwise": pairwise}}
    runs = [run(1, 1024, 10, 0.5, 0.06), run(1, 4096, 4, 2.0, 0.6), run(1, 4096, 5, 1.0, 0.3),
            run(1, 4096, 4, 4.0, 1.2), run(2, 8192, 4, 1.0, 0.3)]
    assert {key: r["seconds_per_step"] for key, r in m.best(runs).items()} == \
        {(1, 1024): 0.06, (1, 4096): 0.3, (2, 8192): 0.3}
    assert m.cpu_rate(runs) == pytest.approx(4096 ** 2 * 5 / 1.0, rel=1e-12)


def test_the_model_s_plot_shows_only_what_it_draws(tmp_path, monkeypatch):
    """A hunt: `mpi_model --rate 1.534e9 --plot` listed "measured: 1 rank" and "measured: 2 ranks" in its
    legend, and "measured points" in its title, with no point drawn, and titled its CPU panel "1.5e+09"."""
    import matplotlib.figure
    from nbsymple_versions.instruments import mpi_model as m
    drawn = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: drawn.append(
        ([t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()],
         [ax.get_title() for ax in fig.axes], fig.get_suptitle())))
    one = {"ranks": 1, "n": 4096, "steps": 5, "seconds_per_step": 0.3, "task_seconds": {"pairwise": 1.0}}
    for measured in ([], [one]):
        m.plot(tmp_path / "m.png", measured, 1.534e9)     # (an empty file: the stub draws no PNG)
        labels, titles, heading = drawn.pop()
        assert ("measured: 1 rank" in labels) == bool(measured) and "measured: 2 ranks" not in labels, labels
        assert heading.endswith("measured points") == bool(measured), heading
        assert titles[0] == "nodes: the CPU of --rate (B), 1.53e+09 dp interactions/s each", titles


def test_the_model_s_plot_draws_each_curve_the_model_gives(tmp_path, monkeypatch):
    """A mutation hunt: every K-node curve drawn as the 1-node one, or every curve on the first network,
    passed every test (the one above reads labels and titles). Each curve is `step_seconds` of its K,
    network and panel's node rate; the measured point is its run's seconds per step."""
    import matplotlib.figure
    from nbsymple_versions.instruments import mpi_model as m
    drawn = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: drawn.append(
        [[(line.get_label(), np.asarray(line.get_xdata()), np.asarray(line.get_ydata())) for line in ax.lines]
         for ax in fig.axes]))
    one = {"ranks": 1, "n": 4096, "steps": 5, "seconds_per_step": 0.3, "task_seconds": {"pairwise": 1.0}}
    m.plot(tmp_path / "m.png", [one], 1.534e9)
    panels = drawn.pop()
    curves = {"1 node"} | {f"{k} nodes, {net}" for k in m.KS for net in m.NETWORKS}
    for lines, rate in zip(panels, (1.534e9, m.NODE_RATES[m.GPU_NODE]), strict=True):
        assert {label for label, _, _ in lines} - {"measured: 1 rank"} == curves, lines
        for label, xs, ys in lines:
            if label.startswith("measured"):
                assert rate == 1.534e9 and list(xs) == [4096] and list(ys) == [0.3]
                continue
            k, net = (1, next(iter(m.NETWORKS))) if label == "1 node" else (int(label.split()[0]), label.split(", ")[1])
            assert np.allclose(ys, [m.step_seconds(n, k, rate, net) for n in xs], rtol=1e-12), label


def test_the_model_s_cpu_node_is_named_by_the_threads_of_its_one_rank_runs():
    """`mpi_model.cpu_node`: the measured CPU is named by the threads of the 1-rank runs its rate comes from,
    not those of the 2-rank runs (a mutation hunt)."""
    from nbsymple_versions.instruments import mpi_model as m
    runs = [{"ranks": 1, "threads_per_rank": 2}, {"ranks": 2, "threads_per_rank": 1}]
    assert m.cpu_node(runs, False) == "the measured CPU (B, 2 threads)"
    assert m.cpu_node(runs[1:], False) == m.cpu_node(runs, True) == "the CPU of --rate (B)"


def test_the_model_takes_the_rates_at_both_ends_of_its_range(capsys):
    """`--rate` at either end of the node rates the model takes (`RATES`, both included) gives its tables (a
    mutation hunt: the lower end refused passed)."""
    from nbsymple_versions.instruments import mpi_model as m
    for rate in m.RATES:
        assert m.main(["--rate", repr(rate)]) == 0
        assert "| node | network | K = 2: N_break / N_half |" in capsys.readouterr().out


@JOB
def test_the_jobs_mpi_model_starts_get_no_stdin(tmp_path):
    """A hunt: mpiexec passes its stdin on to rank 0, and stops the job when the rank does not read
    it ("process reading stdin too slowly"): `mpi_model --measure` with data on its stdin (a file,
    a `while read` loop's) failed its first timing job. Its jobs read nothing: /dev/null."""
    code = ("import sys; from nbsymple_versions.instruments import mpi_model\n"
            "mpi_model.measure(sys.argv[1], ns=(64,), ranks=(2,), repeats=1)")
    with open("/dev/zero") as zeros:
        p = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.jsonl")], cwd=REPO, env=_env(),
                           stdin=zeros, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "m.jsonl").read_text())["ranks"] == 2


def test_a_stdout_that_cannot_be_written_does_not_stop_a_rank_ending_the_job(monkeypatch):
    """`mpi.comm._flush`, before a rank ends the job, passed over OSError and ValueError only: the
    command's guarded stdout raises `entry.OutputFailed` (a review), which escaped the abort."""
    import errno
    from nbsymple_versions.entry import OutputFailed
    from nbsymple_versions.mpi import comm
    flushed = []

    class Failing:
        def flush(self):
            flushed.append(self)
            raise OutputFailed(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    monkeypatch.setattr(sys, "stdout", Failing())
    monkeypatch.setattr(sys, "stderr", Failing())
    comm._flush()
    assert len(flushed) == 2
