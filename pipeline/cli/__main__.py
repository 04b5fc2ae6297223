"""`python -m pipeline.cli` is `hlo2penguin`."""

from pipeline.cli.hlo2penguin import entry

entry()
