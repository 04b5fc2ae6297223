"""`python -m pipeline.cli` is `hlo2penguin`."""

import sys

from pipeline.cli.hlo2penguin import main

sys.exit(main())
