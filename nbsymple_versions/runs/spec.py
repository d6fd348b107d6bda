"""`RunSpec`: what `nbsymple run` is asked to do, typed, frozen and checked, the one argument
of `runs.driver.run`. The CLI builds it from the flags it parsed (`given`: which ones); Python
builds it directly:

    from nbsymple_versions.runs.driver import run
    from nbsymple_versions.runs.spec import RunSpec
    run(RunSpec(version="B", n=2048, steps=200, checkpoint="run.nbsc"))

A value that cannot be used raises `RunStop` (one sentence, status 2), as the CLI's refusals do.
"""
from collections.abc import Iterable, Mapping
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType

import numpy as np

from ..core.checks import instance, one_of, positive_number, seed, whole_number
from ..core.schemes import SCHEMES
from ..core.units import CONSTANTS
from ..core.vocabulary import PRECISIONS
from ..versions import LETTERS
from .errors import RunStop
from .snapshots import SNAPSHOT_FORMATS

_PATHS = ("snapshots", "ics", "checkpoint", "resume")
_COUNTS = {"n": 2, "steps": 0, "every": 1, "checkpoint_every": 1, "mass_classes": 1}     # name -> minimum
_SCALES = ("dt", "ics_mass", "ics_radius")


def flag(name: str) -> str:
    """The command-line flag of a field: `checkpoint_every` -> `--checkpoint-every`."""
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class RunSpec:
    """One run of any version: a fresh one, or `resume` a checkpointed one. `options` are the
    version's own (`Version.Options`: tile, devices, ...), checked against the version when the
    run starts. `given` names the fields the user set (the CLI: the flags typed); left out, the
    fields passed by name (and the options'), so that a value equal to its default, such as
    `RunSpec(resume="run.nbsc", steps=1000)`, still counts; from positional arguments, the
    fields that differ from their defaults."""
    version: str = "A"
    n: int = 1024
    scheme: str = "leapfrog"
    precision: str = "dp"
    dt: float = 5e-4
    steps: int = 1000
    seed: int | None = None
    options: dict = field(default_factory=dict)
    snapshots: Path | None = None
    snapshot_format: str | None = None
    ics: Path | None = None
    ics_mass: float | None = None
    ics_radius: float | None = None
    constants: str = "exact"
    mass_classes: int | None = None
    every: int | None = None
    json: bool = False
    progress: bool = False          # the progress line on stderr off a terminal too (one line per 10 %)
    checkpoint: Path | None = None
    checkpoint_every: int | None = None
    resume: Path | None = None
    given: frozenset | None = None

    def __post_init__(self):
        try:
            checked = {"version": one_of(self.version, LETTERS, "version"),
                       "scheme": one_of(self.scheme, tuple(SCHEMES), "scheme"),
                       "precision": one_of(self.precision, PRECISIONS, "precision"),
                       "constants": one_of(self.constants, tuple(CONSTANTS), "constants"),
                       "options": MappingProxyType(dict(instance(self.options, Mapping, "options",
                                                                    "a dict of the version's options")))}
            if self.snapshot_format is not None:
                checked["snapshot_format"] = one_of(self.snapshot_format, SNAPSHOT_FORMATS, "snapshot format")
            if self.seed is not None:   # a number a run records and draws again: not NumPy's generators
                if isinstance(self.seed, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)):
                    raise ValueError(f"{flag('seed')} must be a whole number a run can record (from 0 below "
                                     f"2**128), not a {type(self.seed).__name__}")       # (a hunt: failed late)
                checked["seed"] = seed(self.seed, flag("seed"))
            for name, minimum in _COUNTS.items():
                if getattr(self, name) is not None:
                    checked[name] = whole_number(getattr(self, name), flag(name), minimum)
            for name in _SCALES:
                if getattr(self, name) is not None:
                    checked[name] = positive_number(getattr(self, name), flag(name))
            for name in _PATHS:
                if (value := getattr(self, name)) is not None:
                    if not isinstance(value, (str, Path)) or not str(value).strip():
                        raise ValueError(f"{flag(name)} needs a file or folder name, got {value!r}")
                    checked[name] = _path(name, value)
            if self.given is not None and (isinstance(self.given, str) or not isinstance(self.given, Iterable)
                                           or not all(isinstance(g, str) for g in self.given)):
                raise ValueError(f"given must be a set of the names of the fields and options set (as the command "
                                 f"line's flags typed), got {self.given!r}")      # (a hunt: 'nsteps' taken as letters)
            for name in ("json", "progress"):
                if not isinstance(getattr(self, name), bool):
                    raise ValueError(f"{flag(name)} must be True or False, got {getattr(self, name)!r}")
        except ValueError as e:
            raise RunStop(str(e)) from None
        # given: the fields passed by name (`_init`) or the command line's, and always those that
        # differ from their defaults and the options (a hunt: `dataclasses.replace(spec, steps=40)`
        # kept the first spec's `given`, and a resume stopped at the checkpoint's step)
        differ = {f.name for f in fields(self) if f.name not in ("options", "given")
                  and checked.get(f.name, getattr(self, f.name)) != f.default} | set(self.options)
        checked["given"] = frozenset(self.given or ()) | differ
        for name, value in checked.items():
            object.__setattr__(self, name, value)


def _path(name: str, value) -> Path:
    """A path field as the command line's option takes it, a str as typed (`arguments`: no '-',
    no leading '~', no line feed, each name within what the file system takes, a folder's files
    within PATH_MAX; a Path names its file as it is), the same sentence as a ValueError (a hunt:
    `run(RunSpec(checkpoint='-'))` wrote a file '-', '~/x.ck' made a folder '~', 'nodir/' wrote a
    file, a name too long raised OSError)."""
    import argparse
    from ..arguments import file_argument, folder_argument, output_file_argument
    text = os.fspath(value)
    if isinstance(value, Path) and text.startswith(("-", "~")):   # a Path names that file: the command line's
        text = os.path.join(".", text)                            # './-' and './~/c.ck' are Paths '-' and '~/c.ck'
    if "\0" in text:
        raise ValueError(f"{flag(name)} holds a NUL byte, which no file name can")
    if name != "snapshots" and text.endswith("/"):
        raise ValueError(f"{flag(name)} {text!r} ends in '/', which names a folder, not a file")
    kind = {"snapshots": folder_argument, "checkpoint": output_file_argument}.get(name, file_argument)
    try:
        return kind(text)
    except argparse.ArgumentTypeError as e:
        raise ValueError(f"{flag(name)}: {e}") from None


_dataclass_init = RunSpec.__init__


def _init(self, *args, **kwargs):
    """The dataclass's own __init__, with `given` the fields passed by name where it is left out
    (a resume to `steps=1000`, the default, went unseen: a hunt found the run stop at the
    checkpoint's step and say nothing)."""
    if kwargs.get("given") is None and not args:
        kwargs["given"] = frozenset(k for k in kwargs if k not in ("options", "given")) \
            | frozenset(kwargs.get("options") or ())
    _dataclass_init(self, *args, **kwargs)


RunSpec.__init__ = _init
