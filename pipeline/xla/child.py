"""XLA's parser, importer and printer in a child process. XLA can abort the
process it runs in: its HLO parser CHECK-fails (or worse) on some modules it
could have refused (a `parameter(5)` past the signature, a `reshape` of the
wrong size, a get-tuple-element index past its tuple), its importer on
others ("LLVM ERROR: Failed to infer result type(s)"); here that kills only
this child, and the parent (`pipeline.xla.worker.XlaWorker`) says why.

The child answers requests, in order, until its stdin closes. A request is
a line `<command> <length>` and `length` bytes; the answer is a line
`<status> <length>` and `length` bytes:

    parse   HLO text         → ok: XLA's serialized HloModuleProto | refused: XLA's message
    import  serialized proto → ok: StableHLO bytecode               | failed: the importer's message
    print   serialized proto → ok: XLA's printing of the module     | refused: XLA's message
    read    serialized proto → ok: nothing (XLA reads the module)   | refused: XLA's message
    compile pieces of a long Penguin program (marshal) → ok: their code objects (marshal)
    run     (serialized proto, input arrays) (pickle) → ok: XLA:CPU's outputs (pickle) | failed: XLA's message
                                       | broken: the child's own state failed (it ends; ask a new one)
    compiles nothing                 → ok: how many modules `run` compiled in this child (decimal)

The parent starts the child before it has anything to ask, so that Python
and jaxlib load on the other core meanwhile, and keeps it warm for every
later call. When its stdin closes (the parent is done, exited or was
killed) the child ends at once: `os._exit`, without jaxlib's teardown.
"""

import os
import sys


def _answer(out, status: str, payload: bytes) -> None:
    out.write(f"{status} {len(payload)}\n".encode() + payload)
    out.flush()


def serve(stdin, stdout) -> None:
    from pipeline.xla import native

    while True:
        header = stdin.readline()
        if not header.endswith(b"\n"):
            return
        command, _, length = header.decode().partition(" ")
        payload = stdin.read(int(length))
        try:
            if command == "parse":
                _answer(stdout, "ok", native.parse_to_proto(payload.decode("utf-8")))
            elif command == "read":  # a module given as a proto: XLA's reading of it is its verdict
                native.read_proto(payload)
                _answer(stdout, "ok", b"")
            elif command == "print":
                _answer(stdout, "ok", native.print_proto(payload).encode())
            elif command == "compile":  # pieces of a long Penguin program (pipeline.verifier.program)
                _answer(stdout, *_compile(payload))
            elif command == "run":  # XLA:CPU's numbers (pipeline.xla.isolated.cpu_outputs): compiled once per module
                status, answer = _run(payload)
                _answer(stdout, status, answer)
                if status == "broken":  # a C extension failed without saying why: no later answer can be trusted
                    return
            elif command == "compiles":
                _answer(stdout, "ok", str(native.compiles()).encode())
            elif command == "import":
                try:
                    _answer(stdout, "ok", native.hlo_to_stablehlo(payload))
                except Exception as err:  # an ordinary refusal: pass its text on
                    _answer(stdout, "failed", str(err).encode())
            else:
                _answer(stdout, "failed", f"unknown command {command!r}".encode())
        except Exception as err:  # the parser's refusal (jaxlib raises its own error type)
            _answer(stdout, "refused", str(err).encode())


def compile_piece(text: str, filename: str, start: int):
    """A piece of a Penguin program that starts at line index `start` of it,
    with the program's line numbers (`pipeline.verifier.program` compiles
    the other pieces)."""
    code = compile(text, filename, "exec")
    return code.replace(co_firstlineno=code.co_firstlineno + start) if start else code


def _compile(payload: bytes) -> tuple[str, bytes]:
    import marshal

    filename, pieces = marshal.loads(payload)
    try:
        return "ok", marshal.dumps([compile_piece(text, filename, start) for start, text in pieces])
    except SyntaxError as err:  # the parent compiles the whole text: its error names the real line
        return "failed", str(err).encode()


def _run(payload: bytes) -> tuple[str, bytes]:
    import pickle

    from pipeline.xla import native

    proto, inputs = pickle.loads(payload)  # from this process's parent: ours, not a user's bytes
    try:
        return "ok", pickle.dumps(native.cpu_outputs(proto, inputs), protocol=pickle.HIGHEST_PROTOCOL)
    except SystemError as err:  # the interpreter's or jax's state in this child, not the module: see `serve`
        import traceback

        traceback.print_exc()
        return "broken", str(err).encode()
    except Exception as err:  # XLA's refusal to compile or run it (jaxlib raises its own error type)
        return "failed", str(err).encode()


def main() -> None:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    sys.stdout.flush()
    os._exit(0)  # nothing left to say: skip jaxlib's teardown (tens of ms)


if __name__ == "__main__":
    main()
