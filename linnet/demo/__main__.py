"""`python -m linnet.demo`: run every example (`linnet.demo.main`)."""

import sys

from linnet.demo.main import main  # by its name, so that the worker processes find its functions

sys.exit(main())
