"""The command lines' parser and the types of their values, shared by `nbsymple`, the
instruments (`python -m nbsymple_versions.instruments.*`) and the tools (`python -m tools.*`).

A mistake is one sentence naming the option, exit status 2, without argparse's usage block
(printed by rank 0 alone under mpiexec); a value is taken only where it means something: a
whole number from its least, a finite number above its bound, a path that is not empty.
"""
import argparse
import math
import os
import re
import sys
from pathlib import Path

from .core.options import seed_argument, whole_number_argument  # noqa: F401  (every command line's whole numbers)
from .entry import sentence, speaks
from .environment import FOLDER_MARGIN, PATH_MAX, not_a_folder, unexpanded_home


def _drops_an_attached_double_dash() -> bool:
    """Whether this Python's argparse drops the value of `--option=--` (3.11 does: the option then
    gets [], past its type and its choices)."""
    probe = argparse.ArgumentParser(add_help=False)
    probe.add_argument("--option")
    return probe.parse_args(["--option=--"]).option != "--"


_DROPS_ATTACHED_DOUBLE_DASH = _drops_an_attached_double_dash()
# what float() takes with a minus sign in front (no flag of these command lines looks like one)
NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:e[-+]?\d+)?|inf(?:inity)?|nan)$", re.IGNORECASE)


LONG_WORD = 120         # characters of a word a refusal echoes whole (a hunt: --scheme of 100000, a 100 kB line)


def shortened(word: str) -> str:
    """`word` as a refusal echoes it: whole up to LONG_WORD characters, else its start and end."""
    return word if len(word) <= LONG_WORD else f"{word[:80]}...{word[-20:]} ({len(word)} characters)"


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one sentence on one line of stderr (a line feed in what was typed
    shown as its escape: `nbsymple info $'x\\ny'`) and exit status 2 (its subcommands' too),
    and `--option=--` gives the option the value '--', checked by its type and choices like any
    other (Python 3.11's argparse gives it [] unchecked, which `--n=--` took to a traceback).

    `doc`, the command's module docstring, gives --help its description (its first paragraph);
    `python -OO` (PYTHONOPTIMIZE=2) drops docstrings, and the help then has none. A negative
    number in any form (`--dt -1e-3`, `-inf`) is a value, refused by its option's type, not an
    option (argparse's own pattern, `-1` and `-.5` alone, answered "expected one argument")."""

    def __init__(self, *args, doc: str | None = None, **kwargs):
        if doc:
            first = doc.split("\n\n")[0].rstrip()      # a paragraph that opens a list ends with ":": not
            kwargs.setdefault("description", first[:-1] + "." if first.endswith(":") else first)    # cut short
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def _get_values(self, action, arg_strings):
        if _DROPS_ATTACHED_DOUBLE_DASH and action.option_strings and "--" in arg_strings:
            arg_strings = ["--", *arg_strings]          # the '--' it drops; the user's stays
        return super()._get_values(action, arg_strings)

    def parse_known_args(self, args=None, namespace=None):
        self._typed = list(sys.argv[1:] if args is None else args)     # (a subcommand's parser: its own words)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        message += self._taken_for_an_option(message)
        message = re.sub(rf"[^\s'\"]{{{LONG_WORD + 1},}}", lambda m: shortened(m[0]), message)    # typed at length
        self.exit(2, sentence(f"{self.prog}: {message} (see {self.prog} --help)") + "\n" if speaks() else None)

    def _taken_for_an_option(self, message: str) -> str:
        """Where a value is missing ("expected one argument", "arguments are required") and a word
        that starts with '-' and names no option was typed, how to give it: argparse took
        `--checkpoint -x.ck` or `tools.migrate -x` for an option, and said only that the value was
        missing (a hunt). A missing subcommand or value of fixed choices is no word typed for it:
        `nbsymple -x` was told to write `nbsymple -- -x`, which is no command either."""
        missing = re.match(r"argument (\S+): expected (?:one|at least one) argument", message)
        required = message.partition("arguments are required: ")[2].split(", ")
        free = [a for a in self._actions if not a.option_strings and a.choices is None
                and (a.metavar or a.dest) in required]      # not a subcommand's name: `nbsymple -x`
        if missing is None and not free:
            return ""
        typed = getattr(self, "_typed", [])
        if missing:                          # the word after the option (as typed: `-b`, `--check`)
            names = missing[1].split("/")
            at = [i for i, w in enumerate(typed) if w in names or (w.startswith("--") and any(
                n.startswith(w) for n in names))]
            words = typed[at[-1] + 1:at[-1] + 2] if at else []
        else:
            words = typed
        words = [w for w in words if w.startswith("-") and w not in ("-", "--")
                 and not self._negative_number_matcher.match(w) and not self._an_option(w.split("=", 1)[0])]
        if not words:
            return ""
        word, option = words[0], missing[1].split("/")[0] if missing else None
        actions = [self._option_string_actions[option]] if option else free
        path = any(a.type in (path_argument, folder_argument, file_argument, output_file_argument) for a in actions)
        given = f"{option}={word}" + (f" or {option} ./{word}" if path else "") if option else \
            f"-- {word}" + (f" or ./{word}" if path else "")
        return f"; {word!r} is no option of {self.prog}, so it was not taken as a value: write {given}"

    def _an_option(self, head: str) -> bool:
        """Whether `head` names an option of this parser (a long one's unambiguous start included)."""
        return any(option == head or (head.startswith("--") and self.allow_abbrev and option.startswith(head))
                   for option in self._option_string_actions)

    def refuse(self, message: str, status: int = 2):
        """A mistake found after parsing (a file's content, work beyond the machine), or a fault
        (`status` 4): one sentence naming what to change, without the hint to --help."""
        self.exit(status, sentence(f"{self.prog}: {message}") + "\n" if speaks() else None)


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


NAME_MARGIN = 32   # bytes a command adds to a name: its lock (.NAME.lock), its temporary file (.NAME.PID.XXXXXXXX.tmp)


def path_argument(text) -> Path:
    """argparse type of every path option: a file or folder name; an empty one (an unset shell
    variable) is refused, never read as "none" or as the current folder, and so is a name longer
    than the file system there takes (its NAME_MAX; for the last name, less `NAME_MARGIN`),
    which no command could make, lock or replace; and so is a line feed in it, which would break
    every sentence that names the path (each is one line on stderr) into two; and so is '-', which
    other commands read as standard input or output (`--checkpoint -` wrote a file named '-'); and
    so is a leading '~' (`unexpanded_home`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"needs a file or folder name, got {text!r}")
    if text == "-":
        raise argparse.ArgumentTypeError("'-' stands for standard input or output in other commands; these read "
                                         "and write only files: name one ('./-' for a file named '-')")
    if "\n" in text:
        raise argparse.ArgumentTypeError(f"{text!r} holds a line feed, which would split every sentence naming "
                                         f"it in two; rename the file or folder")
    if text.startswith("~"):
        raise argparse.ArgumentTypeError(unexpanded_home(text))
    path = _fitting(text, NAME_MARGIN, "for its lock and temporary files")
    longest = _name_max(path)
    for i, part in enumerate(path.parts):
        size, limit = len(os.fsencode(part)), longest - (NAME_MARGIN if i == len(path.parts) - 1 else 0)
        if size > limit:
            raise argparse.ArgumentTypeError(
                f"a name in the path is {size} bytes long, more than the {limit} a command can use there (the "
                f"file system takes names of at most {longest} bytes" + (f", and a command adds up to {NAME_MARGIN} "
                f"for its lock and temporary files" if limit < longest else "") + f"): {part[:40]!r}...")
    return path


def folder_argument(text) -> Path:
    """argparse type of a path option that names a folder written into (`--snapshots`, `--keep`,
    `paper --out`): `path_argument`, and a path too long for the files a command writes in it
    (`FOLDER_MARGIN`): one of 4063 bytes passed, and the run ended at its first file (File name
    too long), `paper` wrote 2 of its 8 files (a hunt)."""
    path_argument(text)
    return _fitting(text, FOLDER_MARGIN, "for the files it writes in the folder, their names and temporaries")


def _fitting(text: str, margin: int, added: str) -> Path:
    """`text` as a Path, once the whole path (from /) and `margin` bytes more fit the system's
    PATH_MAX; else the refusal, saying what the command adds (`added`)."""
    path = Path(text)
    if (size := len(os.fsencode(os.path.abspath(text)))) + margin > PATH_MAX:
        raise argparse.ArgumentTypeError(
            f"the path is {size} bytes long (from /), more than the {PATH_MAX - margin} a command can use (the "
            f"system takes {PATH_MAX}, and a command adds up to {margin} {added}): {text[:40]!r}...")
    return path


def file_argument(text) -> Path:
    """argparse type of a path option that names a file (`--checkpoint`, `--resume`, `--ics`, ...):
    `path_argument`, and a name that ends in '/' (or '/.' or '/..'), which names a folder, is
    refused: `--checkpoint runs/` wrote a file named `runs` (the slash dropped by Path)."""
    path = path_argument(text)
    if text.endswith(("/", "/.", "/..")) or text in (".", ".."):
        raise argparse.ArgumentTypeError(f"{text!r} names a folder, not a file; give a file name")
    return path


STREAM = re.compile(r"/(?:proc/(?:self|thread-self|\d+)|dev)/fd/\d+")    # an open descriptor's name


def output_file_argument(text) -> Path:
    """argparse type of a path option that names a file written (`--checkpoint`, `--plot`):
    `file_argument`, and a symbolic link to an open stream (/dev/stdout, /proc/self/fd/1) is
    refused as '-' is: a file is written beside the name and renamed onto it, so that `--plot
    /dev/stdout > fig.png`, as root, replaced the machine's /dev/stdout with the figure (a hunt)."""
    path = file_argument(text)
    name, links = text, 0
    while os.path.islink(name) and links < 40:           # (a longer chain: a loop, which the writer refuses)
        try:
            name, links = os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name))), links + 1
        except OSError:
            break
        if STREAM.fullmatch(name):
            raise argparse.ArgumentTypeError(f"{text} is a link to an open stream ({name}), which the file written "
                                             f"would replace rather than fill: name a file")
    return path


def script_paths(prog: str, argv: list[str]) -> list[Path] | None:
    """The paths a script takes as its arguments (`screenshot.py`'s OUT.png; its HTML_DIR: `script_folder`),
    each checked as `path_argument` checks an option's; None where one is refused, which is
    then said in one sentence on stderr."""
    try:
        return [path_argument(text) for text in argv]
    except argparse.ArgumentTypeError as e:
        print(sentence(f"{prog}: {e}"), file=sys.stderr)
        return None


def script_folder(prog: str, text: str, holds: str) -> Path | None:
    """The folder a script works on (the dashboard tools' HTML_DIR), checked by `folder_argument`,
    once it is a folder that holds `holds` (asv publish's index.html); else None,
    said in one sentence on stderr naming what the path is (the tools printed their usage alone,
    for a folder that did not exist, a file or a folder asv had not published into)."""
    try:
        folder = folder_argument(text)
    except argparse.ArgumentTypeError as e:
        print(sentence(f"{prog}: {e}"), file=sys.stderr)
        return None
    if (why := not_a_folder(folder)) is None:
        if os.path.lexists(folder / holds):      # whatever it is: its reader says it, where it is no file
            return folder
        why = f"holds no {holds}"
    print(sentence(f"{prog}: {folder} {why}; give the folder asv publish wrote (make dashboard: html)"),
          file=sys.stderr)
    return None


def _name_max(path: Path) -> int:
    """The longest name (bytes) the file system holding `path` takes: that of its nearest
    existing folder (255 where it cannot be asked)."""
    folder = os.path.abspath(path)
    while folder != os.path.dirname(folder) and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255
