"""The paper's science at full size: the Jacobi radius, science runs that resume bit for bit after
a signal, the lock against two processes on one run, and `nbsymple paper --full` at tiny N."""
import json
import signal

import numpy as np
import pytest

from nbsymple_versions import paper
from nbsymple_versions.core.units import Units
from nbsymple_versions.paper import resumable
from nbsymple_versions.runs.locks import hold
from nbsymple_versions.paper.science_runs import run_tidal_tails
from nbsymple_versions.paper.tides import fraction_beyond, jacobi_radius, point_mass_radius
from nbsymple_versions.snapshots import list_snapshots, read_snapshot

TINY = dict(n=64, dt=0.125, orbits=1.5, version="A", progress=False, checkpoint_every=40)


def test_jacobi_radius_from_the_rotation_curve():
    u = Units()
    assert jacobi_radius(u) * u.r_cl_pc == pytest.approx(36.66, abs=0.01)        # issue 11: 36.7 pc
    assert point_mass_radius(u) * u.r_cl_pc == pytest.approx(32.03, abs=0.01)    # the old formula: 32.0 pc
    # r_J^3 scales with the cluster's mass
    assert jacobi_radius(Units(10.0, 8 * 15360.0)) == pytest.approx(2 * jacobi_radius(u), rel=1e-12)
    pos = np.array([[0.0, 0, 0], [1, 0, 0], [3, 0, 0], [0, 5, 0]])
    assert fraction_beyond(pos, (0, 0, 0), 2.0) == 0.5
    assert fraction_beyond(pos, (0, 0, 0), 2.0, masses=[1, 1, 1, 3]) == pytest.approx(4 / 6)


def _arrays(folder):
    return {p.name: read_snapshot(p)[0] for p in list_snapshots(folder)}


def test_signal_stops_a_science_run_and_the_same_call_resumes_it_bit_for_bit(tmp_path, monkeypatch):
    whole = run_tidal_tails(tmp_path / "whole", **TINY)
    assert whole["sessions"] == 1 and whole["interrupted"] == 0

    write = resumable.write_snapshot

    def write_then_signal(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 250:                   # the second snapshot after step 0: SIGTERM arrives
            signal.raise_signal(signal.SIGTERM)
        return path
    monkeypatch.setattr(resumable, "write_snapshot", write_then_signal)
    folder = tmp_path / "split"
    with pytest.raises(resumable.Interrupted, match="stopped by SIGTERM after step 250") as stop:
        run_tidal_tails(folder, **TINY)
    assert stop.value.signum == signal.SIGTERM
    assert (folder / resumable.CHECKPOINT).exists() and not (folder / resumable.RUN_FILE).exists()
    monkeypatch.setattr(resumable, "write_snapshot", write)
    split = run_tidal_tails(folder, **TINY)
    assert split["sessions"] == 2 and split["interrupted"] == 1 and split["snapshots"] == whole["snapshots"]
    assert not (folder / resumable.CHECKPOINT).exists()
    a, b = _arrays(tmp_path / "whole"), _arrays(folder)
    assert a.keys() == b.keys() and len(a) == 7
    for name in a:
        assert np.array_equal(a[name].x, b[name].x) and np.array_equal(a[name].v, b[name].v), name
        assert a[name].t == b[name].t
    # other parameters start afresh; a finished run is reused as it is
    assert run_tidal_tails(folder, **{**TINY, "orbits": 0.5})["sessions"] == 1


def test_a_second_process_on_the_same_run_is_refused(tmp_path, capsys):
    folder = tmp_path / "plots" / "runs" / "tidal_tails_n64"
    folder.mkdir(parents=True)
    with hold(folder, "the folder", folder=True):     # another open file description: as another process
        rc = paper.main(["--full", "--out", str(tmp_path / "plots"), "--tidal-n", "64", "--science-version", "A"])
    err = capsys.readouterr().err
    assert rc == 2 and "is in use by another run (process " in err and len(err.strip().splitlines()) == 1
    assert not any(folder.glob("snap_*"))


def test_paper_full_writes_the_figure_and_the_table(tmp_path, capsys):
    out = tmp_path / "plots"
    argv = ["--full", "--out", str(out), "--tidal-n", "64", "--tidal-dt", "0.125", "--science-version", "A", "--quiet"]
    assert paper.main(argv) == 0, capsys.readouterr().err
    png, md = out / "tidal_tails_n64.png", out / "tidal_tails_n64.md"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = md.read_text()
    rows = [ln for ln in text.splitlines() if ln.startswith("| ") and ln[2].isdigit()]
    assert [r.split("|")[1].strip() for r in rows] == ["0.5", "1", "1.5"]
    assert "36.7 pc" in text and "32.0 pc" in text and "dsp" in text
    assert "the definition the paper's code uses" in text and "internal energy" in text
    assert "1 session" in text and not list(out.glob("REPORT.md"))     # --full touches nothing else
    assert "does not resolve the collapsed, dense core" in text       # dt = T/8 at N = 64
    run = json.loads((out / "runs" / "tidal_tails_n64" / "run.json").read_text())
    assert run["params"]["precision"] == "dsp" and run["params"]["orbits"] == 1.5
    # --no-science redraws from the snapshots, without stepping
    before = png.stat().st_mtime_ns
    assert paper.main(argv + ["--no-science"]) == 0
    assert png.stat().st_mtime_ns > before
