"""The records `nbsymple paper` writes and reads back, each checked field by field before a value
is used: a science run's `run.json`, the figures' `science_runs.json` in OUT and a full-size dt
series `tidal_tails_n<N>_series.json`. A value that is not what paper wrote (a count that is
text, a step of -1, a version Z, a name with a line feed or of 300 characters) would end in a
traceback, or be drawn into a figure's title or a report; `problem` says which field, in words.
`one_line` and `finite` are also what the asv results reader (`results`) asks of text and numbers;
`markdown_text`, `markdown_note` and `code_span` show such text in the Markdown paper writes, as
it is written.

A schema is a dict {key: (required, schema)} for a JSON object, a one-item list [schema] for a
JSON list of such items, or a leaf (test, what it must be).
"""
from __future__ import annotations

import math
import re

from ..core.schemes import SCHEMES
from ..core.vocabulary import PRECISIONS
from ..entry import printable
from ..versions import LETTERS

TEXT_LIMIT = 256            # characters of a name (a run, a CPU, a machine, a benchmark): asv's are tens
PARAGRAPH_LIMIT = 8192      # characters of a figure's summary paragraph


def finite(v) -> bool:
    """A JSON number that is finite (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def one_line(v, limit: int = TEXT_LIMIT) -> bool:
    """One printable line of at most `limit` characters: what a file's text may be, since it is
    printed in sentences, tabled in REPORT.md and drawn in figures."""
    return isinstance(v, str) and len(v) <= limit and v.isprintable()


# what Markdown (GitHub's) would read as something other than text: a backslash, a code span,
# emphasis, a link, HTML or an entity, math, a table cell's end, a strike-through
MARKDOWN_MARKS = re.compile(r"[\\`*\[\]<>&$|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")


def markdown_text(text) -> str:
    """`text` (a file's: a CPU's name, a machine's) as Markdown that shows it as written, in a
    sentence or a table's cell: each mark Markdown would act on escaped by a backslash (an
    underscore inside a word, as in x86_64, acts on nothing and is left alone)."""
    return MARKDOWN_MARKS.sub(lambda m: "\\" + m.group(0), str(text))


def markdown_note(text) -> str:
    """A sentence of paper's (a note) that names files and values: its own code spans kept, what
    Markdown would read as HTML, an entity or math escaped (a results file named '<!--.json'
    would hide the rest of REPORT.md), and what a terminal would act on written as its escape, as
    on stderr (an --out holding ESC: `cat REPORT.md` set the terminal's title, a hunt)."""
    return re.sub(r"[<>&$]", lambda m: "\\" + m.group(0), printable(text))


def code_span(text) -> str:
    """`text` as a Markdown code span, in a table's cell too: fenced by more backticks than it
    holds in a row, its '|' escaped (GitHub ends a cell at one even inside a span)."""
    text = str(text).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _whole(low: int):
    return (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= low, f"a whole number of at least {low}")


def _text(limit: int):
    return (lambda v: one_line(v, limit), f"one printable line of at most {limit} characters")


def _one_of(names):
    return (lambda v: v in names, "one of " + ", ".join(names))


POSITIVE = (lambda v: finite(v) and v > 0, "a positive finite number")
AT_LEAST_0 = (lambda v: finite(v) and v >= 0, "a finite number of at least 0")
FINITE = (finite, "a finite number")
ERROR = (lambda v: v is None or finite(v) and v >= 0, "null or a finite number of at least 0")
SHARE = (lambda v: finite(v) and 0 <= v <= 1, "a share from 0 to 1")
FLAG = (lambda v: isinstance(v, bool), "true or false")
NAME = _text(TEXT_LIMIT)
SNAPSHOT_FILE = (lambda v: isinstance(v, str) and re.fullmatch(r"snap_[0-9]+\.npz", v) is not None,
                 "a snapshot's name in the run's folder, snap_<step>.npz")
PROVENANCE = (lambda v: isinstance(v, dict) and all(
    one_line(k) and (x is None or finite(x) or one_line(x)) for k, x in v.items()),
    f"an object of names, numbers and text of at most {TEXT_LIMIT} characters")

# a science run's parameters (`science_runs.run_tidal_tails`, `run_black_hole`)
PARAMS = {
    "kind": (True, _one_of(("tidal_tails", "black_hole"))), "n": (True, _whole(2)), "dt": (True, POSITIVE),
    "version": (True, _one_of(LETTERS)), "scheme": (True, _one_of(tuple(SCHEMES))),
    "precision": (True, _one_of(PRECISIONS)), "seed": (True, _whole(0)),
    "orbits": (False, POSITIVE), "snapshots_per_orbit": (False, _whole(1)),                 # tidal tails
    "ratio": (False, POSITIVE), "t_end": (False, POSITIVE), "radius_kpc": (False, POSITIVE),  # black hole
    "speed_kms": (False, AT_LEAST_0), "snapshots": (False, _whole(1)), "dense_steps": (False, _whole(0)),
}
TIDAL_PARAMS = {**PARAMS, "orbits": (True, POSITIVE)}     # what a tidal-tail run's figure, table and series use
# a finished run's run.json (`resumable.run`)
RUN = {
    "params": (True, PARAMS), "steps": (True, _whole(0)), "snapshots": (True, [SNAPSHOT_FILE]),
    "wall_seconds": (True, AT_LEAST_0), "finished": (True, FLAG), "sessions": (False, _whole(1)),
    "interrupted": (False, _whole(0)), "provenance": (False, PROVENANCE), "session_provenance": (False, [PROVENANCE]),
    "orbital_period": (False, POSITIVE), "predicted_pericentre_step": (False, _whole(0)),
}
# what each kind of run needs besides: its figure and table use these
RUN_OF_KIND = {
    "tidal_tails": {**RUN, "params": (True, TIDAL_PARAMS), "orbital_period": (True, POSITIVE)},
    "black_hole": {**RUN, "params": (True, {**PARAMS, **{k: (True, PARAMS[k][1]) for k in
                                                         ("ratio", "t_end", "radius_kpc", "speed_kms")}})},
}
# one run of a science figure's record in science_runs.json (`science_plots.run_summary`)
RUN_SUMMARY = {
    "run": (True, NAME), "n": (True, _whole(2)), "dt": (True, POSITIVE), "scheme": (True, _one_of(tuple(SCHEMES))),
    "version": (True, _one_of(LETTERS)), "precision": (True, _one_of(PRECISIONS)), "steps": (True, _whole(0)),
    "wall_seconds": (True, AT_LEAST_0), "energy_error_total": (True, ERROR), "internal_energy_error": (True, ERROR),
    "internal_energy_error_max": (False, ERROR), "converged": (True, FLAG),
    "ratio": (False, POSITIVE), "closest_pc": (False, AT_LEAST_0), "seed": (False, _whole(0)),
    "provenance": (False, PROVENANCE),
}
SCIENCE_RECORD = {"summary": (True, _text(PARAGRAPH_LIMIT)), "runs": (True, [RUN_SUMMARY])}
# one entry of a dt series of tidal-tail runs (`dt_series.entry`)
SERIES_ROW = {"orbits": (True, AT_LEAST_0), "t_myr": (True, FINITE), "beyond": (True, SHARE),
              "energy_error": (True, ERROR), "internal_energy_error": (True, ERROR)}
SERIES_ENTRY = {
    "params": (True, TIDAL_PARAMS), "steps": (True, _whole(0)), "wall_seconds": (True, AT_LEAST_0),
    "sessions": (True, _whole(1)), "interrupted": (True, _whole(0)), "provenance": (True, PROVENANCE),
    "r_j_pc": (True, POSITIVE), "dt_kyr": (True, POSITIVE), "rows": (True, [SERIES_ROW]),
}


def run_problem(run) -> str | None:
    """What is wrong with a run.json (`RUN`, then what its kind needs, `RUN_OF_KIND`), or None."""
    return problem(run, RUN) or problem(run, RUN_OF_KIND[run["params"]["kind"]])


def problem(value, schema, where: str = "") -> str | None:
    """What is wrong with `value` against `schema` ("its params.n is not a whole number of at
    least 2"), or None. `where` names the value in the sentence (empty: the record itself)."""
    named = f"its {where}" if where else "it"
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return f"{named} is not a JSON object"
        for key, (required, inner) in schema.items():
            if key not in value:
                if required:
                    return f"{named} lacks {key}"
                continue
            if (found := problem(value[key], inner, f"{where}.{key}" if where else key)) is not None:
                return found
        return None
    if isinstance(schema, list):
        if not isinstance(value, list):
            return f"{named} is not a JSON list"
        return next((found for i, item in enumerate(value)
                     if (found := problem(item, schema[0], f"{where}[{i}]")) is not None), None)
    test, what = schema
    return None if test(value) else f"{named} is not {what}"
