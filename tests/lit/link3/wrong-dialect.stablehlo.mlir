// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(flatten-control-dep-tuple-operands)' | filecheck %s
// RUN: not hlo2penguin-opt %s --flatten-control-dep-tuple-operands 2>&1 | filecheck %s --check-prefix=FLAG
// Pins the twinning: the mhlo pass leaves a stablehlo module untouched; each twin matches only its own dialect's ops (docs/link3-contract.md#mhlo-and-stablehlo-twins).
// As a flag, the wrong twin is a usage error that names the right one (it would change nothing, silently).
// FLAG: hlo2penguin-opt: error: --flatten-control-dep-tuple-operands flattens mhlo.custom_call @AwsNeuronControlDep calls, and the module has none (it has 1 stablehlo.custom_call ones): use --stablehlo-flatten-control-dep-tuple-operands

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[T:%[^ ,:)]+]] = stablehlo.tuple [[P0]], [[P1]] : tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[T]], [[D]]) {has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "stablehlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
