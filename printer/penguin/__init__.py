"""The Penguin runtime: what a program emitted by link #4 imports."""

from printer.penguin.execute import ExecutionError, UnsupportedOp, dense
from printer.penguin.graph import (
    Argument, Block, Dependency, Function, Instruction, ScheduleError, T, Value)
from printer.penguin.module import Module

__all__ = ["Argument", "Block", "Dependency", "ExecutionError", "Function", "Instruction", "Module",
           "ScheduleError", "T", "UnsupportedOp", "Value", "dense"]
