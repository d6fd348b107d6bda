"""`nbsymple` from the tests: run in the test's own process (`call`: fast, no interpreter start,
kernels stay compiled), or started as a child that the test signals (`signals_default`)."""
import contextlib
import io
import signal

from nbsymple_versions import cli

# CPython keeps its frames in 16 KiB chunks and frees a chunk when the frame at its base returns: in
# 3.11 (gh-142183; 3.13 and 3.14 keep a spare chunk since) a call made in a loop across a chunk's
# end maps and unmaps a chunk every time. A command run deep in pytest and hypothesis can meet one
# in its inner loops (`paper`'s figures: twice the time, half of it in the kernel), where a user's
# process, whose command starts near a chunk's base, does not. A frame of 2000 locals fills a
# chunk: the second one starts a fresh chunk.
_CHUNK_LOCALS = 2000
_namespace: dict = {}
exec("def _filled_chunk(function, args):\n    " + " = ".join(f"_{i}" for i in range(_CHUNK_LOCALS))
     + " = None\n    return function(*args)\n", _namespace)
_filled_chunk = _namespace["_filled_chunk"]


def on_a_fresh_stack(function, *args):
    """`function(*args)` with its frames from the base of a fresh chunk of CPython's frame stack,
    as a command's are in its own process."""
    return _filled_chunk(_filled_chunk, (function, args))


def call(argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `nbsymple ARGV`; argparse's exits included."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = on_a_fresh_stack(cli.main, [str(a) for a in argv])
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def signals_default():
    """A child's `preexec_fn`: SIGINT and SIGHUP as a terminal delivers them. A suite started in
    the background by a shell without job control (`make test &`) ignores SIGINT, one started
    under `nohup` ignores SIGHUP, and a child (an MPI job's ranks too) would inherit that and
    never see the signal its test sends."""
    for signum in (signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
