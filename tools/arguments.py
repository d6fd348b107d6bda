"""The tools' command lines: the package's parser and number types (nbsymple_versions/arguments.py),
and the types only the tools take: a regular expression, a name, a commit."""
import argparse
import re

from nbsymple_versions.arguments import (Parser, folder_argument, number_above,  # noqa: F401 (shared)
                                         whole_number_argument)


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
    """argparse type: a commit as git names one (a hash, a branch or tag of any letters, ' or $,
    HEAD~3, origin/main), not an option, not empty, without git's range '..' or what no name of
    git's holds (a blank, a control character); git says whether it names a commit."""
    if not text or text.startswith("-") or ".." in text or re.search(r"[\x00-\x20\x7f]", text):
        raise argparse.ArgumentTypeError(f"expected a commit (a hash, a branch, HEAD~3), got {text!r}")
    return text
