"""What a constant XLA's dump left without its values means, said once for
the runtime (`Module.execute` refuses), the verifier's report and the CLIs.
Pure Python: the Penguin runtime imports it. Which constants those are is
`pipeline.reading.elided`'s to find."""

from __future__ import annotations

DUMP_LARGE_CONSTANTS = "--xla_dump_large_constants"  # the XLA flag that dumps every constant's values
_NAMED = 3  # a line names this many constants, then counts the rest


def named(constants) -> str:
    """`%W (in %main), %b (in %body) and 4 more`."""
    constants = list(constants)
    text = ", ".join(f"{name if ' ' in name else '%' + name} (in %{computation})"
                     for computation, name in constants[:_NAMED])
    return text + (f" and {len(constants) - _NAMED} more" if len(constants) > _NAMED else "")


def elided_note(constants) -> str:
    """The report's note: which constants, and that the numbers cannot be compared while the edges are checked."""
    constants = list(constants)
    return (f"XLA's dump elided the values of {len(constants)} constant(s) (`constant({{...}})`): "
            f"{named(constants)}; the module's numbers cannot be compared (its edges are checked): "
            f"dump with {DUMP_LARGE_CONSTANTS} to keep every value")


def elided_refusal(constants, module: str | None = None) -> str:
    """Why a module's numbers are not computed, in one line: the constants, and the flag that keeps them."""
    constants = list(constants)
    return (f"{f'module {module}: ' if module else ''}XLA's dump elided the values of {len(constants)} "
            f"constant(s) (`constant({{...}})`): {named(constants)}; its numbers would come from the placeholders "
            f"XLA's parser puts there, so it is not executed: dump with {DUMP_LARGE_CONSTANTS} to keep every value")
