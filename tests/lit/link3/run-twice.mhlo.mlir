// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands > %t.once
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(flatten-control-dep-tuple-operands,flatten-control-dep-tuple-operands)' > %t.twice
// RUN: diff %t.once %t.twice
// RUN: filecheck %s --input-file %t.twice
// Pins idempotence: running the pass twice gives the same module as once; the already-flat call keeps its attributes across both runs (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[FLAT:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[D]]) {backend_config = "keep-me", has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[FLAT]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: mhlo.tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %flat = "mhlo.custom_call"(%p0, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true, backend_config = "keep-me"} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %flat) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
