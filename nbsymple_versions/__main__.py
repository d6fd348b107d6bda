"""The `nbsymple` console script (and `python -m nbsymple_versions`): `cli.main`, its modules
loaded under `entry.quiet_interrupt`, so that a Ctrl-C while they load ends it with 130 and no
traceback from inside an import."""
import sys

from .entry import quiet_interrupt


def nbsymple() -> int:
    with quiet_interrupt():
        from .cli import main
    return main()


if __name__ == "__main__":
    sys.exit(nbsymple())
