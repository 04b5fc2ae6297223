"""Runs XLA's parser and importer in a child process. XLA can abort the
process it runs in: its HLO parser CHECK-fails on some modules it could have
refused (a `parameter(5)` past the signature, a `reshape` of the wrong size, a
get-tuple-element of a non-tuple), its importer on others ("LLVM ERROR:
Failed to infer result type(s)"); here that kills only this child.

Input on stdin: HLO text (parsed first) or a serialized HLO proto; output on
stdout: StableHLO bytecode. The input may be preceded by the user's own
text, framed as `ORIGINAL <length>\n<text>` (`frame`): XLA's parser reads it
first, and its verdict is the chain's (a refusal names the user's line and
column). `--parse-only` stops after parsing the text; `--shapes` writes
XLA's shape of every instruction instead, as JSON
(`passes.hlo.shapes.xla_shapes`: the shapes text may leave out).
Exit status: 0 ok, 3 the importer refused, 4 the parser refused, 5 the
parser refused the user's own text; the reason on stderr. PARSED on stderr
marks the end of parsing, so that the parent can tell which of the two aborted.
"""

import importlib
import sys

PARSED = "\nhlo2penguin-worker: parsed\n"
ORIGINAL = b"hlo2penguin-original "


def frame(original: bytes, data: bytes) -> bytes:
    """`data` preceded by the user's text, for the worker to judge first."""
    return ORIGINAL + str(len(original)).encode() + b"\n" + original + data


def _unframe(data: bytes) -> tuple[bytes | None, bytes]:
    if not data.startswith(ORIGINAL):
        return None, data
    head, _, rest = data.partition(b"\n")
    length = int(head[len(ORIGINAL):])
    return rest[:length], rest[length:]


def main(argv: list[str]) -> int:
    if not argv:  # the chain starts the worker early: load XLA while the parent reads the module
        for name in ("jaxlib._hlo", "jaxlib._jax"):
            importlib.import_module(name)
    original, data = _unframe(sys.stdin.buffer.read())
    if original is not None:  # the user's text: XLA's verdict on it is the chain's
        import jaxlib._hlo as xla_hlo

        try:
            xla_hlo.hlo_module_from_text(original.decode("utf-8", "replace"))
        except Exception as err:
            sys.stderr.write(str(err))
            return 5
    if "--parse-only" in argv or "--shapes" in argv or data.startswith(b"HloModule"):
        import jaxlib._hlo as xla_hlo

        try:
            module = xla_hlo.hlo_module_from_text(data.decode("utf-8"))
        except Exception as err:  # an ordinary refusal: pass its text on
            sys.stderr.write(str(err))
            return 4
        if "--parse-only" in argv:
            return 0
        if "--shapes" in argv:
            import json

            from passes.hlo.shapes import module_shapes

            sys.stdout.write(json.dumps(module_shapes(module)))
            return 0
        data = module.as_serialized_hlo_module_proto()
        sys.stderr.write(PARSED)
        sys.stderr.flush()
    import jaxlib._jax as xla_ext

    try:
        bytecode = xla_ext.mlir.hlo_to_stablehlo(data)
    except Exception as err:  # an ordinary refusal: pass its text on
        sys.stderr.write(str(err))
        return 3
    sys.stdout.buffer.write(bytecode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
