"""Make `asv publish`'s dashboard work with no internet: copy the vendored scripts and styles
(vendor/, the npm packages of the versions asv 0.6 loads from CDNs, with their licences) next to
the published pages and point index.html at them.

    python tools/dashboard/offline.py html        (make dashboard runs it after asv publish)

A tag's Subresource-Integrity hash is kept when the local file has exactly that hash, and
removed when the npm package ships a different build (flot: only unminified files; the
stupidtable version asv names is not on npm, 1.1.3 is). Prints one line per asset; exits 1 if
index.html still loads anything from the network.
"""
import base64
import hashlib
import re
import sys
from pathlib import Path

from nbsymple_versions.arguments import script_folder
from nbsymple_versions.entry import printable, sentence
from nbsymple_versions.environment import blocking
from nbsymple_versions.runs.errors import fault_status
from nbsymple_versions.runs.paths import FileRefused, read_bytes, write_file, written_name

KIND = "published dashboard file"   # runs/paths.py's LIMITS

VENDOR = Path(__file__).resolve().parent / "vendor"
# CDN address in asv's www/index.html -> file under vendor/
ASSETS = {
    "https://code.jquery.com/jquery-3.3.1.min.js": "jquery-3.3.1/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": "flot-0.8.3/jquery.flot.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js": "flot-0.8.3/jquery.flot.time.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js":
        "flot-0.8.3/jquery.flot.selection.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js":
        "flot-0.8.3/jquery.flot.categories.js",
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        "flot-orderbars-1.0.0/js/jquery.flot.orderBars.js",
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        "stupid-table-plugin-1.1.3/stupidtable.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js": "blueimp-md5-2.19.0/js/md5.min.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js": "bootstrap-3.1.1/dist/js/bootstrap.min.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        "bootstrap-3.1.1/dist/css/bootstrap.min.css",
}
TAG = re.compile(r"<(script|link)\b[^>]*?\b(?:src|href)=\"(https?://[^\"]+)\"[^>]*>", re.S)
INTEGRITY = re.compile(r"\s+integrity=\"(sha\d+)-([^\"]+)\"")


def sri(path: Path, algorithm: str) -> str:
    return base64.b64encode(hashlib.new(algorithm, path.read_bytes()).digest()).decode()


def rewrite(html: str) -> tuple[str, list[str]]:
    """index.html with every CDN asset pointing to vendor/; one line of report per asset."""
    report = []

    def local(match):
        tag, url = match.group(0), match.group(2)
        if url not in ASSETS:
            report.append(f"left alone (not an asset asv loads from a CDN): {url}")
            return tag
        path = VENDOR / ASSETS[url]
        tag = tag.replace(url, f"vendor/{ASSETS[url]}")
        integrity = INTEGRITY.search(tag)
        if integrity and sri(path, integrity.group(1)) == integrity.group(2):
            report.append(f"vendor/{ASSETS[url]}: integrity {integrity.group(1)} kept (same file as the CDN's)")
        elif integrity:
            tag = INTEGRITY.sub("", tag)
            report.append(f"vendor/{ASSETS[url]}: integrity removed (npm's file is not the CDN's: "
                          f"see vendor/README.md)")
        return tag

    return TAG.sub(local, html), report


def remote(html: str) -> list[str]:
    """Addresses index.html would still load from the network (scripts and styles)."""
    return [m.group(2) for m in TAG.finditer(html) if m.group(1) == "script" or "stylesheet" in m.group(0)]


def copy_vendor(out: Path):
    """vendor/ into `out`/vendor/, each file written anew (`write_file`) in folders made here: a
    link planted at one of its names, a folder's too, is replaced, never written through."""
    _folder(out / "vendor")
    for path in sorted(VENDOR.rglob("*")):          # a folder before what it holds
        target = out / "vendor" / path.relative_to(VENDOR)
        if path.is_dir():
            _folder(target)
        elif path.is_file():
            write_file(target, path.read_bytes())


def _folder(path: Path):
    """`path` a folder of its own: a link there is removed (the files it led to stay), not followed."""
    if path.is_symlink():
        path.unlink()
    path.mkdir(exist_ok=True)


def main(argv) -> int:
    if len(argv) != 1:
        print("usage: python tools/dashboard/offline.py HTML_DIR (the folder asv publish wrote)", file=sys.stderr)
        return 2
    if (out := script_folder("offline.py", argv[0], "index.html")) is None:
        return 2
    index = out / "index.html"
    try:
        html = read_bytes(index, KIND).decode("utf-8")
    except (FileRefused, UnicodeDecodeError) as e:
        reason = str(e) if isinstance(e, FileRefused) else f"{index} is not UTF-8 text, so not asv's index.html"
        print(sentence(f"offline.py: {reason}; nothing changed"), file=sys.stderr)
        return 2
    html, report = rewrite(html)
    try:
        copy_vendor(out)
        write_file(index, html)
    except OSError as e:           # a folder or a file in the way, a full disk
        name = written_name(e)
        if isinstance(e, FileExistsError) and (found := blocking(name)) is not None:    # (a hunt: "File exists")
            print(sentence(f"offline.py: {found[0]} is {found[1]}, not a folder; move it away"), file=sys.stderr)
            return 2
        print(sentence(f"offline.py: cannot write {name}: {e.strerror or e}"), file=sys.stderr)
        return fault_status(e)
    print("\n".join(map(printable, report)))      # (a hunt: an escape a page held, written raw to the terminal)
    left = remote(html)
    if left:                       # one line however the page's addresses are written (a hunt: a line feed in one)
        print(sentence(f"offline.py: {index} still loads {', '.join(left)} from the network"), file=sys.stderr)
        return 1
    print(f"offline.py: {index} loads every script and style from {out}/vendor/")
    return 0


if __name__ == "__main__":
    from nbsymple_versions.entry import command
    sys.exit(command("python tools/dashboard/offline.py", lambda: main(sys.argv[1:])))
