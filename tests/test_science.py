"""The paper's science at full size: the Jacobi radius, science runs that resume bit for bit after
a signal, the lock against two processes on one run, and `nbsymple paper --full` at tiny N."""
import json
import math
import re
import shutil
from pathlib import Path
import signal

import numpy as np
import pytest

from nbsymple_versions import Simulation, make_cluster, paper
from nbsymple_versions.core.units import Units
from nbsymple_versions.core.diagnostics import energy_parts, internal_energy_error, relative_error
from nbsymple_versions.core.ics import State
from nbsymple_versions.paper import convergence, dt_series, report, resumable, science_plots, stats
from nbsymple_versions.runs.locks import hold
from nbsymple_versions.paper.resumable import OtherRun
from nbsymple_versions.paper.science_runs import run_tidal_tails
from nbsymple_versions.paper.tides import fraction_beyond, jacobi_radius, point_mass_radius
from nbsymple_versions.runs.paths import FileRefused
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
    # a finished run of other parameters is kept, refused (a hunt: hours of a run of another
    # version were removed in silence); --rerun replaces it
    with pytest.raises(OtherRun, match=r"holds a finished run of orbits .* \(asked: orbits 0\.5\), which is kept; "
                                       r"give --rerun to replace it"):
        run_tidal_tails(folder, **{**TINY, "orbits": 0.5})
    assert run_tidal_tails(folder, **{**TINY, "orbits": 0.5}, rerun=True)["sessions"] == 1


def test_a_second_process_on_the_same_run_is_refused(tmp_path, capsys):
    folder = tmp_path / "plots" / "runs" / "tidal_tails_n64_dt2^-10"     # the default full-size dt
    folder.mkdir(parents=True)
    with hold(folder, "the folder", folder=True):     # another open file description: as another process
        rc = paper.main(["--full", "--out", str(tmp_path / "plots"), "--tidal-n", "64", "--science-version", "A"])
    err = capsys.readouterr().err
    assert rc == 2 and "is in use by another run (process " in err and len(err.strip().splitlines()) == 1
    assert not any(folder.glob("snap_*"))


def test_a_full_run_of_another_version_is_kept_and_a_damaged_one_named(tmp_path, capsys):
    """A hunt: `paper --full` of another --science-version (or precision; the folder's name says
    neither) removed a finished run in silence and ran its own; a finished run with a snapshot
    cut short, or one its run.json lists gone, ended in a traceback (read_snapshot's, or
    matplotlib's of no columns). Refused, the run kept (status 2); named, status 1."""
    out = tmp_path / "plots"
    argv = ["--full", "--out", str(out), "--tidal-n", "16", "--tidal-dt", "0.125", "--tidal-orbits", "0.5", "--quiet"]
    assert paper.main([*argv, "--science-version", "A"]) == 0, capsys.readouterr().err
    folder = next((out / "runs").iterdir())
    kept = {p.name: p.read_bytes() for p in folder.iterdir()}
    capsys.readouterr()
    assert paper.main([*argv, "--science-version", "B"]) == 2
    err = capsys.readouterr().err
    assert "holds a finished run of version 'A' (asked: version 'B'), which is kept; give --rerun" in err, err
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == kept
    snaps = list_snapshots(folder)
    snaps[1].write_bytes(kept[snaps[1].name][:1000])
    for science in ("--science", "--no-science"):
        assert paper.main([*argv, "--science-version", "A", science]) == 1
        err = capsys.readouterr().err
        assert f"{snaps[1].name} is truncated or corrupted" in err and "Traceback" not in err, err
    snaps[1].write_bytes(kept[snaps[1].name])
    snaps[-1].unlink()
    assert paper.main([*argv, "--science-version", "A", "--no-science"]) == 1
    err = capsys.readouterr().err
    assert f"lacks 1 of the snapshots its run.json lists ({snaps[-1].name})" in err, err


def test_full_runs_of_other_orbits_or_precision_write_their_own_files(tmp_path, capsys):
    """`paper --full` named its figure and table by N alone and its run folders by N, dt, orbits
    and seed: a run of other orbits or precision overwrote another series' `tidal_tails_n<N>.md`
    and `.png` (the committed N = 4096 ones too), and one of another precision was refused the
    folder of the first. Each series has its files (`dt_series.stem`), each precision its folder;
    a run that an earlier version kept in the folder without its precision is still found,
    finished or stopped (a review: a stopped one started again at step 0), and dsp goes elsewhere."""
    from nbsymple_versions.paper.science_runs import run_folder
    out = tmp_path / "plots"
    argv = ["--full", "--out", str(out), "--tidal-n", "16", "--tidal-dt", "0.125", "--tidal-orbits", "0.5",
            "--science-version", "A", "--quiet"]
    assert paper.main(argv) == 0, capsys.readouterr().err
    first = {p.name: p.read_bytes() for p in out.glob("tidal_tails_n16_0.5orb.*")}
    assert sorted(first) == ["tidal_tails_n16_0.5orb.md", "tidal_tails_n16_0.5orb.png"]
    runs = {p.name: sorted(q.name for q in p.iterdir()) for p in (out / "runs").iterdir()}
    assert paper.main([*argv, "--tidal-precision", "dp"]) == 0, capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.glob("tidal_tails_n16_0.5orb.*")} == first
    assert {p: sorted(q.name for q in (out / "runs" / p).iterdir()) for p in runs} == runs
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["tidal_tails_n16_dt2^-3_0.5orb",
                                                                 "tidal_tails_n16_dt2^-3_0.5orb_dp"]
    assert "version A in dp" in (out / "tidal_tails_n16_0.5orb_dp.md").read_text()
    assert (out / "tidal_tails_n16_0.5orb_dp.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(json.loads((out / "tidal_tails_n16_series.json").read_text())) == 2
    older = tmp_path / "older" / "runs" / "tidal_tails_n16_dt2^-3_0.5orb"     # an earlier version's name
    shutil.copytree(out / "runs" / "tidal_tails_n16_dt2^-3_0.5orb_dp", older)
    assert run_folder(tmp_path / "older", 16, 0.125, 0.5, 1, "dp") == older
    assert run_folder(tmp_path / "older", 16, 0.125, 0.5, 1, "sp").name == "tidal_tails_n16_dt2^-3_0.5orb_sp"
    older_argv = [*argv, "--tidal-precision", "dp", "--no-science", "--out", str(tmp_path / "older")]
    assert paper.main(older_argv) == 0, capsys.readouterr().err
    assert "version A in dp" in (tmp_path / "older" / "tidal_tails_n16_0.5orb_dp.md").read_text()
    assert run_folder(tmp_path / "older", 16, 0.125, 0.5, 1, "dsp").name == "tidal_tails_n16_dt2^-3_0.5orb_dsp"
    from nbsymple_versions.runs.checkpoint import save
    (older / "run.json").unlink()            # stopped, not finished: its checkpoint says its precision
    sim = Simulation(make_cluster(16, seed=1), "A", "leapfrog", "dp", 0.125)
    save(older / "checkpoint.nbsc", resumable._header(older, {"precision": "dp", "seed": 1}, [1], 10, sim), sim)
    assert run_folder(tmp_path / "older", 16, 0.125, 0.5, 1, "dp") == older
    assert run_folder(tmp_path / "older", 16, 0.125, 0.5, 1, "dsp").name == "tidal_tails_n16_dt2^-3_0.5orb_dsp"


def test_the_full_size_table_has_the_runs_end_and_its_verdict_every_snapshot():
    """A hunt: the `--full` table, its verdict and its figure's stamp read the snapshots at 0.5, 1 and
    1.5 orbits alone: a run of 0.75 orbits lost its end (its error 2.07 and 57.8 % beyond r_J), and
    a run whose error peaked between them (0.012 at 0.75 orbits) was called converged, where its
    series marked it not converged."""
    from nbsymple_versions.paper import full_size

    def row(orbits, internal):
        return {"orbits": orbits, "t_myr": 237.4 * orbits, "beyond": 0.1, "energy_error": 1e-9,
                "internal_energy_error": internal}
    every = [row(0, 0.0), row(0.25, 0.002), row(0.5, 0.004), row(0.75, 0.012), row(1.0, 0.006)]
    summary = {"run": {"params": {"dt": 2 ** -8}}, "rows": [every[2], every[4]], "all_rows": every}
    assert full_size._table_rows(summary) == [every[2], every[4]]          # the end is a row already
    [said] = full_size._verdict(summary)
    assert "reaches 0.012 of the cluster's binding energy by 0.75 orbits" in said, said
    ended = {**summary, "rows": [every[2]], "all_rows": every[:4]}          # a run of 0.75 orbits
    assert full_size._table_rows(ended) == [every[2], every[3]]
    assert full_size._verdict({**summary, "all_rows": [*every[:3], row(0.75, 0.009), every[4]]}) == []


def test_the_committed_full_size_series_have_their_files():
    """Every series in the committed `tidal_tails_n<N>_series.json` has its table and figures
    under the name `paper --full` gives them (`dt_series.stem`), which REPORT.md shows."""
    plots = Path(__file__).resolve().parents[1] / "plots"
    report_text = (plots / "REPORT.md").read_text()
    series = {dt_series.stem(e["params"]): e["params"] for path in plots.glob("tidal_tails_n*_series.json")
              for e in json.loads(path.read_text()).values()}
    assert sorted(series) == ["tidal_tails_n15360", "tidal_tails_n4096_0.5orb_dp"]
    for stem, params in series.items():
        for name in (f"{stem}.md", f"{stem}.png", dt_series.figure_name(params)):
            assert (plots / name).is_file() and f"({name})" in report_text, name


def _cheap_argv(out: Path) -> list[str]:
    """`paper` with science runs of seconds (8 bodies, a quarter orbit, one black-hole ratio) into `out`."""
    return ["--results", str(Path(__file__).parent / "data" / "asv_fixture"), "--out", str(out), "--tidal-n", "8",
            "--tidal-dt", "0.5", "--tidal-orbits", "0.25", "--bh-n", "8", "--bh-dt", "0.5", "--bh-t-end", "1",
            "--bh-ratios", "1", "--science-version", "A", "--quiet"]


@pytest.fixture(scope="module")
def cheap_paper(tmp_path_factory) -> Path:
    """The folder `_cheap_argv` writes, its runs finished (no path inside it names the folder): made
    once, and each test that damages it takes a copy (a `paper` call of 2-3 s each before)."""
    out = tmp_path_factory.mktemp("cheap-paper") / "out"
    assert paper.main(_cheap_argv(out)) == 0
    return out


@pytest.mark.parametrize("damage, said", [
    ("a snapshot gone", "a finished run of these parameters that lacks 1 of the snapshots its run.json lists"),
    ("run.json cut short", "a run record that cannot be read (run record"),
    ("another run's checkpoint", "a checkpoint nbsymple cannot resume ("),
])
def test_a_finished_run_paper_cannot_reuse_is_kept_and_named_before_anything_is_written(tmp_path, capsys, damage,
                                                                                        said, cheap_paper):
    """A hunt: a finished science run one of whose snapshots was gone, or whose run.json was cut
    short, was removed and made again in silence (status 0: hours, at full size), and so was a
    folder holding `nbsymple run`'s checkpoint. Each is named and kept, status 2, nothing written;
    --rerun replaces it."""
    out = tmp_path / "out"
    argv = _cheap_argv(out)
    shutil.copytree(cheap_paper, out, symlinks=True)
    folder = out / "runs" / "tidal_tails"
    if damage == "a snapshot gone":
        list_snapshots(folder)[-1].unlink()
    elif damage == "run.json cut short":
        (folder / "run.json").write_bytes((folder / "run.json").read_bytes()[:100])
    else:
        for name in ["run.json", *(p.name for p in list_snapshots(folder))]:
            (folder / name).unlink()
        from nbsymple_versions.runs.checkpoint import save
        save(folder / "checkpoint.nbsc", {"n": 8}, Simulation(make_cluster(8, seed=1)))     # `nbsymple run`'s kind
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert paper.main(argv) == 2
    err = capsys.readouterr().err
    assert f"{folder} holds {said}" in err and "which is kept; give --rerun to replace it" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert paper.main([*argv, "--rerun"]) == 0, capsys.readouterr().err
    assert json.loads((folder / "run.json").read_text())["finished"]


def test_what_paper_cannot_resume_or_read_is_kept_and_named(tmp_path, capsys, cheap_paper):
    """A hunt: a science run refused for its other parameters ended with status 2 after the
    benchmarks' figures were rewritten (then status 1, REPORT.md rewritten without the run's
    section; refused before anything is written now, status 2); a checkpoint that cannot be read
    was removed and the run started at step 0 in silence; two --bh-ratios agreeing to 6 digits
    shared a folder; a black hole heavier than the Galaxy's bulge ran, and overflowed; a series file
    with one stray comma was replaced, losing the numbers of runs whose snapshots were gone;
    --no-science beside a stopped run said to run the simulation first; the black-hole figure of
    --bh-ratios 2 drew the folder's earlier ratio-1 run beside it, under its title."""
    from nbsymple_versions.paper.science_runs import check_black_hole_work
    argv = _cheap_argv(tmp_path / "out")
    shutil.copytree(cheap_paper, tmp_path / "out", symlinks=True)
    report = (tmp_path / "out" / "REPORT.md").read_bytes()
    assert paper.main([*argv, "--tidal-orbits", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "holds a finished run of orbits 0.25 (asked: orbits 0.5), which is kept; give --rerun" in err, err
    assert (tmp_path / "out" / "REPORT.md").read_bytes() == report           # nothing written
    assert paper.main([*argv, "--bh-ratios", "2"]) == 0, capsys.readouterr().err
    drawn = json.loads((tmp_path / "out" / "science_runs.json").read_text())["black_hole"]["runs"]
    assert len(drawn) == 1 and drawn[0]["run"].endswith("= 2"), drawn    # not ratio 1's earlier run beside it
    folder = tmp_path / "out" / "runs" / "tidal_tails"
    (folder / "run.json").unlink()
    (folder / "checkpoint.nbsc").write_bytes(b"NBSC damaged")
    with pytest.raises(OtherRun, match="holds a checkpoint nbsymple cannot resume .* which is kept"):
        run_tidal_tails(folder, n=8, dt=0.5, orbits=0.25, version="A", progress=False)
    assert (folder / "checkpoint.nbsc").read_bytes() == b"NBSC damaged" and list_snapshots(folder)
    assert paper.main([*argv, "--no-science"]) == 0            # the earlier figure kept, as --no-science does
    err = capsys.readouterr().err
    assert "kept tidal_tails.png from its earlier run (no finished run in" in err, err
    assert "the same command without --no-science resumes the run stopped there" in err, err
    with pytest.raises(ValueError, match="gives two runs the folder ratio_1"):
        check_black_hole_work(8, 0.5, 1.0, (1.0, 1.0000001))
    check_black_hole_work(8, 0.5, 1.0, (1.0, 9e5))                # a black hole as heavy as the bulge, nearly
    for ratio in (1e6, 1e150, 1e308):
        bulge = rf"--bh-ratios {re.escape(f'{ratio:g}')}: .* outweighs the Galaxy's bulge \(1\.41e\+10"
        with pytest.raises(ValueError, match=bulge):
            check_black_hole_work(8, 0.5, 1.0, (1.0, ratio))
    series = tmp_path / "series.json"
    series.write_text('{"a": 1,}')
    with pytest.raises(FileRefused, match="it is kept, not rewritten"):
        dt_series.update(series, [])
    assert series.read_text() == '{"a": 1,}'


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
    assert "**Not converged.**" in text and "(**not converged**)" in text
    run = json.loads((out / "runs" / "tidal_tails_n64_dt2^-3" / "run.json").read_text())
    assert run["params"]["precision"] == "dsp" and run["params"]["orbits"] == 1.5
    # --no-science redraws from the snapshots, without stepping
    before = png.stat().st_mtime_ns
    assert paper.main(argv + ["--no-science"]) == 0
    assert png.stat().st_mtime_ns > before
    png.unlink()
    png.mkdir()                         # a folder in the figure's place: one sentence, status 1
    capsys.readouterr()
    assert paper.main(argv + ["--no-science"]) == 1
    err = capsys.readouterr().err
    assert "the full-size figure was not written" in err and "Is a directory" in err, err


def _entry(dt, shares, internal, n=15360, seed=1, orbits=(0.5, 1.0, 1.5)):
    """A series entry with the share beyond r_J and the internal-energy error at `orbits`."""
    rows = [{"orbits": k, "t_myr": 237.0 * k, "beyond": f, "energy_error": 1e-6, "internal_energy_error": e}
            for k, f, e in zip(orbits, shares, internal)]
    params = {"kind": "tidal_tails", "n": n, "dt": dt, "orbits": orbits[-1], "version": "B", "precision": "dsp",
              "scheme": "leapfrog", "seed": seed, "snapshots_per_orbit": 4}
    return {"params": params, "steps": round(93.2 / dt), "wall_seconds": 100.0, "sessions": 2, "interrupted": 1,
            "provenance": {"machine": "m"}, "r_j_pc": 36.7, "dt_kyr": 3815.0 * dt, "rows": rows}


def _seeded(shares_by_dt, internal_by_dt, n=4096):
    """Entries at 0.5 orbits, one per (dt, seed): `shares_by_dt` {dt: [share per seed]}."""
    return [_entry(dt, (f,), (internal_by_dt[dt],), n=n, seed=seed, orbits=(0.5,))
            for dt, shares in shares_by_dt.items() for seed, f in enumerate(shares, start=1)]


def test_p_values_of_chi2_and_f():
    assert stats.chi2_sf(7.35, 2) == pytest.approx(math.exp(-7.35 / 2), rel=1e-12)     # 2 dof: exp(-x/2)
    assert stats.chi2_sf(3.841459, 1) == pytest.approx(0.05, rel=1e-5)
    assert stats.chi2_sf(11.0705, 5) == pytest.approx(0.05, rel=1e-4)
    assert stats.f_sf(5.143253, 2, 6) == pytest.approx(0.05, rel=1e-5)                 # tables of F
    assert stats.f_sf(10.924767, 2, 6) == pytest.approx(0.01, rel=1e-5)
    assert stats.f_sf(1.0, 3, 3) == pytest.approx(0.5, rel=1e-12)                       # symmetric
    assert stats.chi2_sf(0.0, 2) == 1.0 and stats.f_sf(0.0, 2, 6) == 1.0


def test_the_dt_test_uses_the_seeds_scatter_and_decides_by_p():
    internal = {2 ** -8: 0.1, 2 ** -9: 0.03, 2 ** -10: 0.005}
    # consistent: the same three shares at every step (chi^2 = 0)
    same = _seeded({dt: [0.020, 0.022, 0.018] for dt in internal}, internal)
    test = dt_series.share_test(same)
    assert test.chi2 == 0.0 and test.p == 1.0 and test.dof == 2 and test.sigma_dof == 6
    assert test.sigma == pytest.approx(0.002) and test.seeds == (3, 3, 3)
    text = "\n".join(dt_series.verdict(same))
    assert "Verdict: converged in dt within the noise" in text and "at dt = 2^-10 T" in text
    assert "not converged: 2^-8 T (seeds 1, 2, 3: 0.1, 0.1, 0.1); 2^-9 T" in text
    assert "are not physical results" in text
    # inconsistent: the means 2, 3, 4 % against a scatter of 0.2 points: chi^2 = 3 (1e-4 + 1e-4) / 4e-6
    apart = _seeded({2 ** -8: [0.020, 0.022, 0.018], 2 ** -9: [0.030, 0.032, 0.028],
                     2 ** -10: [0.040, 0.042, 0.038]}, internal)
    test = dt_series.share_test(apart)
    assert test.chi2 == pytest.approx(150.0) and test.p == pytest.approx(stats.f_sf(75.0, 2, 6))
    assert test.p < 1e-4 and test.depends_on_dt
    assert "depends on dt (p = " in "\n".join(dt_series.verdict(apart))
    # the same shares with a scatter ten times larger: no longer resolved
    wide = _seeded({2 ** -8: [0.020, 0.040, 0.000], 2 ** -9: [0.030, 0.050, 0.010],
                    2 ** -10: [0.040, 0.060, 0.020]}, internal)
    assert dt_series.share_test(wide).chi2 == pytest.approx(1.5) and not dt_series.share_test(wide).depends_on_dt
    # every run heated: no dependence seen, but nothing claimed physical
    hot = _seeded({dt: [0.020, 0.022, 0.018] for dt in internal}, {dt: 0.2 for dt in internal})
    assert "not that the share is physical" in "\n".join(dt_series.verdict(hot))
    # seeds that ended on their step's share (a small N's shares are multiples of 1/N): no scatter
    # measured, the counting noise instead, and the text says why
    alike = _seeded({2 ** -8: [0.020, 0.020], 2 ** -9: [0.030, 0.030]}, internal)
    test = dt_series.share_test(alike)
    assert test.sigma_dof == 0 and test.seeds == (2, 2) and test.chi2 > 0
    text = "\n".join(dt_series.verdict(alike))
    assert "each step's seeds ended on the same share" in text and "one seed per step" not in text


def test_one_seed_per_step_is_tested_against_the_counting_noise():
    # the committed N = 15360 shares at 1.5 orbits (issue 29: chi^2 = 7.35 on 2 dof, p = 0.025)
    series = [_entry(2 ** -8, (114 / 15360, 264 / 15360, 409 / 15360), (4.3e-2, 7.8e-2, 0.11)),
              _entry(2 ** -9, (117 / 15360, 232 / 15360, 336 / 15360), (1.2e-2, 2.3e-2, 3.4e-2)),
              _entry(2 ** -10, (111 / 15360, 266 / 15360, 372 / 15360), (1.3e-3, 3.2e-3, 5.1e-3))]
    test = dt_series.share_test(series)
    assert test.orbits == 1.5 and test.sigma_dof == 0 and test.dof == 2
    assert test.chi2 == pytest.approx(7.349, abs=1e-3) and test.p == pytest.approx(0.02536, abs=1e-5)
    text = "\n".join(dt_series.verdict(series, scatter=(2.0, 4096, 6)))
    assert "one seed per step: the run-to-run scatter is not measured at this N" in text
    assert "Verdict: not decided. Against the counting noise alone the shares differ (p = 0.0254 < 0.05)" in text
    assert "as measured at N = 4096, 2.00 times the counting noise (estimated from 6 degrees of freedom), chi^2 " \
           f"would be 1.84 and p the F(2, 6) tail of chi^2 / 2: p = {stats.f_sf(7.349 / 4 / 2, 2, 6):.3g}" in text
    assert "only 2^-10 T kept the internal-energy error at or below 0.01" in text
    cool = [_entry(e["params"]["dt"], [r["beyond"] for r in e["rows"]], (1e-3, 2e-3, 3e-3)) for e in series]
    every = "\n".join(dt_series.verdict(cool, scatter=(2.0, 4096, 6)))   # a hunt: "only" every step, "that run"
    assert "every step kept the internal-energy error at or below 0.01; the smallest, 2^-10 T, is the one" in every
    assert "only" not in every.partition("What it does show")[2], every
    # a scatter no larger than the counting noise, known well: the same shares depend on dt; known from 6
    # degrees of freedom: still not decided (p = F(2, 6) tail of 7.35 / 2 = 0.09)
    known = "\n".join(dt_series.verdict(series, (1.0, 4096, 10 ** 6)))
    assert "depends on dt (p = 0.0254 < 0.05, and p = 0.0254 even allowing" in known
    assert "Verdict: not decided" in "\n".join(dt_series.verdict(series, (1.0, 4096, 6)))
    assert "not converged: 2^-8 T (seed 1: 0.11); 2^-9 T (seed 1: 0.034)" in text
    assert "falls by 3.2, 6.7 per halving" in text
    assert "no verdict" in dt_series.verdict(series[:1])[0]


def test_the_counting_noise_of_a_share_is_the_same_counted_from_either_side():
    """`dt_series.noise`, the ± of each share in the series' table: the binomial noise of counting N stars,
    the same for the share beyond r_J as for the share within, none where all or none are beyond, and
    sqrt(N / 4) stars at one half (a mutation hunt: f^2 in place of f (1 - f) passed every test)."""
    e = {"params": {"n": 400}}
    assert dt_series.noise(e, 0.0) == dt_series.noise(e, 1.0) == 0.0
    for f in (0.01, 0.2, 0.5):
        assert dt_series.noise(e, f) == pytest.approx(dt_series.noise(e, 1.0 - f), rel=1e-12)
    assert 400 * dt_series.noise(e, 0.5) == pytest.approx(10.0)


def test_not_converged_is_marked_above_one_percent_of_the_binding_energy():
    assert not convergence.not_converged(1e-2) and convergence.not_converged(1.0001e-2)
    assert convergence.not_converged(None) and not convergence.not_converged(0.0)
    assert convergence.not_converged(math.nan)         # a run that blew up (a mutation hunt: "converged" passed)
    assert "NOT CONVERGED" in convergence.internal_sentence(math.nan, math.nan)
    assert convergence.largest([3e-3, 2e-2, 1e-3]) == 2e-2        # the largest over the snapshots decides
    assert convergence.largest([3e-3, None]) is None and convergence.largest([]) is None     # unknown: not converged
    assert "NOT CONVERGED" in convergence.internal_sentence(5e-3, 2e-2)
    assert "converged: <= 0.01" in convergence.internal_sentence(5e-3, 1e-2)
    # near the limit, digits enough to be on its side (a hunt: "largest 1.0e-02 > 0.01: NOT CONVERGED")
    assert "largest 1.004e-02 > 0.01: NOT CONVERGED" in convergence.internal_sentence(1.004e-2, 1.004e-2)
    assert "largest 9.96e-03; converged" in convergence.internal_sentence(9.96e-3, 9.96e-3)
    assert "largest 1.0e-02; converged" in convergence.internal_sentence(1e-2, 1e-2)
    assert [convergence.error_text(x, ".2g") for x in (1.004e-2, 9.9999e-3, 0.11, None)] == \
        ["0.01004", "0.0099999", "0.11", "unknown"]
    assert convergence.error_text(1e-2 + 1e-18) == "1.0000000000000002e-02"      # the float above the limit
    with science_plots.style():
        fig = science_plots.plt.figure()
        assert not science_plots.mark_not_converged(fig, 5e-3) and not fig.texts
        assert science_plots.mark_not_converged(fig, 2e-2)
        assert "NOT CONVERGED" in fig.texts[0].get_text() and "2.0e-02 > 0.01" in fig.texts[0].get_text()
        science_plots.plt.close(fig)
    run = {"params": {"n": 64, "dt": 0.125, "scheme": "leapfrog", "version": "A", "precision": "dp"}, "steps": 8,
           "wall_seconds": 1.0}
    hot = science_plots.run_summary("tidal tails", run, 1e-6, 2e-2, 2e-2)
    cool = science_plots.run_summary("black hole M_BH/M_cl = 1", run, 1e-6, 1e-2, 1e-2)
    passing = science_plots.run_summary("black hole M_BH/M_cl = 10", run, 1e-6, 5e-3, 1.2e-2)   # the largest decides
    assert not hot["converged"] and cool["converged"] and not passing["converged"]
    assert "> **Not converged: black hole M_BH/M_cl = 10** (internal energy error 5.0e-03 at the end (largest " \
           "1.2e-02)" in report.science_lines({"summary": "p", "runs": [passing]})[0]
    lines = report.science_lines({"summary": "the paragraph", "runs": [hot, cool]})
    assert lines[0].startswith("> **Not converged: tidal tails** (internal energy error 2.0e-02 at the end")
    assert sum("Not converged" in ln for ln in lines) == 1 and "the paragraph" in lines
    assert report.science_lines({"summary": "p", "runs": [cool]}) == ["p", ""]


def test_internal_energy_error_of_a_hand_built_pair_on_its_orbit():
    """Two stars of mass 1/2 at +-d/2 about a centre of mass at 8.5 kpc moving at 220 km/s: only
    their relative speed changes (u to u'), so E - E0 = K_int' - K_int = (u'^2 - u^2) / 8 exactly,
    and K_int + W = u^2 / 8 - (1/4) / sqrt(d^2 + eps^2)."""
    units = Units()
    centre, speed = np.array([8.5 * units.kpc, 0.0, 0.0]), np.array([0.0, units.from_kms(220.0), 0.0])
    d, u, u2, eps = 0.5, 0.8, 0.9, 0.01

    def pair(rel):
        x = np.stack([centre + [-d / 2, 0, 0], centre + [d / 2, 0, 0]], axis=1)
        v = np.stack([speed + [0, -rel / 2, 0], speed + [0, rel / 2, 0]], axis=1)
        return State(x, v, np.array([0.5, 0.5]), eps, 0.0, units)
    p0, p1 = energy_parts(pair(u)), energy_parts(pair(u2))
    binding = u ** 2 / 8 - 0.25 / math.sqrt(d ** 2 + eps ** 2)
    assert p0.internal == pytest.approx(binding, rel=1e-12)
    expected = abs(u2 ** 2 - u ** 2) / 8 / abs(binding)
    assert internal_energy_error(p1, p0, units) == pytest.approx(expected, rel=1e-9)
    assert relative_error(p1.total, p0.total) < 1e-4 * expected          # |E0| is the orbit's: it hides it


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
    assert 'Test of "the share beyond r_J does not depend on dt" at 1.5 orbits' in text and "Verdict:" in text
    assert "**not converged**" in rows[0] and "Above 0.01, not converged: 2^-3 T" in text     # N = 64: heated
    assert (out / "tidal_tails_n64_dt_series.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a second seed runs in its own folder and joins the series: the test then uses the seeds' scatter
    assert paper.main(base + ["--tidal-dt", "0.125", "--tidal-seed", "2"]) == 0
    assert (out / "runs" / "tidal_tails_n64_dt2^-3_seed2" / "run.json").exists()
    text = (out / "tidal_tails_n64.md").read_text()
    entries = json.loads((out / "tidal_tails_n64_series.json").read_text())
    assert "2^-3 T (seeds 1, 2: " in text and len(entries) == 3
    # N = 64: a share is a multiple of 1/64, and the two seeds may end on the same one (the chaos of
    # the run, thus the CPU's code, decides): then no scatter is measured, and the text says so
    test = dt_series.share_test(list(entries.values()))
    seeds = {next(r["beyond"] for r in e["rows"] if r["orbits"] == test.orbits)
             for e in entries.values() if e["params"]["dt"] == 0.125}
    assert test.seeds == (2, 1)
    if len(seeds) == 2:
        assert test.sigma_dof == 1 and "from 1 degrees of freedom" in text, text
    else:
        assert test.sigma_dof == 0 and "ended on the same share" in text, text
    shutil.rmtree(out / "runs" / "tidal_tails_n64_dt2^-3_seed2")
    # the series outlives the runs' snapshots: --no-science with one folder left keeps every entry
    shutil.rmtree(out / "runs" / "tidal_tails_n64_dt2^-3")
    assert paper.main(base + ["--tidal-dt", "0.0625", "--no-science"]) == 0
    assert len(json.loads((out / "tidal_tails_n64_series.json").read_text())) == 3
    assert "Verdict:" in (out / "tidal_tails_n64.md").read_text()
    # and with no run folder at all, --no-science redraws the series section from the JSON alone
    shutil.rmtree(out / "runs")
    head = (out / "tidal_tails_n64.md").read_text().split("### The time-step series")[0]
    assert paper.main(base + ["--tidal-dt", "0.0625", "--no-science"]) == 0
    text = (out / "tidal_tails_n64.md").read_text()
    assert text.startswith(head) and text.count("### The time-step series") == 1 and "chi^2 = " in text


def test_a_run_resumed_elsewhere_records_where_each_session_ran(tmp_path, monkeypatch):
    """Provenance is taken as each session starts (the code it imported), and a resume at another
    commit says so: 'a then b'."""
    write = resumable.write_snapshot

    def write_then_signal(folder, state, step, *a):
        path = write(folder, state, step, *a)
        if step == 250:
            signal.raise_signal(signal.SIGTERM)   # (a SIGINT would be ignored in a suite started with `&`)
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


def test_a_science_run_whose_folder_is_renamed_under_it_stops_and_its_temporaries_go(tmp_path, monkeypatch):
    """Hunts: a science run's folder renamed mid-run was written on by name (into whatever took
    it); a killed session's snapshot temporary stayed after the run was resumed and finished."""
    from nbsymple_versions import Simulation, make_cluster
    from nbsymple_versions.paper import resumable
    folder, old = tmp_path / "run", tmp_path / "old"
    folder.mkdir()
    (folder / ".snap_00000002.x1.npz.tmp").write_bytes(b"cut short")        # a killed session's
    original = resumable.write_snapshot

    def renaming(where, state, step):
        written = original(where, state, step)
        if not old.exists():
            folder.rename(old)
            folder.mkdir()
        return written
    monkeypatch.setattr(resumable, "write_snapshot", renaming)
    with pytest.raises(resumable.WriteFault, match="its folder .* was renamed or replaced while the run held it"):
        resumable.run(folder, lambda: Simulation(make_cluster(16, seed=1), "A", "leapfrog", "dp", 1e-3), {"seed": 1},
                      [2, 4], "science run", progress=False, checkpoint_every=1)
    assert list(folder.iterdir()) == [] and not list(old.glob("*.tmp")) and list(old.glob("snap_*"))



def test_fraction_beyond_is_the_share_not_the_median():
    """One star of four beyond r = 4 is 0.25 (a mutation hunt: np.median of the booleans, 0, passed:
    the test above has two of four outside, where the median is also 0.5)."""
    pos = np.array([[0.0, 0, 0], [1, 0, 0], [3, 0, 0], [0, 5, 0]])
    assert fraction_beyond(pos, (0, 0, 0), 4.0) == 0.25
    assert fraction_beyond(pos, (0, 0, 0), 0.5) == 0.75


def test_a_step_too_long_for_quarter_orbit_snapshots_is_refused(tmp_path, capsys):
    """`paper --full --tidal-dt 100` (longer than the 62.4 T orbit) was accepted: one step between
    snapshots, so "1.5 orbits" ran 600 T = 9.6 orbits, its series entry called the snapshot at
    1.6 orbits "1.5", and with no snapshot near 0.5, 1 or 1.5 orbits the figure ended in matplotlib's
    traceback. A step whose snapshots miss the quarter orbits by more than 1 % is refused in one
    sentence naming the largest step that keeps them (status 2, nothing run); the steps in use
    keep the run's span within 1 % of the orbits asked for."""
    from nbsymple_versions.paper.science_runs import orbital_period, tidal_schedule
    period = orbital_period(Units())
    for dt in (100.0, 10.0, 1.0):
        with pytest.raises(ValueError, match=r"--tidal-dt .* at most 0\.3"):
            tidal_schedule(dt, 1.5)
    for dt in (0.5, 0.125, 2.0 ** -7, 2.0 ** -11):
        every, total = tidal_schedule(dt, 1.5)
        assert abs(total * dt - 1.5 * period) <= 0.01 * 1.5 * period, (dt, total * dt / period)
    out = tmp_path / "plots"
    rc = paper.main(["--full", "--out", str(out), "--tidal-n", "16", "--tidal-dt", "100", "--science-version", "A",
                     "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "--tidal-dt" in err, err
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())


def test_a_black_hole_step_too_long_for_its_end_is_refused(tmp_path, capsys):
    """`paper --bh-dt 100` with the default --bh-t-end 3.5 ran one step to t = 100 T (28 times the
    run asked for) and recorded t_end = 3.5; --bh-dt 2 ended at 4 T. Whole steps that end the run
    more than 1 % from t_end are refused in one sentence naming the largest step that does not
    (status 2); the steps in use end within 1 %."""
    from nbsymple_versions.paper.science_runs import black_hole_steps
    for dt, t_end in ((100.0, 3.5), (2.0, 3.5), (0.3, 3.5)):
        with pytest.raises(ValueError, match=r"--bh-dt .* at most 0\.07"):
            black_hole_steps(dt, t_end)
    for dt, t_end in ((0.5, 1.0), (2.0 ** -7, 2.0), (2.0 ** -14, 3.5), (0.07, 3.5)):
        steps = black_hole_steps(dt, t_end)
        assert abs(steps * dt - t_end) <= 0.01 * t_end, (dt, t_end, steps * dt)
    fixture = Path(__file__).parent / "data" / "asv_fixture"
    out = tmp_path / "plots"
    rc = paper.main(["--results", str(fixture), "--out", str(out), "--tidal-n", "8", "--tidal-dt", "0.5",
                     "--tidal-orbits", "0.25", "--bh-n", "8", "--bh-dt", "100", "--science-version", "A", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "--bh-dt 100" in err, err
    assert not out.exists() or not any(out.iterdir())          # refused before anything is run or written


def test_a_step_is_quoted_only_where_every_one_of_its_runs_stays_below_the_limit():
    """Seeds straddling the limit at the smallest step (0.009, 0.009 and 0.02 at 2^-10 T; the larger
    steps all above): the verdict said "at dt = 2^-10 T, whose runs stay at or below 0.01, the share
    at 0.5 orbits is 2.00 %", a mean over a run that is not converged, and "only 2^-10 T kept the
    internal-energy error at or below 0.01". A step is quoted only where all its runs stay below."""
    shares = {dt: [0.020, 0.022, 0.018] for dt in (2 ** -8, 2 ** -9, 2 ** -10)}
    series = _seeded(shares, {2 ** -8: 0.1, 2 ** -9: 0.03, 2 ** -10: 0.009})
    series[-1]["rows"][0]["internal_energy_error"] = 0.02              # 2^-10 T, seed 3: not converged
    assert not dt_series.share_test(series).depends_on_dt
    text = "\n".join(dt_series.verdict(series))
    assert "whose runs stay at or below" not in text and "Verdict: converged in dt" not in text, text
    assert "2^-10 T (seeds 1, 2, 3: 0.009, 0.009, 0.02)" in text
    assert "no step kept every one of its runs at or below 0.01" in text, text
    # all three at 0.009: quoted as before
    series[-1]["rows"][0]["internal_energy_error"] = 0.009
    assert "at dt = 2^-10 T, whose runs stay at or below 0.01" in "\n".join(dt_series.verdict(series))


def test_dp_and_dsp_heat_alike_over_one_t_from_one_snapshot():
    """docs/paper.md said "dp and dsp give the same internal error to three digits" of the tidal
    runs, unscoped: measured over 1 T from one snapshot. Over longer runs the chaotic cluster's dp
    and dsp runs part (N = 512, seed 1, 2^-9 T from the start over 7.8 T: 1.5e-2 against 7.9e-3).
    The scoped claim holds (N = 1024, after 4 T, then 1 T each: to 1e-3 of each other) and the page
    says its scope."""
    base = Simulation(make_cluster(1024, seed=1), "A", "leapfrog", "dp", 2.0 ** -9, diagnostics=False)
    base.step(2048)
    parts0 = energy_parts(base.state)
    errors = []
    for precision in ("dp", "dsp"):
        sim = Simulation(base.state.copy(), "A", "leapfrog", precision, 2.0 ** -9, diagnostics=False)
        sim.step(512)
        errors.append(internal_energy_error(energy_parts(sim.state), parts0))
    assert errors[0] > 1e-4 and abs(errors[0] - errors[1]) < 1e-3 * errors[0], errors
    page = " ".join((Path(__file__).resolve().parents[1] / "docs" / "paper.md").read_text().split())
    assert "dp and dsp give the same internal error to three digits" not in page
    assert "over 1 T from one snapshot dp and dsp heat the cluster alike" in page


def test_a_star_at_the_radius_is_not_beyond_it():
    """`fraction_beyond` counts the stars farther than the radius: one at exactly r is inside
    (a mutation hunt: `>=` passed, no test star lying on the radius)."""
    pos = np.array([[0.0, 0, 0], [2, 0, 0], [0, 3, 0], [0, 0, 1]])
    assert fraction_beyond(pos, (0, 0, 0), 2.0) == 0.25
    assert fraction_beyond(pos, (0, 0, 0), 2.0, masses=[1, 5, 2, 2]) == pytest.approx(0.2)


def test_a_test_without_degrees_of_freedom_is_refused_not_answered():
    """chi^2 on 0 degrees of freedom, or an F test whose variance has none, is a ValueError: an F
    test with dof2 = 0 returned p = 0, "depends on dt" (a mutation hunt: dropping either check passed)."""
    with pytest.raises(ValueError, match="at least 1 degree of freedom"):
        stats.chi2_sf(1.0, 0)
    for dof1, dof2 in ((2, 0), (0, 6)):
        with pytest.raises(ValueError, match="at least 1 degree of freedom on each side"):
            stats.f_sf(1.0, dof1, dof2)


def test_the_seeds_test_weighs_each_step_by_its_runs():
    """With 2 seeds at one step and 4 at the other, the grand mean weighs each step's mean by its
    runs: shares 2, 4 % and 6, 6, 6, 6 % pool a variance of 5e-5 on 4 dof about a grand mean of 5 %,
    chi^2 = (2 0.02^2 + 4 0.01^2) / 5e-5 = 24, p the F(1, 4) tail of 24 (a mutation hunt: the
    unweighted mean of the means, 4.5 %, gave 27 and passed, every test having as many seeds per step)."""
    internal = {2 ** -8: 0.005, 2 ** -9: 0.005}
    test = dt_series.share_test(_seeded({2 ** -8: [0.02, 0.04], 2 ** -9: [0.06, 0.06, 0.06, 0.06]}, internal))
    assert test.seeds == (2, 4) and test.sigma_dof == 4 and test.dof == 1
    assert test.chi2 == pytest.approx(24.0) and test.p == pytest.approx(stats.f_sf(24.0, 1, 4))
    assert test.errors == pytest.approx((math.sqrt(5e-5 / 2), math.sqrt(5e-5 / 4)))


def test_the_counting_noise_of_a_mean_of_seeds_and_of_a_share_of_none():
    """Against the counting noise, a step's mean of k seeds that ended on one share has k times the
    weight of one run (chi^2 doubles with two such seeds per step), and a step at which no star is
    beyond r_J (f = 0, no counting noise) is still tested, at a floor of one star in N: a finite
    chi^2 and p (a mutation hunt: the mean's noise taken as one run's, and dropping the floor, passed)."""
    internal = {2 ** -8: 0.005, 2 ** -9: 0.005}
    one = dt_series.share_test(_seeded({2 ** -8: [0.020], 2 ** -9: [0.030]}, internal))
    two = dt_series.share_test(_seeded({2 ** -8: [0.020, 0.020], 2 ** -9: [0.030, 0.030]}, internal))
    assert one.sigma_dof == two.sigma_dof == 0 and one.chi2 > 0
    assert two.chi2 == pytest.approx(2 * one.chi2, rel=1e-12)
    assert two.errors == pytest.approx([e / math.sqrt(2) for e in one.errors], rel=1e-12)
    none = dt_series.share_test(_seeded({2 ** -8: [0.0], 2 ** -9: [3 / 4096]}, internal))
    assert math.isfinite(none.chi2) and 0 < none.p < 1 and none.chi2 > 0
    assert none.errors[0] == pytest.approx(1 / 4096)


def test_the_run_to_run_scatter_is_compared_with_the_rms_counting_noise():
    """The test's counting noise is the rms over the runs of sqrt(f (1 - f) / N), and the scatter
    is said in its units (a mutation hunt: the largest in place of the rms, and the ratio upside
    down, passed)."""
    shares = {2 ** -8: [0.010, 0.012, 0.008], 2 ** -9: [0.040, 0.042, 0.038]}
    test = dt_series.share_test(_seeded(shares, {2 ** -8: 0.005, 2 ** -9: 0.005}))
    runs = [f for s in shares.values() for f in s]
    counting = math.sqrt(sum(f * (1 - f) for f in runs) / len(runs) / 4096)
    assert test.counting == pytest.approx(counting, rel=1e-12) and test.sigma == pytest.approx(0.002)
    assert test.scatter_over_counting == pytest.approx(0.002 / counting)
    assert f"({0.002 / counting:.2f} times the counting noise" in "\n".join(dt_series.share_test_lines(test))   # to
    # the digits of the same ratio where another series borrows it (a hunt: "1.0 times" and "0.98 times" in REPORT.md)


def test_the_quoted_share_is_the_converged_steps_and_the_resolvable_change_twice_its_noise():
    """Where only the larger step stays below the limit and no dependence is seen, the share quoted
    is that step's (2.00 %, not the hot step's 2.10 %), and the change that would not have shown is
    twice the noise of the difference of the two means, 2 hypot(0.002 / sqrt 3, 0.002 / sqrt 3) =
    0.33 points (a mutation hunt: the last step's share, and once the noise, passed)."""
    series = _seeded({2 ** -8: [0.020, 0.022, 0.018], 2 ** -9: [0.021, 0.023, 0.019]}, {2 ** -8: 0.005, 2 ** -9: 0.02})
    text = "\n".join(dt_series.verdict(series))
    assert "at dt = 2^-8 T, whose runs stay at or below 0.01, the share at 0.5 orbits is 2.00 ± 0.12 %" in text, text
    assert "below about 0.33 points (twice the noise of that difference)" in text, text


def test_a_run_without_its_internal_error_leaves_out_the_fall_with_dt():
    """A run whose internal error at the test's orbit is unknown: the verdict is given, without the
    fall of the error per halving of dt (a mutation hunt: without the check, np.mean of None raised)."""
    series = _seeded({2 ** -8: [0.020], 2 ** -9: [0.021]}, {2 ** -8: 0.005, 2 ** -9: 0.002})
    assert "falls by 2.5 per halving" in "\n".join(dt_series.verdict(series))
    apart = _seeded({2 ** -8: [0.020], 2 ** -10: [0.021]}, {2 ** -8: 0.005, 2 ** -10: 0.0008})
    assert "falls by 2.5 per halving of dt (5.0e-03 at 2^-8 T; 8.0e-04 at 2^-10 T)" in "\n".join(
        dt_series.verdict(apart))       # two halvings apart, a fall of 6.25: 2.5 per halving (a hunt: "6.2 per")
    series[1]["rows"][0]["internal_energy_error"] = None
    text = "\n".join(dt_series.verdict(series))
    assert "Verdict:" in text and "per halving" not in text


def test_the_step_rule_is_a_quarter_of_the_encounter_time_at_any_n():
    """The encounter time at the softening length, sqrt(eps^3 / (G m)), is 2.05e-3 T at any N
    (eps^3 N is constant), and the default step the largest power of two at most a quarter of it:
    2^-11 T, 4.2 steps per encounter; at most a half: 2^-10 T (a mutation hunt: m = 1 in place of
    1/N, a ceiling in place of the floor, and 2 steps per encounter, each passed)."""
    from nbsymple_versions.paper.science_runs import TIDAL_DEFAULTS, encounter_step, encounter_time
    for n in (1024, 2048, 15360):
        assert encounter_time(n) == pytest.approx(2.05e-3, rel=0.01)
    assert encounter_step(2048) == TIDAL_DEFAULTS["dt"] == 2.0 ** -11
    assert encounter_time(2048) / encounter_step(2048) == pytest.approx(4.2, abs=0.05)
    assert encounter_step(2048, per=2) == 2.0 ** -10


def test_wall_times_are_seconds_below_90_s_minutes_below_90_min():
    """`fmt_wall`: seconds below 90 s, minutes below 90 min, else hours (a mutation hunt: hours from
    60 min passed)."""
    from nbsymple_versions.paper.science_runs import fmt_wall
    assert [fmt_wall(s) for s in (89, 90, 5399, 5400)] == ["89 s", "2 min", "90 min", "1.5 h"]


def test_the_work_of_every_black_hole_ratio_is_counted_against_the_limit(monkeypatch):
    """`check_black_hole_work` refuses the runs of all ratios together where they cannot end within
    the limit, though one alone would (a mutation hunt: the steps of one run checked passed)."""
    from nbsymple_versions.core import work
    from nbsymple_versions.paper.science_runs import black_hole_steps, check_black_hole_work
    dt = 2.0 ** -10
    one = work.least_seconds(1025, black_hole_steps(dt, 3.5))
    monkeypatch.setenv(work.MAX_DAYS_VARIABLE, repr(1.5 * one / 86400.0))
    assert check_black_hole_work(1024, dt, 3.5, (1.0,)) == black_hole_steps(dt, 3.5)
    with pytest.raises(work.WorkRefused, match="2 black-hole runs"):
        check_black_hole_work(1024, dt, 3.5, (1.0, 10.0))


def test_the_predicted_pericentre_is_the_passage_at_1_4_t_at_any_step():
    """The cluster dropped at 1 kpc at 2 km/s passes the black hole after 1.4 T (`run_black_hole`),
    and the leapfrog's prediction is the same time at a quarter of the step (a mutation hunt: a
    first half drift of a whole step, which moves the centre 1.5 dt v per step, passed)."""
    from nbsymple_versions import add_black_hole, make_cluster
    from nbsymple_versions.paper.science_runs import predicted_pericentre_step
    state = add_black_hole(make_cluster(64, seed=2, radius_kpc=1.0, speed_kms=2.0), 1.0)
    coarse = predicted_pericentre_step(state, 2.0 ** -6, 224)
    assert coarse * 2.0 ** -6 == pytest.approx(1.4, abs=0.05)
    assert abs(predicted_pericentre_step(state, 2.0 ** -8, 896) - 4 * coarse) <= 4
    assert predicted_pericentre_step(state, 2.0 ** -6, 768) == coarse    # 12 T, four passages: the first (a hunt)


def test_orbits_a_whole_number_of_snapshots_in_decimal_are_accepted():
    """0.57 orbits at 100 snapshots per orbit are 57 snapshots, though 0.57 x 100 is
    56.99999999999999 in floats, and a run's steps end at its last snapshot: 1.5 orbits are 6
    quarter orbits of `every` steps (a mutation hunt: truncating 56.99... to 56 refused the run, and
    one step more than the snapshots' passed)."""
    from nbsymple_versions.paper.science_runs import orbital_period, tidal_schedule
    every, total = tidal_schedule(2.0 ** -7, 0.57, snapshots_per_orbit=100)
    assert total == 57 * every
    every, total = tidal_schedule(2.0 ** -7, 1.5)
    assert every == round(orbital_period(Units()) / 4 / 2.0 ** -7) and total == 6 * every


def test_the_density_centre_starts_at_the_median_and_plot_extents_round_up():
    """A cluster of 64 stars at the origin with 40 escapers 1000 r_cl away: the shrinking sphere
    starts at the median, in the cluster, and finds it (the mean, 385 r_cl out, holds no star);
    `_nice` rounds up to 1, 2 or 5 times a power of ten and keeps those (a mutation hunt: starting
    at the mean, and 2 rounded up to 5, each passed)."""
    rng = np.random.default_rng(3)
    pos = np.concatenate([rng.normal(0.0, 0.3, (64, 3)), rng.normal(0.0, 0.3, (40, 3)) + [1000.0, 0, 0]])
    assert np.linalg.norm(science_plots.density_centre(pos)) < 0.3
    assert [science_plots._nice(x) for x in (0.5, 2.0, 3.0, 7.0, 10.0, 0.013)] == [0.5, 2.0, 5.0, 10.0, 10.0, 0.02]


def test_p_is_a_probability_at_many_degrees_of_freedom():
    """With many degrees of freedom on both sides, the incomplete beta function's continued fraction
    is summed on the side where it converges: P(F(d1, d2) >= f) + P(F(d2, d1) >= 1 / f) = 1, and p
    stays within [0, 1] (a mutation hunt: the sides swapped gave p = 1.82 at F(200, 200) and
    passed, the tables above having few degrees of freedom)."""
    for f, d1, d2 in ((0.2, 40, 2000), (2.5, 200, 200), (1.1, 300, 50)):
        p = stats.f_sf(f, d1, d2)
        assert 0.0 <= p <= 1.0 and p + stats.f_sf(1.0 / f, d2, d1) == pytest.approx(1.0, abs=1e-12), (f, d1, d2)


def test_the_tails_panels_span_at_least_the_cluster():
    """A hunt: a damaged snapshot of every body at one point gave the panels an extent of 1e-11 pc,
    and `paper` drew the Jacobi circle at 1e12 times the panel for ever (SIGTERM unanswered); at one
    point exactly, a math domain error. The extent is the bodies' 99.5th percentile, rounded up,
    and at least the cluster's radius."""
    rng = np.random.default_rng(5)
    spread = rng.normal(scale=40.0, size=(2000, 3))
    assert science_plots.panel_extent(spread, 10.0) in (100.0, 200.0)
    for degenerate in (np.zeros((64, 3)), np.full((64, 3), 1e-12)):
        assert science_plots.panel_extent(degenerate, 10.0) == 10.0
