"""`nbsymple` run in the test's own process (fast: no interpreter start, kernels stay compiled)."""
import contextlib
import io

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
