"""``python -m cutemma`` runs the command line."""

import sys

from cutemma.cli import main

sys.exit(main())
