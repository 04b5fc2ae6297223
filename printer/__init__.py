"""Link #4: the printer from MLIR to a Penguin program (`python_printer`),
and the Penguin runtime that program imports (`penguin`)."""

from printer.python_printer import hlo_name, print_penguin

__all__ = ["hlo_name", "print_penguin"]
