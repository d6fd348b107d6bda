"""The command lines' parser and the types of their values, shared by `nbsymple`, the
instruments (`python -m nbsymple_versions.instruments.*`) and the tools (`python -m tools.*`).

A mistake is one sentence naming the option, exit status 2, without argparse's usage block
(printed by rank 0 alone under mpiexec); a value is taken only where it means something: a
whole number from its least, a finite number above its bound, a path that is not empty.
"""
import argparse
import math
from pathlib import Path

from .core.options import whole_number_argument  # noqa: F401  (every command line's whole numbers)
from .entry import speaks


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one sentence on stderr and exit status 2 (its subcommands' too)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n" if speaks() else None)

    def refuse(self, message: str, status: int = 2):
        """A mistake found after parsing (a file's content, work beyond the machine), or a fault
        (`status` 4): one sentence naming what to change, without the hint to --help."""
        self.exit(status, f"{self.prog}: {message}\n" if speaks() else None)


def number_above(minimum: float, or_equal: bool = False):
    """argparse type: a finite number above `minimum` (or equal to it, `or_equal`), not NaN, not inf."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (math.isfinite(value) and (value >= minimum if or_equal else value > minimum)):
            bound = f"of at least {minimum:g}" if or_equal else f"above {minimum:g}"
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text}")
        return value
    return parse


def path_argument(text) -> Path:
    """argparse type of every path option: a file or folder name; an empty one (an unset shell
    variable) is refused, never read as "none" or as the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"needs a file or folder name, got {text!r}")
    return Path(text)
