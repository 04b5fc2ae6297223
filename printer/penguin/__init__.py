"""The Penguin runtime: what a program emitted by link #4 imports."""

from printer.penguin.graph import (
    Argument, Block, Dependency, Function, Instruction, Module, ScheduleError, T, Value)

__all__ = ["Argument", "Block", "Dependency", "Function", "Instruction", "Module", "ScheduleError", "T", "Value"]
