"""The passes of the chain: link #1 on HLO (`passes.hlo`) and link #3 on
MLIR (`passes.mlir`), sharing the control-dep constants of `control_dep`."""
