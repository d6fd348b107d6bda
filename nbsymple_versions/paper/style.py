"""One figure style for every plot of `nbsymple paper`: colours per version and per task,
fonts, the provenance footer, and saving at 200 dpi."""
from __future__ import annotations

from contextlib import contextmanager
import io
from pathlib import Path
import textwrap
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..core.vocabulary import PRECISIONS, TASKS  # noqa: E402
from ..runs.paths import write_file  # noqa: E402
from ..versions import LETTERS  # noqa: E402

DPI = 200
# one colour, marker and label per version of versions.TABLE, in its order (A..F)
VERSION_COLORS = dict(zip(LETTERS, ("#4d4d4d", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"), strict=True))
VERSION_MARKERS = dict(zip(LETTERS, ("o", "s", "^", "v", "D", "P"), strict=True))
VERSION_LABELS = {v: f"{v}: {where}" for v, where in zip(LETTERS, (
    "1 CPU core", "all CPU cores", "GPU pairwise, 1 core", "GPU pairwise, all cores", "all forces on GPU(s)",
    "MPI ranks"), strict=True)}
# Curves that coincide (C and D share a kernel; A and B at small N) must both stay visible: each
# version is drawn a little thinner, with a smaller marker and above the one before it, so an
# earlier curve shows as a rim around a later one lying on it.
VERSION_WIDTHS = dict(zip(LETTERS, (2.0, 1.4, 2.4, 1.4, 1.0, 1.0), strict=True))
VERSION_SIZES = dict(zip(LETTERS, (6.0, 4.5, 7.0, 5.0, 4.5, 4.0), strict=True))
PRECISION_ORDER = tuple(sorted(PRECISIONS, key=("dp", "dsp", "sp").index))   # panels and legends: dp first
PRECISION_STYLES = {"dp": "-", "dsp": "--", "sp": ":"}
PRECISION_MARKERS = {"dp": "o", "dsp": "s", "sp": "^"}
PRECISION_WIDTHS = {"dp": 1.4, "dsp": 2.4, "sp": 1.4}      # dsp wide beneath sp's dots where they meet
PRECISION_SIZES = {"dp": 4.5, "dsp": 6.5, "sp": 4.5}
PRECISION_LABELS = {"dp": "dp (double)", "dsp": "dsp (double-single)", "sp": "sp (single)"}
TASK_LABELS = {"pairwise": "1 pairwise forces", "galactic": "2 galactic force",
               "integrate": "3 integration", "transfer": "4 host-device transfer", "communicate": "5 MPI exchange"}
TASK_COLORS = dict(zip(TASKS, ("#3b6ea8", "#e3a33b", "#5aa469", "#c8553d", "#8c6bb1"), strict=True))

RC = {
    "figure.dpi": 100, "savefig.dpi": DPI, "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
    "legend.fontsize": 7.5, "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True,
    "grid.alpha": 0.3, "grid.linewidth": 0.5, "lines.linewidth": 1.4, "lines.markersize": 4.5,
    "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    "font.family": "DejaVu Sans", "mathtext.fontset": "dejavusans",
}


@contextmanager
def quiet_glyphs():
    """Text from the results (a CPU name in machine.json...) may hold characters the font lacks:
    they are drawn as boxes, without matplotlib's warning on stderr."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(?s).*Glyph .* missing from", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"(?s).*Matplotlib currently does not support",
                                category=UserWarning)
        yield


def version_line(v: str) -> dict:
    """Plot keywords of version `v`'s curve: colour, marker, width, marker size, drawing order."""
    i = LETTERS.index(v) if v in LETTERS else len(LETTERS)
    return {"color": VERSION_COLORS.get(v), "marker": VERSION_MARKERS.get(v, "o"), "lw": VERSION_WIDTHS.get(v, 1.0),
            "ms": VERSION_SIZES.get(v, 4.0), "zorder": 2 + i}


@contextmanager
def style():
    with matplotlib.rc_context(RC), quiet_glyphs():
        yield


FOOTER_POINTS = 6
FOOTER_CHAR_POINTS = 0.55 * FOOTER_POINTS     # DejaVu Sans' mean character width


def footer(fig, text: str):
    """Provenance lines at the bottom of a figure (machine, device, commit, date, load), wrapped
    to the figure's width, so that a long one does not widen the saved figure beyond its axes."""
    width = max(40, int(fig.get_figwidth() * 72 / FOOTER_CHAR_POINTS))
    lines = [wrapped for line in text.splitlines()
             for wrapped in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]]
    fig.text(0.005, -0.005, "\n".join(lines), fontsize=FOOTER_POINTS, color="0.35", ha="left",
             va="top")  # below the axes; the tight bounding box keeps it


def save(fig, path: Path, source: str) -> Path:
    with quiet_glyphs():
        footer(fig, source)
        image = io.BytesIO()
        fig.savefig(image, format=Path(path).suffix[1:] or "png", dpi=DPI, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    write_file(path, image.getvalue())           # never through a link at `path`
    return Path(path)
