"""`python -m nbsymple_versions.paper [options]`: same as `nbsymple paper [options]`."""
import sys

from ..entry import command


def _main() -> int:
    from .main import main           # after the environment check: it imports matplotlib
    return main()


if __name__ == "__main__":
    sys.exit(command("nbsymple paper", _main, draws=True))
