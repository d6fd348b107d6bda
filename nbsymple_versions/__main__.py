"""The `nbsymple` console script (and `python -m nbsymple_versions`): `cli.main`, its modules
loaded after `loading.quiet_while_loading`, so that a Ctrl-C while they load ends it with 130 and
no traceback from inside an import."""
import sys

from .loading import quiet_while_loading


def nbsymple() -> int:
    quiet_while_loading()
    from .cli import main
    return main()


if __name__ == "__main__":
    sys.exit(nbsymple())
