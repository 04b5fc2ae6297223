// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins operand rewrite: get_tuple_element(x), x not a tuple op, becomes EVERY result of x (here a one-result and a two-result custom_call; a while cannot carry a tuple) (docs/link3-contract.md#operand-rewrite-replacetuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[X:%[^ ,:)]+]]: tensor<f32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].get_tuple_element
// CHECK: [[S:%[^ ,:)]+]] = [[DIALECT]].custom_call @single([[X]]) : (tensor<f32>) -> tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: [[M:%[^ :]+]]:2 = [[DIALECT]].custom_call @pair([[X]]) : (tensor<f32>) -> (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>)
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[S]], [[M]]#0, [[M]]#1, [[D]]) : (tuple<tensor<f32>, tensor<i32>>, tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: [[DIALECT]].get_tuple_element
func.func @main(%x: tensor<f32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %s = "stablehlo.custom_call"(%x) {call_target_name = "single"} : (tensor<f32>) -> tuple<tensor<f32>, tensor<i32>>
  %m:2 = "stablehlo.custom_call"(%x) {call_target_name = "pair"} : (tensor<f32>) -> (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>)
  %g0 = "stablehlo.get_tuple_element"(%s) {index = 1 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
  %g1 = "stablehlo.get_tuple_element"(%m#0) {index = 0 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  %cc = "stablehlo.custom_call"(%g0, %g1, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
