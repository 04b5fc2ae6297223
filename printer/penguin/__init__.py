"""The Penguin runtime: what a program emitted by link #4 imports.

`Dependency` is a module, as in Penguin's IR: `Dependency.DependencyEdge`
and `Dependency.EdgeKind`."""

from printer.penguin import Dependency
from printer.penguin.Dependency import DependencyEdge, EdgeKind
from printer.penguin.execute import ElidedConstants, ExecutionError, UnsupportedOp, dense
from printer.penguin.graph import Argument, Block, Function, Instruction, ScheduleError, T, Value
from printer.penguin.module import Module

__all__ = ["Argument", "Block", "Dependency", "DependencyEdge", "EdgeKind", "ElidedConstants", "ExecutionError",
           "Function", "Instruction", "Module", "ScheduleError", "T", "UnsupportedOp", "Value", "dense"]
