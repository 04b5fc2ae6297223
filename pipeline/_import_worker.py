"""Runs XLA's importer in a child process: serialized HLO proto on stdin,
StableHLO bytecode on stdout. XLA can abort the process it runs in
("LLVM ERROR: Failed to infer result type(s)"); here that kills only this child."""

import sys


def main() -> int:
    import jaxlib._jax as xla_ext

    proto = sys.stdin.buffer.read()
    try:
        bytecode = xla_ext.mlir.hlo_to_stablehlo(proto)
    except Exception as err:  # an ordinary refusal: pass its text on
        sys.stderr.write(str(err))
        return 3
    sys.stdout.buffer.write(bytecode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
