"""The paper's science at full size: the Jacobi radius, science runs that resume bit for bit after
a signal, the lock against two processes on one run, and `nbsymple paper --full` at tiny N."""
import json
import signal

import numpy as np
import pytest

from nbsymple_versions import paper
from nbsymple_versions.core.units import Units
from nbsymple_versions.paper import dt_series, resumable
from nbsymple_versions.runs.locks import hold
from nbsymple_versions.paper.science_runs import run_tidal_tails
from nbsymple_versions.paper.tides import fraction_beyond, jacobi_radius, point_mass_radius
from nbsymple_versions.runs.snapshots import list_snapshots, read_snapshot

TINY = dict(n=64, dt=0.125, orbits=1.5, version="A", progress=False, checkpoint_every=40)


def test_jacobi_radius_from_the_rotation_curve():
    u = Units()
    assert jacobi_radius(u) * u.r_cl_pc == pytest.approx(36.66, abs=0.01)        # issue 11: 36.7 pc
    assert point_mass_radius(u) * u.r_cl_pc == pytest.approx(32.03, abs=0.01)    # the old formula: 32.0 pc
    # r_J^3 scales with the cluster's mass
    assert jacobi_radius(Units(10.0, 8 * 15360.0)) == pytest.approx(2 * jacobi_radius(u), rel=1e-12)
    # the authors' Galaxy is lighter by their mass unit (2.32e7 against 2.3251e7 Msun), so the same
    # cluster's r_J is larger by the cube root of the ratio, in both formulas
    a = Units(constants="authors")
    ratio = (u.galaxy_mass_unit_msun / 2.32e7) ** (1.0 / 3.0)
    assert jacobi_radius(a) == pytest.approx(ratio * jacobi_radius(u), rel=1e-9)
    assert point_mass_radius(a) == pytest.approx(ratio * point_mass_radius(u), rel=1e-12)
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
    folder = tmp_path / "plots" / "runs" / "tidal_tails_n64_dt2^-8"      # the default full-size dt
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
    run = json.loads((out / "runs" / "tidal_tails_n64_dt2^-3" / "run.json").read_text())
    assert run["params"]["precision"] == "dsp" and run["params"]["orbits"] == 1.5
    # --no-science redraws from the snapshots, without stepping
    before = png.stat().st_mtime_ns
    assert paper.main(argv + ["--no-science"]) == 0
    assert png.stat().st_mtime_ns > before


def _entry(dt, shares, internal, n=15360):
    """A series entry with the share beyond r_J and the internal-energy error at 0.5, 1, 1.5 orbits."""
    rows = [{"orbits": k, "t_myr": 237.0 * k, "beyond": f, "energy_error": 1e-6, "internal_energy_error": e}
            for k, f, e in zip(dt_series.MARKS, shares, internal)]
    params = {"kind": "tidal_tails", "n": n, "dt": dt, "orbits": 1.5, "version": "B", "precision": "dsp",
              "scheme": "leapfrog", "seed": 1, "snapshots_per_orbit": 4}
    return {"params": params, "steps": round(93.2 / dt), "wall_seconds": 100.0, "sessions": 2, "interrupted": 1,
            "provenance": {"machine": "m"}, "r_j_pc": 36.7, "dt_kyr": 3815.0 * dt, "rows": rows}


def test_the_dt_verdict_follows_the_numbers_and_the_counting_noise():
    noise = dt_series.noise(_entry(2 ** -9, (0, 0, 0), (0, 0, 0)), 0.025)
    assert noise == pytest.approx((0.025 * 0.975 / 15360) ** 0.5)                 # 0.126 percentage points
    converged = [_entry(2 ** -8, (0.007, 0.017, 0.025), (4.4e-2, 8.2e-2, 0.11)),
                 _entry(2 ** -9, (0.007, 0.016, 0.0235), (1.1e-2, 2.1e-2, 0.028)),
                 _entry(2 ** -10, (0.007, 0.016, 0.0237), (2.8e-3, 5.2e-3, 0.007))]
    text = "\n".join(dt_series.verdict(converged))
    assert "from 2.35 % to 2.37 % (+0.02 points)" in text and "converged in dt to within the counting noise" in text
    assert "(2^-9 T to 2^-10 T)" not in text and "(2^-8 T to 2^-9 T) moved it by -0.15 points" in text
    assert "falls by 3.9, 4.0 per halving" in text
    shrinking = [_entry(2 ** -8, (0, 0, 0.040), (0.1,) * 3), _entry(2 ** -9, (0, 0, 0.030), (0.05,) * 3),
                 _entry(2 ** -10, (0, 0, 0.025), (0.025,) * 3)]
    text = "\n".join(dt_series.verdict(shrinking))
    assert "not converged within the counting noise" in text and "ratio 0.50" in text and "about 2.00 %" in text
    drifting = [_entry(2 ** -8, (0, 0, 0.020), (0.1,) * 3), _entry(2 ** -9, (0, 0, 0.030), (0.05,) * 3)]
    assert "has not converged in dt" in "\n".join(dt_series.verdict(drifting))
    assert "a run at dt = 2^-10 T would tell" in "\n".join(dt_series.verdict(drifting))
    assert "no less than the halving before" in "\n".join(dt_series.verdict(drifting + [
        _entry(2 ** -10, (0, 0, 0.045), (0.025,) * 3)]))
    assert "no verdict" in dt_series.verdict(drifting[:1])[0]


def test_paper_full_gathers_a_series_over_dt(tmp_path, capsys):
    out = tmp_path / "plots"
    base = ["--full", "--out", str(out), "--tidal-n", "64", "--science-version", "A", "--quiet"]
    for dt in ("0.0625", "0.125"):                 # the smaller step first: the figure keeps showing it
        assert paper.main(base + ["--tidal-dt", dt]) == 0, capsys.readouterr().err
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["tidal_tails_n64_dt2^-3", "tidal_tails_n64_dt2^-4"]
    data = json.loads((out / "tidal_tails_n64_series.json").read_text())
    series = sorted(data.values(), key=lambda e: -e["params"]["dt"])
    assert [e["params"]["dt"] for e in series] == [0.125, 0.0625]
    assert [r["orbits"] for r in series[0]["rows"]] == [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
    text = (out / "tidal_tails_n64.md").read_text()
    assert "dt = 2^-4 T" in text.split("\n\n")[1]                          # the first table: the smallest dt
    head = next(ln for ln in text.splitlines() if ln.startswith("| dt [T]"))
    rows = [ln for ln in text.splitlines() if ln.startswith("| 2^-")]
    assert [r.split("|")[1].strip() for r in rows] == ["2^-3", "2^-4"]
    assert all(r.count("|") == head.count("|") for r in rows)
    share = series[1]["rows"][-1]["beyond"]
    assert f"{100 * share:.2f} ± {100 * dt_series.noise(series[1], share):.2f} %" in rows[1]
    assert "Halving the step from 2^-3 T to 2^-4 T" in text and "Verdict:" in text
    assert (out / "tidal_tails_n64_dt_series.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the series outlives the runs' snapshots: --no-science with one folder left keeps both entries
    import shutil
    shutil.rmtree(out / "runs" / "tidal_tails_n64_dt2^-3")
    assert paper.main(base + ["--tidal-dt", "0.0625", "--no-science"]) == 0
    assert len(json.loads((out / "tidal_tails_n64_series.json").read_text())) == 2
    assert "Halving the step from 2^-3 T to 2^-4 T" in (out / "tidal_tails_n64.md").read_text()


def test_a_run_resumed_elsewhere_records_where_each_session_ran(tmp_path, monkeypatch):
    """Provenance is taken as each session starts (the code it imported), and a resume at another
    commit says so: 'a then b'."""
    write = resumable.write_snapshot

    def write_then_signal(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 250:
            signal.raise_signal(signal.SIGINT)
        return path
    commits = iter(["aaaaaaaa", "bbbbbbbb"])
    monkeypatch.setattr("nbsymple_versions.paper.science_runs.git_commit", lambda: next(commits))
    monkeypatch.setattr(resumable, "write_snapshot", write_then_signal)
    with pytest.raises(resumable.Interrupted):
        run_tidal_tails(tmp_path / "run", **TINY)
    monkeypatch.setattr(resumable, "write_snapshot", write)
    run = run_tidal_tails(tmp_path / "run", **TINY)
    assert run["provenance"]["commit"] == "aaaaaaaa then bbbbbbbb"
    assert [p["commit"] for p in run["session_provenance"]] == ["aaaaaaaa", "bbbbbbbb"]
    assert run["provenance"]["machine"] == run["session_provenance"][0]["machine"]        # unchanged: once
