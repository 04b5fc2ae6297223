"""Link #2 and the bridge to XLA: XLA's parser and importer in this process
(`native`, the one module that imports jaxlib's private modules) or in a
child process where XLA may abort (`isolated`; `worker` is the parent's
side of that child, `child` the program it runs), the
importer with its keys (`importer`), the MLIR context, and what differs
between jax releases (`versions`).

Kept free of imports: `hlo2penguin` imports `pipeline.xla.worker` before
anything heavy."""
