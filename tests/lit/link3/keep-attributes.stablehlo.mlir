// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s --check-prefix=DROP
// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands --keep-attributes | filecheck %s --check-prefix=KEEP
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-flatten-control-dep-tuple-operands{keep-attributes=true})' | filecheck %s --check-prefix=KEEP
// Pins the rebuild's attributes: by default only call_target_name (no has_side_effect, no backend_config), as the binary; --keep-attributes keeps them all (docs/link3-contract.md#rebuilt-call).

// DROP-LABEL: func.func @main
// DROP-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// DROP-NEXT: [[CC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// DROP-NOT: has_side_effect
// DROP-NOT: backend_config

// KEEP-LABEL: func.func @main
// KEEP-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// KEEP-NEXT: [[CC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) {backend_config = "cfg", has_side_effect = true} : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// KEEP-NEXT: return [[CC]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "stablehlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true, backend_config = "cfg"} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
