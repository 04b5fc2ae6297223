"""Link #4: the printer from MLIR to a Penguin program (`python_printer`),
and the Penguin runtime that program imports (`penguin`).

The printer needs jaxlib's MLIR bindings; the runtime needs only numpy (and
matplotlib to draw). So the printer is imported on first use, and a program
emitted here runs, schedules and executes where jaxlib is not installed."""

__all__ = ["print_penguin"]


def __getattr__(name: str):
    if name in __all__:
        from printer import python_printer

        return getattr(python_printer, name)
    raise AttributeError(f"module 'printer' has no attribute {name!r}")
