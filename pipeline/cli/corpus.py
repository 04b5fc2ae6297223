"""`hlo2penguin corpus add CORPUS SOURCE`: add a program to a regression
corpus (the folder is made if missing), in the layout `pipeline.corpus`
says: its `.jaxexport` artifact, its inputs, JAX's outputs on them, and its
goldens in both dialects, as `regress --update-goldens` writes them.

SOURCE is a JAX function, `module:function` (imported as `python -m` would,
from the working directory) or `path/to/file.py:function`, exported for the
CPU with `jax.export.export(jax.jit(fn), platforms=("cpu",))` on its example
inputs: `--inputs FILE.npz`, `--example [module:]function` (a function that
returns them), or else the module's own `example_inputs()`. Or SOURCE is an
existing `.jaxexport` artifact, with `--inputs FILE.npz`; JAX's outputs are
then those of the artifact called on the CPU.

Every file is written to a scratch folder inside CORPUS first and moved into
place once all of them are: a failed step leaves the corpus as it was.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile

from passes.errors import first_line
from pipeline import corpus
from pipeline.cli.support import Parser, UsageError, guarded

PROG = "hlo2penguin corpus"
EXAMPLE_CONVENTION = "example_inputs"  # the module-level function that returns SOURCE's inputs


def build_parser(prog: str = PROG) -> Parser:
    parser = Parser(prog=prog, description="Manage a regression corpus of jax.export programs (see docs/corpus.md).")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    commands.required = True
    add = commands.add_parser("add", prog=f"{prog} add", help="add a program: artifact, inputs, expected outputs, "
                              "goldens", description=(
                                  "Add a program to the corpus folder CORPUS (made if missing): its .jaxexport, "
                                  "inputs/NAME.npz, expected/NAME.npz (JAX's outputs) and goldens/NAME.json (both "
                                  "dialects). Nothing is written if a step fails."))
    add.add_argument("directory", metavar="CORPUS", help="the corpus folder")
    add.add_argument("source", metavar="SOURCE",
                     help="a JAX function, module:function or path/to/file.py:function, or a .jaxexport artifact")
    add.add_argument("--name", help="the program's name in the corpus (default: the function's, or the artifact's "
                                    "file name without .jaxexport)")
    add.add_argument("--inputs", metavar="FILE.npz", help="the example inputs, arrays arg_0, arg_1, … (np.savez)")
    add.add_argument("--example", metavar="[MODULE:]FUNCTION",
                     help="a function returning the example inputs as a tuple of arrays (default: SOURCE's "
                          f"module's {EXAMPLE_CONVENTION}(), if it has one)")
    add.add_argument("--replace", action="store_true", help="overwrite a program of the same name")
    add.add_argument("-q", "--quiet", action="store_true", help="no table of the program's rows")
    return parser


def main(argv: list[str], prog: str = PROG) -> int:
    parser = build_parser(prog)
    return guarded(prog, lambda: _main(parser, argv))


def _main(parser, argv: list[str]) -> int:
    args = parser.parse_args(argv)
    is_artifact = args.source.endswith(corpus.ARTIFACT)
    if is_artifact and args.example:
        raise UsageError("an artifact's inputs are an .npz: give --inputs FILE.npz, not --example")
    if args.inputs and args.example:
        raise UsageError("give --inputs FILE.npz or --example FUNCTION, not both")
    if is_artifact and not args.inputs:
        raise UsageError(f"'{args.source}' is an artifact: give its example inputs with --inputs FILE.npz "
                         "(arrays arg_0, arg_1, …)")
    name = corpus.check_name(args.name or (os.path.basename(args.source)[: -len(corpus.ARTIFACT)] if is_artifact
                                           else args.source.rpartition(":")[2]))
    _refuse_existing(args.directory, name, args.replace)
    inputs = _read_inputs(args.inputs) if args.inputs else None
    if is_artifact:
        exported = corpus.read_artifact(args.source)
        corpus.check_arrays(args.inputs, inputs, exported.in_avals, "inputs")
        outputs = _call(lambda *xs: exported.call(*xs), inputs, args.source)
    else:
        fn, module = _function(args.source)
        if inputs is None:
            inputs = _example(args.example, module, args.source)
        exported, outputs = _export(fn, inputs, args.source)
    rows = _add(args.directory, name, bytes(exported.serialize()), inputs, outputs)
    if not args.quiet:
        from pipeline.cli.regress import Summary, table

        sys.stdout.write(table(Summary(rows)))
    print(f"added {name} to {args.directory}: check it with 'hlo2penguin regress {args.directory}'", file=sys.stderr)
    return 0


def _refuse_existing(directory: str, name: str, replace: bool) -> None:
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"'{directory}' is a file, not a corpus folder: give a folder (made if missing)")
    if os.path.isdir(directory):
        try:
            corpus.names(directory)  # a malformed corpus is said now, not after the export
        except OSError as err:
            raise UsageError(f"cannot read corpus folder '{directory}': {err.strerror}") from None
    held = [p for p in corpus.paths(directory, name).all() if os.path.exists(p)]
    if held and not replace:
        raise UsageError(f"{held[0]} exists: the corpus holds a program '{name}'; give --replace to overwrite it, "
                         "or --name for another name")


def _read_inputs(path: str) -> list:
    if not os.path.isfile(path):
        raise UsageError(f"--inputs '{path}' is not a file: give an .npz of arrays arg_0, arg_1, …")
    return corpus.read_npz(path, corpus.ARG)


def _import(spec: str, what: str):
    """The module `spec` names: `pkg.module` (from the working directory, as
    `python -m`) or `path/to/file.py`."""
    try:
        if spec.endswith(".py"):
            if not os.path.isfile(spec):
                raise UsageError(f"{what}: no file '{spec}': give path/to/file.py:function or module:function")
            folder = os.path.dirname(os.path.abspath(spec))
            if folder not in sys.path:
                sys.path.insert(0, folder)  # as `python file.py`: its neighbours import
            module_name = os.path.basename(spec)[:-3]
            loaded = importlib.util.spec_from_file_location(module_name, spec)
            module = importlib.util.module_from_spec(loaded)
            sys.modules[module_name] = module
            loaded.loader.exec_module(module)
            return module
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(spec)
    except UsageError:
        raise
    except Exception as err:  # the user's module raised while importing
        raise UsageError(f"{what}: cannot import '{spec}' ({first_line(err, with_type=True)})") from None


def _attribute(module, name: str, what: str):
    fn = getattr(module, name, None)
    if not callable(fn):
        raise UsageError(f"{what}: '{module.__name__}' has no function '{name}'")
    return fn


def _function(source: str):
    module_spec, colon, name = source.rpartition(":")
    if not colon or not module_spec or not name:
        raise UsageError(f"SOURCE '{source}' is neither module:function, path/to/file.py:function nor a "
                         f".jaxexport artifact")
    module = _import(module_spec, f"SOURCE '{source}'")
    return _attribute(module, name, f"SOURCE '{source}'"), module


def _example(spec: str | None, module, source: str) -> list:
    import numpy as np

    if spec is None:
        if not callable(getattr(module, EXAMPLE_CONVENTION, None)):
            raise UsageError(f"'{source}' needs example inputs: give --inputs FILE.npz, --example FUNCTION, or "
                             f"define {EXAMPLE_CONVENTION}() in its module")
        spec, fn = EXAMPLE_CONVENTION, getattr(module, EXAMPLE_CONVENTION)
    elif ":" in spec:
        where, _, name = spec.rpartition(":")
        fn = _attribute(_import(where, f"--example '{spec}'"), name, f"--example '{spec}'")
    else:
        fn = _attribute(module, spec, f"--example '{spec}'")
    try:
        made = fn()
    except Exception as err:
        raise UsageError(f"--example '{spec}' raised {first_line(err, with_type=True)}") from None
    if not isinstance(made, (tuple, list)):
        made = (made,)  # one argument
    try:
        return [np.asarray(a) for a in made]
    except Exception as err:
        raise UsageError(f"--example '{spec}' returned something other than arrays ({first_line(err)}): "
                         "return a tuple of arrays, one a positional argument") from None


def _export(fn, inputs: list, source: str):
    import jax

    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
    try:
        exported = jax.export.export(jax.jit(fn), platforms=("cpu",))(*specs)
    except Exception as err:
        raise UsageError(f"cannot export '{source}' on its example inputs ({first_line(err, with_type=True)})") \
            from None
    corpus.check_arrays("the example inputs", inputs, exported.in_avals, "inputs")
    return exported, _call(jax.jit(fn), inputs, source)


def _call(fn, inputs: list, source: str) -> list:
    import jax
    import numpy as np

    try:
        return [np.asarray(o) for o in jax.tree_util.tree_leaves(fn(*inputs))]
    except Exception as err:
        raise UsageError(f"'{source}' fails on its example inputs ({first_line(err, with_type=True)})") from None


def _add(directory: str, name: str, artifact: bytes, inputs: list, outputs: list) -> list:
    """Write the program's files in a scratch folder inside `directory`,
    write its goldens there as `regress --update-goldens` does, then move
    every file into place. The rows of its check."""
    from pipeline.cli import regress

    made_folder = not os.path.isdir(directory)
    os.makedirs(directory, exist_ok=True)
    scratch = tempfile.mkdtemp(dir=directory, prefix=".hlo2penguin-add-")
    try:
        staged, final = corpus.paths(scratch, name), corpus.paths(directory, name)
        for path, data in ((staged.artifact, artifact), (staged.inputs, corpus.npz_bytes(inputs, corpus.ARG)),
                           (staged.expected, corpus.npz_bytes(outputs, corpus.OUT))):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        program = regress.read_program(scratch, name)  # the layout's own checks, as regress reads it
        rows, fresh = regress.check_program(program, update=True)
        failed = [r.error for r in rows if r.error]
        if failed or fresh is None:
            raise corpus.CorpusError(f"{name}: {failed[0] if failed else 'the chain cannot run it'}: "
                                     "nothing was added")
        if not rows:
            raise corpus.CorpusError(f"{name}: no module XLA compiles from it carries control edges, so there is "
                                     "nothing to check: nothing was added (a loop that updates a buffer in place "
                                     "makes XLA add them)")
        regress.write_golden(scratch, program, fresh)
        for made, path in zip(staged.all(), final.all()):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(made, path)
        programs = os.path.join(scratch, corpus.GOLDENS, name)  # the golden's Penguin programs, beside its JSON
        if os.path.isdir(programs):
            target = os.path.join(directory, corpus.GOLDENS, name)
            shutil.rmtree(target, ignore_errors=True)  # a replaced program's old ones
            os.replace(programs, target)
        made_folder = False  # the folder holds a program now
        return rows
    except OSError as err:
        raise UsageError(f"cannot write to corpus folder '{directory}': {err.strerror}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if made_folder:  # a failed add leaves no folder it made
            shutil.rmtree(directory, ignore_errors=True)
