"""`python -m linnet` is the `linnet` command."""

import sys

from .cli import main

sys.exit(main())
