// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(hlo-legalize-to-stablehlo,stablehlo-flatten-control-dep-tuple-operands,canonicalize)' | filecheck %s
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(hlo-legalize-to-stablehlo,stablehlo-flatten-control-dep-tuple-operands{keep-attributes=true},canonicalize)' | filecheck %s --check-prefix=KEEP
// Pins pipeline composition: a registered pass (hlo-legalize-to-stablehlo), our STABLEHLO twin, then canonicalize; canonicalize drops the dead add AND the unused rebuilt call, which lost has_side_effect (its edges vanish; keep-attributes keeps it) (docs/link3-contract.md#where-the-pass-sits, docs/link3-contract.md#rebuilt-call).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: mhlo.
// CHECK-NOT: stablehlo.tuple

// KEEP-LABEL: func.func @main
// KEEP-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// KEEP-NEXT: [[CC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) {has_side_effect = true} : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// KEEP-NEXT: [[UNUSED:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[P1]], [[P0]], [[CC]]) {has_side_effect = true} : (tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// KEEP-NEXT: return [[CC]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %dead = "mhlo.add"(%p1, %p1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %u = "mhlo.tuple"(%p1, %p0) : (tensor<i32>, tensor<f32>) -> tuple<tensor<i32>, tensor<f32>>
  %unused = "mhlo.custom_call"(%u, %cc) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<i32>, tensor<f32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
