"""Benchmark figures from asv results: time per step (paper Fig. 2), speed-up over A,
dp vs dsp (Fig. 5) and the stacked task shares (Tables 4-6). GPU versions without results are
drawn from a `prediction.Prediction` where one is given: dashed lines, hatched bars."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.vocabulary import TASKS
from .data import MEASURED, REFERENCE, STEP, MissingData, series, source_line, speedups
from .results import Results
from .style import (PRECISION_LABELS, PRECISION_MARKERS, PRECISION_ORDER, PRECISION_SIZES, PRECISION_STYLES,
                    PRECISION_WIDTHS, TASK_COLORS, TASK_LABELS, VERSION_COLORS, VERSION_LABELS, plt, save, style,
                    version_line)
from matplotlib.lines import Line2D  # noqa: E402 - after `style`, which loads matplotlib quietly
from matplotlib.patches import Patch  # noqa: E402
import matplotlib.ticker  # noqa: E402

SCHEME_LABELS = {"leapfrog": "leapfrog (2nd order, 1 force/step)", "si6a": "SI6A (6th order, 7 forces/step)"}
SCHEME_STYLES = {"leapfrog": "-", "si6a": ":"}     # speed-up figure; dashed is for predictions
PREDICTED_STYLE = "--"                             # lines of the GPU versions predicted
PREDICTED_HATCH = "//"                             # their task-share bars


def _log_axes(ax, xlabel="number of bodies N", ylabel=None, ns=None):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    if ns is not None and len(ns):
        ns = sorted({int(n) for n in ns})
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)


def _n2_guide(ax, data):
    """A dashed N^2 line through the largest-N point of version A (else the first version)."""
    ref = REFERENCE if REFERENCE in data else sorted(data)[0]
    n, t = data[ref]
    if len(n) == 0:
        return
    grid = np.geomspace(min(d[0].min() for d in data.values()), max(d[0].max() for d in data.values()), 50)
    ax.plot(grid, t[-1] * (grid / n[-1]) ** 2, color="0.55", ls=(0, (4, 3)), lw=1.0, label=r"$\propto N^2$",
            zorder=0)


def step_curves(res: Results, prediction=None) -> list[tuple[str, dict, dict]]:
    """[(scheme, measured {version: (N, t)}, predicted {version: (N, t)})] of dp steps, the
    predicted ones (a `prediction.Prediction`) for the GPU versions without measured steps."""
    panels = [(s, series(res, STEP[s])) for s in STEP if STEP[s] in res]
    panels = [(s, d, prediction.curves(d, s) if prediction else {}) for s, d in panels if d]
    if not panels:
        raise MissingData(f"the results of commit {res.commit[:8]} have no step timings in dp "
                          f"({STEP['leapfrog']}, {STEP['si6a']})")
    return panels


def _predicted_line(ax, v, n, y, prediction, scheme: str = ""):
    """A predicted curve, dashed; `scheme` named in its label where the panel mixes schemes."""
    ax.plot(n, y, ls=PREDICTED_STYLE, mfc="none", label=f"{VERSION_LABELS.get(v, v)} ({prediction.legend(scheme)})",
            **version_line(v))


def _legend_beside(ax, handles=None, labels=None):
    """The legend to the right of panel `ax`, off the data, anchored to the panel (the figure
    grows below for its footer)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0)


def _source(res: Results, prediction) -> str:
    return source_line(res) + (f"\ndashed: {prediction.label}, with this machine's host-task times"
                               if prediction else "")


def time_per_step(res: Results, path: Path, prediction=None) -> Path:
    """Paper Fig. 2: wall time per step vs N, one line per version, leapfrog and SI6A (dp);
    GPU versions without results dashed, as `prediction` has them."""
    panels = step_curves(res, prediction)
    with style():
        fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 2.8, 3.4), sharey=True,
                                 layout="constrained", squeeze=False)
        for ax, (scheme, data, predicted) in zip(axes[0], panels):
            for v, (n, t) in data.items():
                ax.plot(n, t, label=VERSION_LABELS.get(v, v), **version_line(v))
            for v, (n, t) in predicted.items():
                _predicted_line(ax, v, n, t, prediction)
            _n2_guide(ax, data)
            _log_axes(ax, ylabel="wall time per step [s]" if ax is axes[0][0] else None,
                      ns=[x for d in (data, predicted) for n, _ in d.values() for x in n])
            ax.set_title(f"{SCHEME_LABELS[scheme]}, dp")
        _legend_beside(axes[0][-1], *axes[0][0].get_legend_handles_labels())
        fig.suptitle("Time per integration step vs N (cf. paper Fig. 2)", fontsize=10)
        return save(fig, path, _source(res, prediction))


def speedup(res: Results, path: Path, prediction=None) -> Path:
    """Speed-up of each version over A (1 CPU core) vs N, leapfrog (solid) and SI6A (dotted),
    dp; GPU versions without results dashed (leapfrog), as `prediction` has them."""
    curves = {s: speedups(res, s) for s in STEP if STEP[s] in res}
    curves = {s: c for s, c in curves.items() if c}
    panel = next((p for s, _, p in step_curves(res, prediction) if s == "leapfrog"), {}) if prediction else {}
    predicted = speedups(res, "leapfrog", curves=panel) if panel else {}
    if not curves and not predicted:
        if not any(STEP[s] in res for s in STEP):     # (they said "no version besides A" of results without A)
            raise MissingData(f"the results of commit {res.commit[:8]} have no step timings in dp "
                              f"({STEP['leapfrog']}, {STEP['si6a']})")
        raise MissingData(f"the results of commit {res.commit[:8]} have no version besides A to compare with A")
    with style():
        fig, ax = plt.subplots(figsize=(7.2, 3.5), layout="constrained")
        for scheme, data in curves.items():
            for v, (n, s) in data.items():
                ax.plot(n, s, ls=SCHEME_STYLES[scheme], mfc="none" if scheme == "si6a" else None, **version_line(v),
                        label=f"{VERSION_LABELS.get(v, v)}" if scheme == "leapfrog" or "leapfrog" not in curves
                        else None)
        for v, (n, s) in predicted.items():
            _predicted_line(ax, v, n, s, prediction, "leapfrog")      # beside leapfrog (solid) and SI6A (dotted)
        ax.axhline(1.0, color="0.5", lw=0.8)
        _log_axes(ax, ylabel=r"speed-up over A  ($t_A / t_X$)",
                  ns=[x for c in (*curves.values(), predicted) for n, _ in c.values() for x in n])
        ax.set_ylim(bottom=min(0.5, ax.get_ylim()[0]))
        handles, labels = ax.get_legend_handles_labels()
        for scheme in curves:
            handles.append(Line2D([], [], color="0.3", ls=SCHEME_STYLES[scheme]))
            labels.append(scheme if scheme == "leapfrog" else "SI6A")
        _legend_beside(ax, handles, labels)
        ax.set_title("Speed-up over version A (dp; cf. paper Fig. 2)")
        return save(fig, path, _source(res, prediction))


def dp_vs_dsp(res: Results, path: Path) -> Path:
    """Paper Fig. 5: leapfrog time per step vs N in dp, dsp and sp, one panel per version."""
    by_prec = {p: series(res, STEP["leapfrog"], p) for p in PRECISION_ORDER}
    versions = sorted({v for d in by_prec.values() for v in d})
    if not versions:
        raise MissingData(f"the results of commit {res.commit[:8]} have no leapfrog step timings")
    with style():
        cols = min(len(versions), 3)
        rows = (len(versions) + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(3.1 * cols + 1.7, 2.8 * rows + 0.3), sharex=True,
                                 sharey=True, layout="constrained", squeeze=False)
        for ax in axes.flat[len(versions):]:
            ax.set_visible(False)
        for ax, v in zip(axes.flat, versions):
            for p, data in by_prec.items():
                if v in data:
                    n, t = data[v]
                    ax.plot(n, t, ls=PRECISION_STYLES[p], marker=PRECISION_MARKERS[p], lw=PRECISION_WIDTHS[p],
                            ms=PRECISION_SIZES[p], color=VERSION_COLORS.get(v), mfc="none" if p != "dp" else None,
                            label=PRECISION_LABELS[p], zorder=2 + PRECISION_ORDER.index(p))
            note = _ratio_note(by_prec, v)
            if note:
                ax.text(0.03, 0.97, note, transform=ax.transAxes, ha="left", va="top", fontsize=7)
            _log_axes(ax, ylabel="wall time per step [s]" if ax in axes[:, 0] else None,
                      ns=[x for d in by_prec.values() if v in d for x in d[v][0]])
            if list(axes.flat).index(ax) + cols < len(versions):   # another panel below it
                ax.set_xlabel("")
            else:
                ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_title(VERSION_LABELS.get(v, v))
        _legend_beside(axes[0][-1] if axes[0][-1].get_visible() else axes[0][0],
                       [Line2D([], [], color="0.3", ls=PRECISION_STYLES[p], marker=PRECISION_MARKERS[p],
                               lw=PRECISION_WIDTHS[p], ms=PRECISION_SIZES[p], mfc="none" if p != "dp" else None)
                        for p in by_prec], [PRECISION_LABELS[p] for p in by_prec])
        fig.suptitle("Leapfrog time per step by force precision (cf. paper Fig. 5)", fontsize=10)
        return save(fig, path, source_line(res))


def _ratio_note(by_prec, v):
    """'dsp/dp = 0.52 at N = 4096' at the largest N both precisions share."""
    if v not in by_prec["dp"] or v not in by_prec["dsp"]:
        return ""
    dp = dict(zip(*by_prec["dp"][v]))
    dsp = dict(zip(*by_prec["dsp"][v]))
    common = sorted(set(dp) & set(dsp))
    if not common:
        return ""
    n = common[-1]
    return f"dsp/dp = {dsp[n] / dp[n]:.2f} at N = {int(n)}"


def task_shares(table: list[dict], path: Path, source: str) -> Path:
    """Stacked bars of the tasks' % of a dp leapfrog step, per version and N (Tables 4-6);
    predicted rows (source other than measured) hatched."""
    versions = sorted({r["version"] for r in table})
    if not versions:
        raise MissingData("no task shares to plot")
    with style():
        fig, axes = plt.subplots(1, len(versions), figsize=(1.9 * len(versions) + 1.6, 3.3), sharey=True,
                                 layout="constrained", squeeze=False)
        for ax, v in zip(axes[0], versions):
            rows = sorted((r for r in table if r["version"] == v), key=lambda r: r["n"])
            x = np.arange(len(rows))
            bottom = np.zeros(len(rows))
            hatch = [PREDICTED_HATCH if r.get("source", MEASURED) != MEASURED else "" for r in rows]
            for task in TASKS:
                h = np.array([r[task] if np.isfinite(r[task]) else 0.0 for r in rows])
                ax.bar(x, h, bottom=bottom, color=TASK_COLORS[task], width=0.75, label=TASK_LABELS[task],
                       edgecolor="white", linewidth=0.4, hatch=hatch)
                bottom += h
            for xi, r in zip(x, rows):
                if np.isfinite(r["pairwise"]) and r["pairwise"] > 12:
                    ax.text(xi, r["pairwise"] / 2, f"{r['pairwise']:.1f}", rotation=90, ha="center", va="center",
                            color="white", fontsize=6.5,
                            bbox={"facecolor": TASK_COLORS["pairwise"], "edgecolor": "none", "pad": 0.6})
            ticks = [str(r["n"]) for r in rows]      # 4 of 6 digits ran into one another (65536131072262144)
            ax.set_xticks(x, ticks, rotation=45 if len(rows) > 4 or sum(map(len, ticks)) > 18 else 0)
            ax.set_xlabel("N")
            ax.set_title(VERSION_LABELS.get(v, v) + ("\n(predicted)" if any(hatch) else ""), fontsize=8)
            ax.set_ylim(0, 100)
            ax.set_xlim(-0.6, max(len(rows), 2) - 0.4)
            ax.grid(axis="x", visible=False)
        axes[0][0].set_ylabel("share of a dp leapfrog step [%]")
        drawn = {TASK_LABELS[t] for r in table for t in TASKS if np.isfinite(r[t]) and r[t] > 0}
        pairs = [(h, lab) for h, lab in zip(*axes[0][0].get_legend_handles_labels()) if lab in drawn]
        handles, labels = [h for h, _ in pairs], [lab for _, lab in pairs]     # no entry for a task no bar has
        if any(r.get("source", MEASURED) != MEASURED for r in table):
            handles.append(Patch(facecolor="0.6", edgecolor="white", hatch=PREDICTED_HATCH))
            labels.append("predicted")
        fig.legend(handles, labels, loc="outside right center", title="task")
        fig.suptitle("Where a step's time goes (cf. paper Tables 4-6)", fontsize=10)
        return save(fig, path, source)
