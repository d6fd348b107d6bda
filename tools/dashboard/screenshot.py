"""Check the published dashboard in a real headless browser with the network cut off.

    python tools/dashboard/screenshot.py html OUT.png ['#hash of a benchmark page']

Serves HTML_DIR on 127.0.0.1, opens it in headless Chromium (Debian's `chromium` package) whose
host resolver refuses every other host, so a page that still needs a CDN fails as it would on
an offline cluster node; writes a screenshot and reports what the page shows: asv's error page
(a script did not load) or the benchmark list / graph it drew. Exit status 0 when the page
rendered, 1 when it did not, 2 when Chromium is missing. Screenshots are not committed.
"""
import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from nbsymple_versions.arguments import script_folder, script_paths

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
OFFLINE = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path):
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def chromium(browser: str, url: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--host-resolver-rules={OFFLINE}", "--window-size=1400,1000",
                           "--virtual-time-budget=20000", *args, url],
                          capture_output=True, text=True, timeout=180)


# the docstring's usage, which python -OO drops
USAGE = "usage: python tools/dashboard/screenshot.py html OUT.png ['#hash of a benchmark page']"


def main(argv) -> int:
    if len(argv) not in (2, 3):
        print(USAGE, file=sys.stderr)
        return 2
    if (html := script_folder("screenshot.py", argv[0], "index.html")) is None \
            or (paths := script_paths("screenshot.py", argv[1:2])) is None:
        return 2
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        print("screenshot.py: no Chromium found (apt-get install chromium)", file=sys.stderr)
        return 2
    folder, out = html.resolve(), paths[0].resolve()
    server = serve(folder)
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html{argv[2] if len(argv) == 3 else ''}"
    try:
        chromium(browser, url, f"--screenshot={out}")
        dom = chromium(browser, url, "--dump-dom").stdout
    finally:
        server.shutdown()
    text = re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S))
    words = " ".join(text.split())
    if "external (JavaScript) dependencies" in words or not out.exists():      # asv's error.html
        print(f"screenshot.py: the dashboard did not render offline: {words[:300]}", file=sys.stderr)
        return 1
    canvases = dom.count("<canvas")
    print(f"screenshot.py: {out.name} written; the page shows {canvases} plot canvases and: {words[:400]}")
    return 0


if __name__ == "__main__":
    from nbsymple_versions.entry import command
    sys.exit(command("python tools/dashboard/screenshot.py", lambda: main(sys.argv[1:])))
