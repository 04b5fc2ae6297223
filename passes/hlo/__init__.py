"""Link #1 and the schema it edits: our schema of XLA's HloModuleProto
(`proto`), link #1's view of a parsed module (`Module`), and the pass. The
module it runs on is read in `pipeline.reading` (`Parsed`)."""

from passes.hlo.ir import Computation, Instruction, Module

__all__ = ["Computation", "Instruction", "Module"]
