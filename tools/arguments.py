"""The tools' command lines: a parser whose refusals are one sentence naming the option (exit
status 2, no usage block), and argparse types that take only values that mean something."""
import argparse
import math
import re

from nbsymple_versions.core.options import whole_number_argument  # noqa: F401  (the tools' whole numbers)


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one sentence on stderr and exit status 2 (its subcommands' too)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def number_above(minimum: float):
    """argparse type: a finite number above `minimum` (not NaN, not inf)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not (math.isfinite(value) and value > minimum):
            raise argparse.ArgumentTypeError(f"must be a finite number above {minimum:g}, got {text}")
        return value
    return parse


def regex(text):
    """argparse type: a regular expression (asv's -b pattern)."""
    try:
        re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"is not a regular expression ({e}): {text!r}") from None
    return text


def name(text):
    """argparse type: a name of letters, digits and . _ + - (an ISA, a CPU), not empty."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", text):
        raise argparse.ArgumentTypeError(f"expected a name of letters, digits and . _ + -, got {text!r}")
    return text


def commit(text):
    """argparse type: a commit as git names one (a hash, a branch, HEAD~3, origin/main), not an
    option, not empty, without git's range '..'."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+~^/@{}-]*", text) or ".." in text:
        raise argparse.ArgumentTypeError(f"expected a commit (a hash, a branch, HEAD~3), got {text!r}")
    return text
