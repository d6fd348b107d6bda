"""A command's modules loading, before `entry.command` answers signals: a Ctrl-C then ends the
process with 130 and nothing said, not a KeyboardInterrupt traceback from inside an import.
Imports nothing but `signal` and `sys`, so that it is in place before anything slow loads: the
`nbsymple` script calls `quiet_while_loading` first, and the packages whose modules are commands
(`python -m nbsymple_versions.instruments.peers`, `python -m tools.gate`) call it as Python's `-m`
locates the module, before the module's own imports run (a hunt: each of those showed a traceback
for a Ctrl-C in the first 0.4 s, and the script too, while `entry` itself loaded)."""
import signal
import sys


def leave(signum, frame):
    """SIGINT's handler while a command loads: exit with 128 + the signal's number, quietly."""
    raise SystemExit(128 + signum)


def quiet_while_loading():
    """From now until `entry.command` answers SIGINT itself: a Ctrl-C ends the process with 130,
    nothing said. A SIGINT the process was started ignoring (`nohup`, `&` without job control)
    stays ignored; a handler of the caller's (a notebook's, a test's) stays too."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        try:
            signal.signal(signal.SIGINT, leave)
        except ValueError:               # not the main thread: no handler can be set there
            pass


def located_by_python_m(package: str) -> bool:
    """Whether Python's `-m` is locating a module of `package` (the package's import is then part
    of starting a command): `sys.argv[0]` is '-m' while it does, as Python documents, and the
    module named after '-m' (`python -m tools.gate`, `-mtools.gate`) is `package` or one of its
    modules. (A hunt: `python -m mytool`, whose package imported nbsymple_versions, ran with this
    handler all its life: its Ctrl-C an exit, never its KeyboardInterrupt, and `Simulation.step`
    no longer ending the step under way.)"""
    if sys.argv[:1] != ["-m"] or len(sys.orig_argv) < len(sys.argv):
        return False
    named = sys.orig_argv[-len(sys.argv)]           # the module's name, where '-m' ends the options
    module = named.partition("m")[2] if named.startswith("-") else named      # '-mtools.gate', '-Im...'
    return module == package or module.startswith(package + ".")


def pyplot():
    """matplotlib's pyplot on Agg, imported without matplotlib's warnings about the user's own
    settings (a bad value or key in a matplotlibrc or a style of its stylelib, a font cache it
    cannot save there: a hunt, each a few lines on stderr), which the figures leave out: they
    draw with matplotlib's defaults (`paper.style.style`, `instruments.mpi_model.plot`)."""
    import logging
    logger = logging.getLogger("matplotlib")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    finally:
        logger.setLevel(level)
    return plt
