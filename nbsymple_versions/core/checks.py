"""The one place where a user's values become checked values, for the Python API.

Each function takes the value and the name of the argument it came in (`n`, `dt`, `masses`...)
and returns the value in the type the code uses, or raises ValueError in one sentence that
names the argument and says what would be accepted (TypeError where the argument is not the
kind of object wanted at all: a State, a record, a callback). Nothing is rounded or clipped: 2.7 bodies,
`True` steps, the string '3' or a NaN are refused, never turned into 2, 1, 3 or a traceback
further down. (The command line parses its own text with argparse types in `cli.py`; what they
return goes through these checks too, where it reaches the API.)
"""
import itertools
import math
import numbers
import operator

import numpy as np

COUNT_LIMIT = 2**63         # a count (steps, calls) is an int64, as NumPy's and numba's counters are


def short_repr(value) -> str:
    """`value` for a message: short, and a string in quotes."""
    try:
        text = repr(value)
    except ValueError:              # an int of more digits than Python writes (4300), or one inside
        return (f"an integer of {value.bit_length()} bits" if isinstance(value, int)
                else f"a {type(value).__name__} holding an integer of more than 4300 digits")
    return text if len(text) <= 40 else text[:37] + "..."


def named(key) -> str:
    """A name a user gave (a keyword, a dict's key), for a message: as it is where it is a short
    printable string, else its repr, cut (a newline or 400 characters never reach the message)."""
    return key if isinstance(key, str) and key.isprintable() and len(key) <= 40 else short_repr(key)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def as_float(value) -> float:
    """`value` as a float, or NaN where it is not a real number (a bool, a string, None) or lies
    beyond float64's range (an integer or a fraction of 400 digits), for a check to refuse in its
    own sentence."""
    if not _is_number(value):
        return math.nan
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError):
        return math.nan


def whole_number(value, name: str, minimum: int | None = None, below: int | None = None) -> int:
    """`value` as an int: an integer (or an integral float such as 1e3), not a bool or a string,
    at least `minimum` and less than `below` when given."""
    wanted = "a whole number" + ("" if minimum is None else f" of at least {minimum}") + \
        ("" if below is None else f" below {below}")
    if not _is_number(value):
        raise ValueError(f"{name} must be {wanted}, got {short_repr(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        number = as_float(value)
        if not (math.isfinite(number) and number.is_integer()):
            raise ValueError(f"{name} must be {wanted}, got {short_repr(value)}") from None
        number = int(number)
    if (minimum is not None and number < minimum) or (below is not None and number >= below):
        raise ValueError(f"{name} must be {wanted}, got {short_repr(number)}")
    return int(number)


def finite_number(value, name: str, minimum: float | None = None) -> float:
    """`value` as a finite float (not a bool or a string), at least `minimum` when given."""
    wanted = "a finite number" + ("" if minimum is None else f" of at least {minimum:g}")
    number = as_float(value)
    if not math.isfinite(number) or (minimum is not None and number < minimum):
        raise ValueError(f"{name} must be {wanted}, got {short_repr(value)}")
    return number


def positive_number(value, name: str) -> float:
    """`value` as a float > 0 and finite."""
    number = as_float(value)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive finite number, got {short_repr(value)}")
    return number


def finite_array(value, name: str, shape: tuple | None = None, positive: bool = False) -> np.ndarray:
    """`value` as a C-contiguous float64 array (the same object when it already is one) of
    `shape` (None in it: any length) whose entries are finite, and > 0 with `positive`. A
    refusal names the first offending entry."""
    try:
        raw = np.asarray(value)
    except ValueError:
        raw = None                                        # a ragged list
    if raw is None or raw.dtype.kind not in "iufO" or raw.dtype.kind == "O" and not all(
            _is_number(v) for v in raw.ravel()):
        what = "a ragged list" if raw is None else short_repr(value) if raw.dtype.kind == "O" else f"{raw.dtype} values"
        raise ValueError(f"{name} must be an array of real numbers, got {what}")
    try:
        array = np.asarray(raw, dtype=np.float64, order="C")     # 0-d stays 0-d (ascontiguousarray made it (1,))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {short_repr(value)}") from None
    except OverflowError:                                 # an integer of 400 digits
        raise ValueError(f"{name} must be finite, but holds a number beyond float64's range: "
                         f"{short_repr(value)}") from None
    if shape is not None and (array.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(array.shape, shape))):
        wanted = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {wanted}, got {array.shape}")
    ok = np.isfinite(array) & (array > 0) if positive else np.isfinite(array)
    if not ok.all():
        where = np.unravel_index(int(np.flatnonzero(~ok.ravel())[0]), array.shape)
        index = "[" + ", ".join(map(str, where)) + "]"
        wanted = "positive and finite" if positive else "finite"
        raise ValueError(f"{name} must be {wanted}, but {name}{index} is {float(array[where])!r}")
    return array


def one_of(value, choices, name: str) -> str:
    """The entry of `choices` that `value` names, compared case-insensitively (so 'DP', 'Dp' and
    'dp' all give 'dp'; the choices' own spelling comes back)."""
    if isinstance(value, str):
        for choice in choices:
            if value.lower() == choice.lower():
                return choice
    raise ValueError(f"unknown {name} {short_repr(value)}; choose one of {', '.join(choices)} (any case)")


def instance(value, kind, name: str, what: str):
    """`value` if it is a `kind` (a class or a tuple of them), else TypeError in one sentence:
    "`name` must be `what`, got <its type>"."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value


def callable_or_none(value, name: str):
    """`value` if it is None or can be called (a callback), else TypeError in one sentence."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a function or None, got {type(value).__name__}")
    return value


def flag(value, name: str) -> bool:
    """`value` as a bool: True or False (NumPy's too), not 1, "yes" or None."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {short_repr(value)}")
    return bool(value)


# seeds are whole numbers below 2**128 (NumPy's SeedSequence draws 128 bits of entropy): a larger
# one was taken, and the checkpoint that recorded it (JSON reads an integer beyond float64 as
# infinity) could not be resumed
SEED_BOUND = 2**128


def seed(value, name: str = "seed"):
    """A seed for `numpy.random.default_rng`: None (a fresh one), a whole number from 0 below
    SEED_BOUND (not a bool, a string or 1.5), or NumPy's own SeedSequence, BitGenerator or
    Generator as they are."""
    if value is None or isinstance(value, (np.random.SeedSequence, np.random.BitGenerator, np.random.Generator)):
        return value
    if not _is_number(value):
        raise ValueError(f"{name} must be None or a whole number of at least 0, got {short_repr(value)}")
    number = whole_number(value, name, 0)
    if number >= SEED_BOUND:
        raise ValueError(f"{name} must be a whole number below 2**128 (the bits NumPy's SeedSequence draws), got "
                         f"{short_repr(number)}")
    return number


def writable(array: np.ndarray, name: str) -> np.ndarray:
    """`array` if it can be written in place, else ValueError in one sentence."""
    if not array.flags.writeable:
        raise ValueError(f"{name} is read-only, but it is integrated in place; give a writable copy ({name}.copy())")
    return array


def separate(arrays: dict) -> None:
    """ValueError in one sentence where two of the arrays {name: array} share memory: each is written in
    place (x by the drifts, v by the kicks, a scratch by the forces) or read while another is, so
    one would change the other in silence (a hunt: State(a, a, ...) integrated, and drifted)."""
    for first, second in itertools.combinations(arrays, 2):
        if np.shares_memory(arrays[first], arrays[second]):
            raise ValueError(f"{first} and {second} share memory, but each is written or read while the other is "
                             f"written: give each an array of its own ({second}.copy())")


def real_array(value, name: str) -> np.ndarray:
    """`value` (a number or an array of them) as float64, non-finite entries kept; ValueError in
    one sentence for what is not real numbers (None, a string, complex numbers)."""
    try:
        raw = np.asarray(value)
    except ValueError:
        raw = None                                        # a ragged list
    if raw is None or raw.dtype.kind not in "iuf":
        what = "a ragged list" if raw is None else short_repr(value)
        raise ValueError(f"{name} must be a real number or an array of them, got {what}")
    return raw.astype(np.float64)
