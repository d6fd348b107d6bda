"""The offline dashboard: tools/dashboard/offline.py points every script and style of asv's own
index.html at a vendored file that exists, keeps an integrity hash only where it is the file's,
and every vendored package carries its licence. (The check in a real browser is
tools/dashboard/screenshot.py, run by hand: Chromium is no test dependency.)"""
import importlib.util
import itertools
import json
import re
import sys
from pathlib import Path

import asv

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
