"""`python -m nbsymple_versions.paper [options]`: same as `nbsymple paper [options]`."""
import sys

from .main import main

if __name__ == "__main__":
    sys.exit(main())
