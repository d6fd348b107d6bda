"""The tooling around the asv suite (as numpy, scipy and Warp keep theirs beside their
benchmarks): it drives `benchmarks/`, which does not import it. Run from the repository root,
as the Makefile does (`python -m tools.<module>`):

    tracking.py   the suite as a tracking instrument: machine identity, what a grid runs, the
                  fixed environment name, provenance, scratch configurations (make bench,
                  bench-smoke, benchmarks-json, find), the history since the reference commit
    gate.py       the regression gate: this checkout against BASE (make gate)
    migrate.py    rewrite committed results/ onto the current suite and machine name
    dashboard/    offline.py (make dashboard: the published pages without a network),
                  views.py (make dashboard: the view each page opens on, no empty thumbnails),
                  screenshot.py (the dashboard in headless Chromium, by hand), vendor/ (the
                  scripts and styles asv loads, with their licences)

See docs/tracking_performance.md.
"""
from nbsymple_versions.loading import located_by_python_m, quiet_while_loading

if located_by_python_m(__name__):     # `python -m tools....`: a Ctrl-C while it loads, quietly
    quiet_while_loading()
