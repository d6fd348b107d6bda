"""The offline dashboard: tools/dashboard/offline.py points every script and style of asv's own
index.html at a vendored file that exists, keeps an integrity hash only where it is the file's,
and every vendored package carries its licence. (The check in a real browser is
tools/dashboard/screenshot.py, run by hand: Chromium is no test dependency.)"""
import errno
import importlib.util
import itertools
import json
import shutil
import os
import re
import sys
from pathlib import Path

import asv
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("offline", ROOT / "tools" / "dashboard" / "offline.py")
offline = importlib.util.module_from_spec(spec)
sys.modules["offline"] = offline
spec.loader.exec_module(offline)

ASV_INDEX = Path(asv.__file__).parent / "www" / "index.html"


def test_asv_index_loads_nothing_from_the_network_after_the_rewrite():
    html, report = offline.rewrite(ASV_INDEX.read_text(encoding="utf-8"))
    assert offline.remote(html) == [], report
    assert len(report) == len(offline.ASSETS), report         # each asset asv names was rewritten
    for tag in re.findall(r"<(?:script|link)\b[^>]*>", html):
        src = re.search(r"(?:src|href)=\"(vendor/[^\"]+)\"", tag)
        if not src:
            continue
        path = offline.VENDOR / src.group(1).removeprefix("vendor/")
        assert path.is_file(), src.group(1)
        integrity = offline.INTEGRITY.search(tag)
        if integrity:
            assert offline.sri(path, integrity.group(1)) == integrity.group(2), src.group(1)


def test_every_vendored_package_keeps_its_licence():
    for package in (p for p in offline.VENDOR.iterdir() if p.is_dir()):
        meta = json.loads((package / "package.json").read_text())
        assert f"{meta['name']}-{meta['version']}".replace("/", "-") == package.name
        licences = [f for f in package.iterdir() if f.name.upper().startswith("LICENSE")]
        assert licences or meta.get("license"), package.name


# ----------------------------------------------------------------------------- the views pages open on

vspec = importlib.util.spec_from_file_location("views", ROOT / "tools" / "dashboard" / "views.py")
views = importlib.util.module_from_spec(vspec)
vspec.loader.exec_module(views)


def test_a_page_opens_where_the_most_versions_have_points():
    params = [["'A'", "'B'", "'C'"], ["256", "1024", "4096"], ["'sp'", "'dp'"]]
    names = ["version", "n", "precision"]
    seen = [False] * 18
    for i, (v, n, p) in enumerate(itertools.product(range(3), range(3), range(2))):
        seen[i] = v < 2 and n < 2 or (v == 2 and n == 0)          # A, B at 256 and 1024; C at 256 only
    assert views.view(params, names, seen) == {"p-version": ["'A'", "'B'", "'C'"], "p-n": ["256"],
                                               "p-precision": ["'dp'"]}
    seen[12:18] = [False] * 6                                       # without C: the larger N of the tie
    assert views.view(params, names, seen)["p-n"] == ["1024"]
    assert views.view(params, names, [False] * 18) is None          # nothing measured: left out
    assert views.view([], [], [True]) == {} and views.view([], [], [False]) is None


def test_the_changes_apply_to_the_installed_asv_and_only_once(tmp_path):
    html = tmp_path / "html"
    html.mkdir()
    for name in views.PATCHES:
        (html / name).write_text((ASV_INDEX.parent / name).read_text(encoding="utf-8"), encoding="utf-8")
    bench = {"params": [["'A'", "'B'"], ["256"]], "param_names": ["version", "n"]}
    (html / "index.json").write_text(json.dumps({"benchmarks": {"a.A.time_x": bench, "a.A.time_gpu": bench}}))
    graphs = html / "graphs" / "machine-m"
    graphs.mkdir(parents=True)
    (graphs / "a.A.time_x.json").write_text(json.dumps([[1, [1.0, None]], [2, [1.1, None]]]))
    (graphs / "a.A.time_gpu.json").write_text(json.dumps([[1, [None, None]]]))
    assert views.main([str(html)]) == 0 and views.main([str(html)]) == 0       # a second run changes nothing more
    for name, (_, new) in views.PATCHES.items():
        assert (html / name).read_text(encoding="utf-8").count(new) == 1, name
    index = json.loads((html / "index.json").read_text())
    assert list(index["benchmarks"]) == ["a.A.time_x"]
    assert index["benchmarks"]["a.A.time_x"][views.DEFAULTS_KEY] == {"p-version": ["'A'"], "p-n": ["256"]}
    (html / "graphdisplay.js").write_text("not asv's file")
    assert views.main([str(html)]) == 1


# ----------------------------------------------------------------------------- what the folder may hold

def _published(tmp_path) -> Path:
    """A folder as asv publish leaves it: its index.html and the two scripts views.py changes."""
    html = tmp_path / "html"
    html.mkdir()
    for name in ("index.html", *views.PATCHES):
        (html / name).write_bytes((ASV_INDEX.parent / name).read_bytes())
    return html


INDEXES = {   # index.json -> the status views.py ends with (2: refused, nothing changed)
    "not JSON": (b"[1", 2), "not UTF-8": (b"\xff{}", 2), "a list": (b"[1, 2]", 2), "no benchmarks": (b"{}", 2),
    "benchmarks a list": (b'{"benchmarks": [1]}', 2), "deep": (b"[" * 5000 + b"]" * 5000, 2),
    "odd benchmarks": (json.dumps({"benchmarks": {"b[*]": {"params": 5}, "c": 3, "d": {"params": [[1]]},
                                                  "e": {"params": [["'A'"]], "param_names": []},
                                                  "f": {"params": [["x"] * 1000] * 9, "param_names": ["p"] * 9},
                                                  "a": {"params": [["'A'"]], "param_names": ["v"]},
                                                  "/etc/passwd": {"params": [["1"]], "param_names": ["x"]},  # a
                                                  "a/../../b": {"params": [], "param_names": []}}}).encode(), 0),
}                                                                        # NotImplementedError traceback (a hunt)


@pytest.mark.parametrize("case", sorted(INDEXES))
def test_views_takes_any_index_and_graphs_or_names_what_it_refuses(tmp_path, capsys, case):
    """Whatever index.json and the graph files hold: the views of the benchmarks it can read
    (status 0; a benchmark whose parameters are not asv's left as it is, a graph file that is not
    one read as no data, each named), or one sentence and nothing changed (status 2)."""
    html = _published(tmp_path)
    data, status = INDEXES[case]
    (html / "index.json").write_bytes(data)
    graphs = html / "graphs" / "machine-m"
    graphs.mkdir(parents=True)
    (graphs / "a.json").write_text(json.dumps([[1, [1.0]], "junk", [2], [3, None], [4, {"x": 1}]]))
    (graphs / "c.json").write_bytes(b"\xff")
    (graphs / "d.json").write_bytes(b"[" * 5000)
    before = {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()}
    assert views.main([str(html)]) == status
    err = capsys.readouterr().err
    if status == 2:
        assert {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()} == before
        assert len(err.strip().splitlines()) == 1 and "nothing changed" in err, err
    else:
        index = json.loads((html / "index.json").read_text())
        assert index["benchmarks"]["a"][views.DEFAULTS_KEY] == {"p-v": ["'A'"]}
        assert {"b[*]", "c", "d", "e", "f", "/etc/passwd", "a/../../b"} <= set(index["benchmarks"]), index


@pytest.mark.parametrize("link", ["a file", "a folder", "vendor"])
def test_offline_replaces_a_link_under_vendor_and_refuses_an_index_that_is_not_text(tmp_path, capsys, link):
    """A link at a file's name, at a folder's or at vendor/ itself is replaced, never written
    through (a hunt found 27 files written into the folder a link at vendor/ named)."""
    html = _published(tmp_path)
    victim, outside = tmp_path / "victim.txt", tmp_path / "outside"
    victim.write_text("precious\n")
    outside.mkdir()
    planted = html / "vendor" / offline.ASSETS["https://code.jquery.com/jquery-3.3.1.min.js"]
    if link == "vendor":
        (html / "vendor").symlink_to(outside, target_is_directory=True)
    elif link == "a folder":
        planted.parent.parent.mkdir(parents=True)
        planted.parent.symlink_to(outside, target_is_directory=True)
    else:
        planted.parent.mkdir(parents=True)
        planted.symlink_to(victim)
    assert offline.main([str(html)]) == 0
    assert victim.read_text() == "precious\n" and list(outside.iterdir()) == []
    assert not any(p.is_symlink() for p in (html / "vendor").rglob("*")) and not (html / "vendor").is_symlink()
    assert planted.read_bytes() == (offline.VENDOR / planted.relative_to(html / "vendor")).read_bytes()
    capsys.readouterr()
    (html / "index.html").write_bytes(b"\xff<html>")
    assert offline.main([str(html)]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8" in err and len(err.strip().splitlines()) == 1, err


def test_offline_says_in_one_line_what_a_page_still_loads_and_what_stands_in_vendors_place(tmp_path, capsys):
    """A hunt: a line feed in a script's address split offline.py's sentence in two, and an escape
    in it reached the terminal raw; a file where vendor/ goes was said to be "File exists"."""
    html = _published(tmp_path)
    index = html / "index.html"
    index.write_text(index.read_text().replace("</head>", '<script src="http://evil.example/a\nb\x1b[31mRED.js">'
                                                           "</script></head>", 1))
    assert offline.main([str(html)]) == 1
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "http://evil.example/a\\nb" in err, err
    assert "\x1b" not in out, out
    for name in ("vendor", "vendor/jquery-3.3.1"):
        if (html / "vendor").is_file():
            (html / "vendor").unlink()
        shutil.rmtree(html / "vendor", ignore_errors=True)
        (html / name).parent.mkdir(exist_ok=True)
        (html / name).write_text("a file\n")
        assert offline.main([str(html)]) == 2
        err = capsys.readouterr().err
        assert err == f"offline.py: {html / name} is a file, not a folder; move it away\n", err


def test_views_reads_everything_before_it_writes_and_refuses_graphs_that_are_a_link(tmp_path, capsys, monkeypatch):
    """A hunt: graphs/ a link to / had views.py walk the machine's files and, at a vanished /proc
    entry, say "cannot write" after it had changed two scripts."""
    html = _published(tmp_path)
    (html / "index.json").write_text(json.dumps({"benchmarks": {"a.B.time_x": {"params": [["1"]],
                                                                               "param_names": ["n"]}}}))
    before = {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()}
    (html / "graphs").symlink_to(tmp_path, target_is_directory=True)
    assert views.main([str(html)]) == 2
    assert "is a symbolic link, not the folder asv publish writes; nothing changed" in capsys.readouterr().err
    (html / "graphs").unlink()
    (html / "graphs").mkdir()

    def gone(*args):
        raise FileNotFoundError(2, "No such file or directory", str(html / "graphs" / "x"))
    monkeypatch.setattr(views, "measured", gone)
    assert views.main([str(html)]) == 2
    assert capsys.readouterr().err == (f"views.py: cannot read {html / 'graphs' / 'x'}: No such file or directory; "
                                       f"nothing changed\n")
    assert {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("tool", ["views", "offline"])
def test_a_full_disk_is_one_sentence_and_status_4(tmp_path, capsys, monkeypatch, tool):
    html = _published(tmp_path)
    (html / "index.json").write_text(json.dumps({"benchmarks": {}}))
    module = {"views": views, "offline": offline}[tool]

    real = os.fsync

    def full(fd):                        # as a disk fills: at the file's flush, an error that names no file
        if os.path.isfile(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)
    monkeypatch.setattr(os, "fsync", full)
    assert module.main([str(html)]) == 4
    err = capsys.readouterr().err
    assert "No space left on device" in err and len(err.strip().splitlines()) == 1, err
    assert f"cannot write {html}" in err and "None" not in err, err          # a hunt: "cannot write None"


FOLDERS_THAT_ARE_NOT = {"nothing": (lambda p: None, "does not exist"),
                        "a file": (lambda p: p.write_text("x\n"), "is a file, not a folder"),
                        "a dangling link": (lambda p: p.symlink_to("gone"), "is a dangling symbolic link to gone"),
                        "an empty folder": (lambda p: p.mkdir(), "holds no index.")}


@pytest.mark.parametrize("kind", sorted(FOLDERS_THAT_ARE_NOT))
@pytest.mark.parametrize("tool", ["views", "offline"])
def test_a_folder_that_asv_did_not_publish_into_is_named_as_what_it_is(tmp_path, capsys, tool, kind):
    """`views.py` and `offline.py` given a folder that is not there, a file, a link to nothing or a
    folder without asv's index printed their usage line alone (a hunt): one sentence, status 2,
    naming the folder and what it is (`arguments.script_folder`)."""
    make, said = FOLDERS_THAT_ARE_NOT[kind]
    make(tmp_path / "html")
    assert {"views": views, "offline": offline}[tool].main([str(tmp_path / "html")]) == 2
    err = capsys.readouterr().err
    assert f"{tool}.py: {tmp_path / 'html'} {said}" in err and len(err.strip().splitlines()) == 1, err


def test_a_folder_whose_index_is_no_file_is_taken_and_its_index_named(tmp_path, capsys):
    """A folder that holds asv's index.html as something other than a file (here a folder) is the
    folder named: the reader names the index as what it is, not the folder as holding none."""
    (tmp_path / "html" / "index.html").mkdir(parents=True)
    assert offline.main([str(tmp_path / "html")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'html' / 'index.html'} is a folder, not a file" in err and "holds no" not in err, err


def test_a_page_opens_on_dp_and_task_1_wherever_they_stand_among_the_values(tmp_path):
    """`view`: among equally full views, the paper's dp and task 1 even where they are not the last value of
    their parameter; `measured` reads the machines' graphs, not asv's summary of them (a mutation hunt: the
    preference dropped, the last value winning, and a summary's point taken for the first combination's,
    passed every test)."""
    params = [["'A'", "'B'"], ["256"], ["'pairwise'", "'galactic'"], ["'dp'", "'sp'"]]
    names = ["version", "n", "task", "precision"]
    assert views.view(params, names, [True] * 8) == {"p-version": ["'A'", "'B'"], "p-n": ["256"],
                                                     "p-task": ["'pairwise'"], "p-precision": ["'dp'"]}
    graphs = tmp_path / "graphs"
    (graphs / "summary").mkdir(parents=True)
    (graphs / "machine-m").mkdir()
    (graphs / "summary" / "steps.Step.time_step.json").write_text(json.dumps([[1, 5.0]]))
    (graphs / "machine-m" / "steps.Step.time_step.json").write_text(json.dumps([[1, [None, 2.0]]]))
    assert views.measured(graphs, "steps.Step.time_step", 2) == [False, True]


def test_a_stylesheet_still_loaded_from_the_network_is_named():
    """`offline.remote`: a style sheet from a CDN is named as well as a script (a mutation hunt: only scripts
    named, a stylesheet left on the network said to load from vendor/, passed every test)."""
    html = ('<link rel="stylesheet" href="https://cdn.example/x.css">\n'
            '<link rel="icon" href="https://cdn.example/i.png">\n<script src="https://cdn.example/y.js"></script>')
    assert offline.remote(html) == ["https://cdn.example/x.css", "https://cdn.example/y.js"]


def test_each_asset_points_at_its_vendored_file_and_keeps_every_hash_it_matches():
    """`offline.rewrite`: each CDN address becomes vendor/<its file>, a hash the vendored file matches
    is kept whatever its algorithm (sha512 as well as sha256), and an address it does not know is left
    and said (a mutation hunt: the vendor/ prefix dropped, every hash checked as sha256, the line for
    an address left alone dropped, each passed every test)."""
    page = ASV_INDEX.read_text(encoding="utf-8") + '<script src="https://cdn.example/y.js"></script>\n'
    html, report = offline.rewrite(page)
    for url, file in offline.ASSETS.items():
        assert url not in html and html.count(f'="vendor/{file}"') == 1, url
    kept = {line.split(": integrity ")[0]: line.split()[2] for line in report
            if line.endswith("(same file as the CDN's)")}
    assert kept == {"vendor/jquery-3.3.1/dist/jquery.min.js": "sha256",
                    "vendor/flot-orderbars-1.0.0/js/jquery.flot.orderBars.js": "sha256",
                    "vendor/blueimp-md5-2.19.0/js/md5.min.js": "sha512",
                    "vendor/bootstrap-3.1.1/dist/js/bootstrap.min.js": "sha256",
                    "vendor/bootstrap-3.1.1/dist/css/bootstrap.min.css": "sha256"}, report
    assert report[-1] == "left alone (not an asset asv loads from a CDN): https://cdn.example/y.js", report


def test_offline_copies_every_vendored_file(tmp_path, capsys):
    """`offline.main` copies all of vendor/, byte for byte: the scripts and styles, and each package's
    package.json and licence beside them (a mutation hunt: the .json files left out passed every test)."""
    html = _published(tmp_path)
    assert offline.main([str(html)]) == 0

    def files(root):
        return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert files(html / "vendor") == files(offline.VENDOR)


def test_a_page_opens_on_the_view_with_the_most_curves_before_the_papers_dp():
    """`view`: the paper's dp and task 1 only break a tie; a view with more curves wins over them
    (a mutation hunt: the preference put before the count of curves passed every test)."""
    params = [["'A'", "'B'"], ["'sp'", "'dp'"]]
    seen = [True, True, True, False]                   # (A, sp), (A, dp), (B, sp), (B, dp): B has no dp
    assert views.view(params, ["version", "precision"], seen) == {"p-version": ["'A'", "'B'"],
                                                                  "p-precision": ["'sp'"]}


def test_the_address_a_view_is_said_with_is_quoted_and_joined_as_the_dashboard_reads_it():
    """`address`, the line views.py prints for each benchmark: each value quoted, the pairs joined by &
    (a mutation hunt: quoting dropped, or the pairs joined by commas, passed every test)."""
    selection = {"p-version": ["'A'", "'B'"], "p-n": ["256"]}
    assert views.address("a.A.time_x", selection) == "#a.A.time_x?p-version=%27A%27&p-version=%27B%27&p-n=256"
    assert views.address("a.A.time_x", {}) == "#a.A.time_x"


def test_a_benchmark_without_parameters_keeps_its_page_and_only_numbers_are_data(tmp_path, capsys):
    """asv's graph of a benchmark without parameters holds [date, value] with a bare number: that is
    data, so the benchmark stays in index.json, with no view to open on and no line said; a true,
    a NaN or an infinity is no data (a mutation hunt: a bare value read as none dropped such a
    benchmark from the dashboard; a view of {} written for it; true and NaN counted as measured)."""
    html = _published(tmp_path)
    bench = {"params": [], "param_names": []}
    (html / "index.json").write_text(json.dumps({"benchmarks": {"a.A.time_x": bench}}))
    graphs = html / "graphs" / "machine-m"
    graphs.mkdir(parents=True)
    (graphs / "a.A.time_x.json").write_text(json.dumps([[1, 2.5]]))
    assert views.main([str(html)]) == 0
    assert json.loads((html / "index.json").read_text())["benchmarks"] == {"a.A.time_x": bench}
    assert "a.A.time_x" not in capsys.readouterr().out
    (graphs / "a.A.time_y.json").write_text("[[1, [true, NaN, Infinity, 1.0]]]")
    assert views.measured(html / "graphs", "a.A.time_y", 4) == [False, False, False, True]


def test_a_second_run_changes_nothing_and_a_script_with_the_line_twice_is_refused(tmp_path, capsys):
    """views.py run again leaves asv's scripts byte for byte, and refuses (status 1, nothing changed)
    a script that holds the line it changes twice, which is not asv 0.6's (a mutation hunt: the
    change applied again, and the line's count not checked to be one, passed every test)."""
    html = _published(tmp_path)
    (html / "index.json").write_text(json.dumps({"benchmarks": {}}))
    assert views.main([str(html)]) == 0
    once = {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()}
    assert views.main([str(html)]) == 0
    assert {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()} == once
    (tmp_path / "twice").mkdir()
    html = _published(tmp_path / "twice")
    (html / "index.json").write_text(json.dumps({"benchmarks": {}}))
    (html / "graphdisplay.js").write_text((html / "graphdisplay.js").read_text(encoding="utf-8") + views.HOOK,
                                          encoding="utf-8")
    before = {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()}
    assert views.main([str(html)]) == 1
    assert {p.name: p.read_bytes() for p in html.iterdir() if p.is_file()} == before
    assert "is not asv 0.6's" in capsys.readouterr().err
