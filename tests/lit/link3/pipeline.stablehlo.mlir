// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands,canonicalize)' | filecheck %s
// Pins pipeline composition: a registered pass (stablehlo-legalize-to-hlo), our MHLO twin, then canonicalize; canonicalize drops the dead add but keeps both rebuilt calls, even the unused one that lost has_side_effect (docs/link3-contract.md#where-the-pass-sits, docs/link3-contract.md#rebuilt-call).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[UNUSED:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P1]], [[P0]], [[CC]]) : (tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: stablehlo.
// CHECK-NOT: mhlo.tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %dead = "stablehlo.add"(%p1, %p1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "stablehlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %u = "stablehlo.tuple"(%p1, %p0) : (tensor<i32>, tensor<f32>) -> tuple<tensor<i32>, tensor<f32>>
  %unused = "stablehlo.custom_call"(%u, %cc) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<i32>, tensor<f32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
