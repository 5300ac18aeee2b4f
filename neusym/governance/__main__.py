"""``python -m neusym.governance janitor ...`` (see :mod:`neusym.governance.cli`)."""

import sys

from neusym.governance.cli import main

sys.exit(main())
