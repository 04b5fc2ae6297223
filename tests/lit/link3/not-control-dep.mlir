// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins the recognizer gate: custom calls whose target is not exactly AwsNeuronControlDep keep their tuple operands and attributes (docs/link3-contract.md#recognizer-what-a-control-dep-call-is).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[T:%[^ ,:)]+]] = [[DIALECT]].tuple [[P0]], [[P1]] : tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: [[G:%[^ ,:)]+]] = [[DIALECT]].get_tuple_element [[T]][0] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
// CHECK-NEXT: [[C1:%[^ ,:)]+]] = [[DIALECT]].custom_call @SomethingElse([[T]], [[D]]) {has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[C2:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDepX([[G]], [[C1]]) {has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[C2]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %g = "stablehlo.get_tuple_element"(%t) {index = 0 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  %c1 = "stablehlo.custom_call"(%t, %d) {call_target_name = "SomethingElse", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = "stablehlo.custom_call"(%g, %c1) {call_target_name = "AwsNeuronControlDepX", has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}
