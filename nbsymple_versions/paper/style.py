"""One figure style for every plot of `nbsymple paper`: colours per version and per task,
fonts, the provenance footer, and saving at 200 dpi."""
from __future__ import annotations

from contextlib import contextmanager
import io
from pathlib import Path
import textwrap
import warnings

from ..loading import pyplot

plt = pyplot()
import matplotlib  # noqa: E402 - (loaded by `pyplot`, quietly)

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
    """The figures' style: matplotlib's own defaults and RC, none of the user's settings (a hunt:
    a matplotlibrc in the current folder, MATPLOTLIBRC's or MPLCONFIGDIR's with `text.usetex: True`
    ended `paper` in a traceback where LaTeX is not installed, and changed the figures where it is)."""
    with matplotlib.style.context(["default", RC]), quiet_glyphs():
        yield


FOOTER_POINTS = 6
FOOTER_CHAR_POINTS = 0.55 * FOOTER_POINTS     # DejaVu Sans' mean character width
FOOTER_LINE_POINTS = 1.2 * FOOTER_POINTS      # matplotlib's line spacing
FOOTER_PAD_INCHES = 0.06


def wrapped(text: str, chars: int) -> str:
    """Each line of `text` wrapped at spaces to at most `chars` characters (a longer word broken)."""
    return "\n".join(piece for line in text.splitlines()
                     for piece in textwrap.wrap(line, chars, break_on_hyphens=False) or [""])


def footer(fig, text: str):
    """Provenance lines at the bottom of a figure (machine, device, commit, date, load), wrapped
    to the figure's width (a word longer than a line too), so that no footer widens the figure or
    is cut. The figure grows by their height and its constrained layout keeps the panels above
    them: it is drawn once, where saving with a tight bounding box would draw it twice. The text
    comes from the results and run records: drawn as written, never read as mathtext."""
    chars = max(40, int(fig.get_figwidth() * 72 / FOOTER_CHAR_POINTS))
    label = fig.text(0.005, 0.0, wrapped(text, chars), fontsize=FOOTER_POINTS, color="0.35", ha="left", va="top",
                     parse_math=False)          # the results' own text, as written: '$' is no mathtext
    fig.set_dpi(DPI)                    # measured as saved: a glyph's width follows the resolution
    renderer = fig.canvas.get_renderer()
    for _ in range(4):          # characters wider than the mean (capitals): shorter lines until they fit
        wide = label.get_window_extent(renderer).width / (0.99 * fig.bbox.width)
        if wide <= 1:
            break
        chars = max(8, int(chars / wide))
        label.set_text(wrapped(text, chars))
    height = fig.get_figheight()
    room = (label.get_text().count("\n") + 1) * FOOTER_LINE_POINTS / 72 + 2 * FOOTER_PAD_INCHES
    fig.set_figheight(height + room)
    if fig.get_layout_engine() is None:
        fig.set_layout_engine("constrained")
    fig.get_layout_engine().set(rect=(0, room / (height + room), 1, height / (height + room)))
    label.set_y((room - FOOTER_PAD_INCHES) / (height + room))


def save(fig, path: Path, source: str) -> Path:
    """`fig` with its footer, saved as a PNG at `DPI` (written whole, never through a link at
    `path`). Laid out here, then drawn once: savefig lays out a figure of a layout engine in a draw
    of its own before the one it renders (which then keeps that layout), 9-10 % of a `paper`
    call's CPU for the same pixels (every committed machine's figures and the science figures, byte for byte)."""
    with quiet_glyphs():
        footer(fig, source)
        fig.get_layout_engine().execute(fig)
        fig.set_layout_engine(None)
        image = io.BytesIO()
        fig.savefig(image, format=Path(path).suffix[1:] or "png", dpi=DPI)
    plt.close(fig)
    write_file(path, image.getvalue())           # never through a link at `path`
    return Path(path)
