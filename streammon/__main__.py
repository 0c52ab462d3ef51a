"""``python -m streammon`` is the ``streammon`` command."""

import sys

from streammon.cli import main

sys.exit(main())
