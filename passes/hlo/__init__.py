"""The HLO side of the chain: XLA's parse of a module (`Parsed`), link #1's
view of it, and link #1."""

from passes.hlo.ir import Computation, Instruction, Module
from passes.hlo.parsed import Parsed

__all__ = ["Computation", "Instruction", "Module", "Parsed"]
