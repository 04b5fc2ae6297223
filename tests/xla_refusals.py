"""The modules of tests/pipeline_dumps/ that XLA refuses, whatever link #1 does, with XLA's words."""

# Refused by XLA's importer whatever link #1 does (the tests check that
# without link #1 the refusal is the same): the message after `path: `.
REFUSED = {
    # An async-wrapped cuBLAS gemm returns its (result, workspace) tuple:
    # the importer writes an async_done whose tuple type its verifier refuses.
    "gpu_async_gemm_tuple.hlo":
        "link #2 (XLA's importer) produced a module that does not verify: %custom-call.7 in %main.12: "
        "'mhlo.async_done' op inferred type(s) 'tensor<64x64xf32>', 'tensor<65536xi8>' are incompatible "
        "with return type(s) of operation 'tuple<tensor<64x64xf32>, tensor<65536xi8>>'",
    # The all-reduce combiner's output: one all-reduce-start over two arrays.
    "gpu_combined_all_reduce.hlo":
        "link #2 (XLA's importer): INVALID_ARGUMENT: Async tuple all-reduce is not supported in StableHLO",
    # A pipelined P2P loop: the recv context crosses the loop boundary, so a
    # recv-done reads a get-tuple-element, which XLA's parser accepts and its
    # proto reader does not: link #1 edits that proto, the importer reads it.
    "gpu_pipelined_p2p_loop.hlo":
        "XLA's parser reads the text, but XLA refuses its own proto of it (the form link #1 edits and "
        "link #2 imports): INTERNAL: RET_CHECK failure (hlo_instruction.cc) "
        "DynCast<HloRecvInstruction>(operands(0)) != nullptr RecvDone must take the context operand from Recv",
}
