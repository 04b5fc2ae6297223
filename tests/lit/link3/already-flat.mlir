// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins the selective pre-filter: a control-dep call without tuple/GTE operands (even a tuple-typed block argument) is not rebuilt and keeps every attribute, which makes a second run a no-op (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[TP:%[^ ,:)]+]]: tuple<tensor<f32>, tensor<i32>>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[C1:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[D]]) {backend_config = "keep-me", has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[C2:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[TP]], [[C1]]) {has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[C2]]
func.func @main(%p0: tensor<f32>, %tp: tuple<tensor<f32>, tensor<i32>>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = "stablehlo.custom_call"(%p0, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true, backend_config = "keep-me"} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = "stablehlo.custom_call"(%tp, %c1) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}
