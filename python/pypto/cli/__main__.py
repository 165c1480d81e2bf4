"""``python -m pypto.cli`` runs the ``pypto`` command line."""
import sys

from pypto.cli import main

sys.exit(main())
