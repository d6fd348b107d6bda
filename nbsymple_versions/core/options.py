"""Typed options of a version: a frozen dataclass per version package, checked in one place.

Each field carries its command-line flag and help in its metadata (`option(...)`), so that
`nbsymple run`'s flags, `nbsymple info`, the docs' tables and the tests derive from the
dataclasses instead of re-checking version letters. A field's validator raises ValueError in
one sentence; unknown names are refused by `from_dict` with the version's own list.
"""
import argparse
from dataclasses import MISSING, dataclass, field, fields

from .checks import SEED_BOUND, named, short_repr


def option(default, flag: str, help: str, check=None, choices=None):
    """A dataclass field of a version's options: its default, command-line flag, help, an
    optional validator (value -> value, ValueError in one sentence) and its choices."""
    return field(default=default, metadata={"flag": flag, "help": help, "check": check, "choices": choices})


@dataclass(frozen=True)
class NoOptions:
    """A version that takes no options (A, B); the base of every version's options."""

    def __post_init__(self):
        for f in fields(self):
            check = f.metadata.get("check")
            if check is not None:
                try:
                    value = check(getattr(self, f.name))
                except ValueError as e:          # named as in Python and on the command line
                    raise ValueError(f"{e} ({f.metadata['flag']})") from None
                object.__setattr__(self, f.name, value)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def describe(cls) -> list[dict]:
        """name, flag, default, choices and help of every option (CLI, `info`, docs)."""
        return [{"name": f.name, "flag": f.metadata["flag"], "default": None if f.default is MISSING else f.default,
                 "choices": f.metadata.get("choices"), "help": f.metadata["help"]} for f in fields(cls)]

    @classmethod
    def from_dict(cls, given: dict, letter: str) -> "NoOptions":
        """The options of version `letter` from keyword values; an unknown name is a ValueError."""
        unknown = sorted(map(named, set(given) - set(cls.names())))
        if unknown:
            takes = ", ".join(cls.names()) or "none"
            raise ValueError(f"version {letter} takes no option {', '.join(unknown)} (its options: {takes})")
        options = cls(**given)
        object.__setattr__(options, "_named", frozenset(given))     # (not a field: equality ignores it)
        return options

    def given(self) -> dict:
        """The options that differ from their defaults (what a checkpoint records)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}

    def asked(self) -> dict:
        """The options given by name to `from_dict` (at their defaults too: `--tile 256`) or that
        differ from their defaults: what a version with no use for them refuses (a hunt: F's node
        version B took `--tile 256` in silence, and refused `--tile 128`)."""
        named = getattr(self, "_named", frozenset())
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in named} | self.given()


def whole_number_argument(minimum: int, below: int | None = None, below_text: str = ""):
    """argparse type: a whole number >= minimum (and < `below`, said as `below_text`); what is
    echoed of a long text is cut short (a number beyond Python's 4300 digits is said to be one)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            digits = text.strip().lstrip("+-").replace("_", "")
            if digits.isascii() and digits.isdigit():      # beyond Python's 4300 digits ('²' is no digit of int's)
                raise argparse.ArgumentTypeError(f"a whole number of {len(digits)} digits is more than it takes"
                                                 ) from None
            raise argparse.ArgumentTypeError(f"expected a whole number, got {short_repr(text)}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {short_repr(value)}")
        if below is not None and value >= below:
            raise argparse.ArgumentTypeError(f"must be below {below_text or below}, got {short_repr(value)}")
        return value
    return parse


# argparse type of every --seed: what `checks.seed` takes
seed_argument = whole_number_argument(0, SEED_BOUND, "2**128")


def add_option_arguments(add, flags: dict, names=None):
    """The versions' options as command-line flags, none given by default, through `add` (a
    parser's `add_argument`); `flags` is the registry's `option_flags()`, `names` limits them."""
    for name, (d, letters) in flags.items():
        if names is not None and name not in names:
            continue
        choices = d["choices"]
        kind = (str.upper if all(c.isupper() for c in choices) else str.lower) if choices else whole_number_argument(1)
        add(d["flag"], dest=name, default=None, type=kind, choices=choices,
            help=f"{'version' if len(letters) == 1 else 'versions'} {', '.join(letters)}: {d['help']}")
