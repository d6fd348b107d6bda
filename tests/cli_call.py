"""`nbsymple` from the tests: run in the test's own process (`call`: fast, no interpreter start,
kernels stay compiled), or started as a child that the test signals (`signals_default`)."""
import contextlib
import io
import signal

from nbsymple_versions import cli


def call(argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `nbsymple ARGV`; argparse's exits included."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main([str(a) for a in argv])
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
