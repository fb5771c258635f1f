"""`python -m linnet` is the `linnet` command."""

import sys

try:
    from .cli.main import main
except KeyboardInterrupt:  # Ctrl-C while the command line itself loads: no traceback
    sys.exit(130)

sys.exit(main())
