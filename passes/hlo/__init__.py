"""The HLO side of the chain: a small HLO text IR and link #1."""

from passes.hlo.ir import Computation, Instruction, Module, Shape
from passes.hlo.reader import HloSyntaxError, read_module
from passes.hlo.writer import write_module

__all__ = ["Computation", "Instruction", "Module", "Shape", "HloSyntaxError", "read_module", "write_module"]
