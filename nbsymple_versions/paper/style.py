"""One figure style for every plot of `nbsymple paper`: colours per version and per task,
fonts, the provenance footer, and saving at 200 dpi."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 200
VERSION_COLORS = {"A": "#4d4d4d", "B": "#1f77b4", "C": "#ff7f0e", "D": "#2ca02c", "E": "#d62728"}
VERSION_MARKERS = {"A": "o", "B": "s", "C": "^", "D": "v", "E": "D"}
VERSION_LABELS = {"A": "A: 1 CPU core", "B": "B: all CPU cores", "C": "C: GPU pairwise, 1 core",
                  "D": "D: GPU pairwise, all cores", "E": "E: all forces on GPU(s)"}
PRECISION_STYLES = {"dp": "-", "dsp": "--", "sp": ":"}
PRECISION_MARKERS = {"dp": "o", "dsp": "s", "sp": "^"}
PRECISION_LABELS = {"dp": "dp (double)", "dsp": "dsp (double-single)", "sp": "sp (single)"}
TASKS = ("pairwise", "galactic", "integrate", "transfer")
TASK_LABELS = {"pairwise": "1 pairwise forces", "galactic": "2 galactic force",
               "integrate": "3 integration", "transfer": "4 host-device transfer"}
TASK_COLORS = {"pairwise": "#3b6ea8", "galactic": "#e3a33b", "integrate": "#5aa469", "transfer": "#c8553d"}

RC = {
    "figure.dpi": 100, "savefig.dpi": DPI, "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
    "legend.fontsize": 7.5, "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True,
    "grid.alpha": 0.3, "grid.linewidth": 0.5, "lines.linewidth": 1.4, "lines.markersize": 4.5,
    "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    "font.family": "DejaVu Sans", "mathtext.fontset": "dejavusans",
}


@contextmanager
def style():
    with matplotlib.rc_context(RC):
        yield


def footer(fig, text: str):
    """Provenance line at the bottom of a figure (machine, device, commit, date)."""
    fig.text(0.005, -0.005, text, fontsize=6, color="0.35", ha="left", va="top")  # below the axes; tight bbox keeps it


def save(fig, path: Path, source: str) -> Path:
    footer(fig, source)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)
    return Path(path)
