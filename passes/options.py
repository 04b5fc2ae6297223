"""One declaration per option: a pass declares each of its options once, as
a dataclass field made by `option()`, with its help text (and its valid
values, if it has a fixed set); everything else is derived from those
fields, in the manner of xDSL's `ModulePass.from_pass_spec`:

    @dataclass(frozen=True)
    class FlattenControlDepTupleOperands:
        dialect: Dialect = MHLO     # a plain field: not an option (the mnemonic picks it)
        scope: str = option("main", help="functions to walk: ...", choices=SCOPES)

    options(FlattenControlDepTupleOperands)   # (Option(name='scope', ...), ...)
    check(self, FlattenError)                 # in __post_init__: "unknown scope 'x': choose one of main, first, all"
    parse_element(cls, "scope=all keep-attributes=1", where=mnemonic)   # {'scope': 'all', 'keep_attributes': True}

- the command-line key is the field's name in kebab case (`keep_attributes`
  → `keep-attributes`), in a pipeline element `NAME{key=value ...}` and as a
  flag; a bool whose default is True has the flag `--no-KEY`, and its help
  says what that flag does;
- a value's text becomes the field's type: a bool is 1|0|true|false, an int
  or float its number, a str itself;
- a chain that runs a pass re-declares the pass's option with `pass_option()`
  (its help and valid values come along; it may set its own default);
- `pipeline.cli.support.add_option_flags` makes the argparse flags.

Pure Python (no jaxlib): the passes' modules and the CLIs import it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import MISSING, dataclass

from passes.errors import ChainError

_HELP, _CHOICES, _PASS = "help", "choices", "pass"
_TYPES = {t.__name__: t for t in (bool, int, float, str)}


class OptionError(ChainError):
    """An option's text cannot be read: an unknown key, or a value not of its type."""


class OptionTypeError(OptionError, TypeError):
    """An option given a value not of its declared type (`flatten="no"`), an
    unknown option, or options that are neither the options' dataclass nor a
    mapping of its fields: a TypeError, as Python's own for a bad argument."""


def option(default, *, help: str, choices: tuple | None = None):  # noqa: A002 (argparse's word)
    """A dataclass field that is a command-line option: `default`, the `help`
    its flag shows, and, if given, the only values it takes (`check` holds
    an instance to them)."""
    metadata = {_HELP: help}
    if choices is not None:
        metadata[_CHOICES] = tuple(choices)
    return dataclasses.field(default=default, metadata=metadata)


def pass_option(pass_class: type, name: str, *, link: str | None = None, default=MISSING, help: str | None = None):
    """A field of another dataclass (the chain's `Options`) that is `pass_class`'s
    option `name`: its valid values come along; its help is the pass's,
    after `link: ` if given, unless `help` replaces it (as a new `default`
    usually must, where the help names the default)."""
    declared = _field(pass_class, name)
    metadata = dict(declared.metadata)
    metadata[_PASS] = pass_class
    if help is not None:
        metadata[_HELP] = help
    elif link is not None:
        metadata[_HELP] = f"{link}: {declared.metadata[_HELP]}"
    return dataclasses.field(default=declared.default if default is MISSING else default, metadata=metadata)


@dataclass(frozen=True)
class Option:
    """One option, as its declaration says."""

    name: str           # the field: the keyword argument
    type: type          # bool, int, float or str: how its text becomes a value
    default: object
    help: str
    choices: tuple | None = None
    pass_class: type | None = None  # the pass it was declared by, where `pass_option` re-declared it

    @property
    def key(self) -> str:
        """`keep-attributes`: its key in a pipeline element."""
        return self.name.replace("_", "-")

    @property
    def flag(self) -> str:
        """`keep-attributes`, or `no-flatten` for a bool that is True unless its flag is given."""
        return f"no-{self.key}" if self.type is bool and self.default is True else self.key

    def values(self) -> str:
        """`main|first|all`, `true|false`, `INT`: what it takes, for an error message."""
        if self.choices is not None:
            return "|".join(str(c) for c in self.choices)
        return "true|false" if self.type is bool else self.type.__name__.upper()

    def parse(self, text: str | None, where: str | None = None):
        """The value that `text` (a pipeline element's `key=TEXT`; None for a bare `key`) means."""
        if self.type is bool:
            word = "true" if text is None else text.lower()
            if word in ("1", "true"):
                return True
            if word in ("0", "false"):
                return False
            raise OptionError(f"{self.key}={text}: expected true|false (or 1|0)", where)
        if text is None:
            raise OptionError(f"{self.key} needs a value: {self.key}={self.values()}", where)
        if self.type is str:
            return text
        try:
            return self.type(text)
        except ValueError:
            raise OptionError(f"{self.key}={text}: expected {'an integer' if self.type is int else 'a number'}",
                              where) from None


def options(cls: type) -> tuple[Option, ...]:
    """The options `cls` (a dataclass, or an instance of one) declares, in field order."""
    cls = cls if isinstance(cls, type) else type(cls)
    found = []
    for f in dataclasses.fields(cls):
        if _HELP not in f.metadata:
            continue  # a plain field: not an option
        kind = _TYPES.get(f.type) if isinstance(f.type, str) else f.type if f.type in _TYPES.values() else None
        if kind is None:  # the annotation, as written (`from __future__ import annotations`) or not
            raise TypeError(f"{cls.__name__}.{f.name}: an option is a bool, int, float or str, not {f.type}")
        found.append(Option(f.name, kind, f.default, f.metadata[_HELP], f.metadata.get(_CHOICES),
                            f.metadata.get(_PASS)))
    return tuple(found)


def check(instance, error: type[Exception] = OptionError) -> None:
    """Hold every option of `instance` that has fixed choices to them (a pass's
    `__post_init__`): `unknown scope 'x': choose one of main, first, all`;
    first every field to its type (`check_types`)."""
    check_types(instance)
    for o in options(instance):
        value = getattr(instance, o.name)
        if o.choices is not None and value not in o.choices:
            raise error(f"unknown {o.name.replace('_', ' ')} {value!r}: "
                        f"choose one of {', '.join(str(c) for c in o.choices)}")


def check_types(instance) -> None:
    """Hold every field of `instance` (a dataclass whose fields are options
    and keywords) to its declared type: OptionTypeError naming the field and
    what it takes, `option flatten takes True or False (a bool), not 'no' (a str)`.
    A bool is a bool (not 1, not "no"); `str | None` takes either."""
    try:
        hints = typing.get_type_hints(type(instance))
    except NameError:  # an annotation named for type checkers alone: its fields' own types still hold below
        hints = {}
    for f in dataclasses.fields(instance):
        if f.name not in hints:
            continue
        value, kinds = getattr(instance, f.name), _kinds(hints[f.name])
        if kinds is None or any(_is(value, k) for k in kinds):
            continue
        choices = f.metadata.get(_CHOICES)
        said = " or ".join("True or False (a bool)" if k is bool else "None" if k is type(None)
                           else f"one of {', '.join(map(repr, choices))} ({_a(k.__name__)})" if choices and k is str
                           else _a(k.__name__) for k in kinds)
        raise OptionTypeError(f"option {f.name} takes {said}, not {value!r} ({_a(type(value).__name__)})")


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


def _kinds(hint) -> tuple | None:
    """The types a field's annotation allows (`str | None` → (str, NoneType)); None if not a plain one."""
    args = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    return args if all(a in (bool, int, float, str, type(None)) for a in args) else None


def _is(value, kind: type) -> bool:
    if kind is bool or kind is type(None):
        return value is None if kind is type(None) else isinstance(value, bool)
    if kind in (int, float) and isinstance(value, bool):
        return False  # True is an int to Python, not a number to an option
    return isinstance(value, kind) or (kind is float and isinstance(value, int))


def pass_values(values, pass_class: type) -> dict:
    """The keywords for `pass_class` that `values` (the chain's `Options`) holds:
    its fields declared with `pass_option(P, ...)`, P `pass_class` or a base of it."""
    return {o.name: getattr(values, o.name) for o in options(values)
            if o.pass_class is not None and issubclass(pass_class, o.pass_class)}


def takes(cls: type) -> str:
    """`scope=main|first|all, keep-attributes=true|false and until-unchanged=true|false`."""
    said = [f"{o.key}={o.values()}" for o in options(cls)]
    return " and ".join([", ".join(said[:-1]), said[-1]]) if len(said) > 1 else "".join(said) or "no options"


def parse_element(cls: type, text: str | None, where: str | None = None) -> dict:
    """The options of a pipeline element, `scope=all keep-attributes=true` (the
    text between its braces), as keywords of `cls`. An unknown key is an
    OptionError that names the keys `cls` takes; `where` (the element's name)
    leads the message."""
    by_key = {o.key: o for o in options(cls)}
    pairs = [(key, value if eq else None)
             for key, eq, value in (item.partition("=") for item in split_top_level(text or "", " \t\n"))]
    unknown = sorted({key for key, _ in pairs if key not in by_key})
    if unknown:
        raise OptionError(f"unknown option(s) {', '.join(unknown)}; it takes {takes(cls)}", where)
    return {by_key[key].name: by_key[key].parse(value, where) for key, value in pairs}


def split_top_level(text: str, separators: str = ",") -> list[str]:
    """The pieces of `text` between the `separators` that stand outside every
    bracket ((), {}, []), each stripped; empty pieces are dropped.
    `split_top_level("a,b{x=1,y=2},c(d,e)")` → ['a', 'b{x=1,y=2}', 'c(d,e)']."""
    pieces, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif depth == 0 and c in separators:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return [p.strip() for p in pieces if p.strip()]


def _field(cls: type, name: str) -> dataclasses.Field:
    for f in dataclasses.fields(cls):
        if f.name == name and _HELP in f.metadata:
            return f
    raise TypeError(f"{cls.__name__} declares no option {name!r}")
