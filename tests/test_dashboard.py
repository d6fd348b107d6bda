"""The offline dashboard: tools/dashboard/offline.py points every script and style of asv's own
index.html at a vendored file that exists, keeps an integrity hash only where it is the file's,
and every vendored package carries its licence. (The check in a real browser is
tools/dashboard/screenshot.py, run by hand: Chromium is no test dependency.)"""
import importlib.util
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
