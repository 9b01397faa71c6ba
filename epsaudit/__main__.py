"""``python -m epsaudit``: the same as the ``epsaudit`` command."""

import sys

from .cli import main

sys.exit(main())
