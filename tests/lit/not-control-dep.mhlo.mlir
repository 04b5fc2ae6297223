// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands | filecheck %s
// Pins the recognizer gate: custom calls whose target is not exactly AwsNeuronControlDep keep their tuple operands and attributes (docs/link3-contract.md#recognizer-what-a-control-dep-call-is).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[T:%[^ ,:)]+]] = mhlo.tuple [[P0]], [[P1]] : tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: [[G:%[^ ,:)]+]] = mhlo.get_tuple_element [[T]][0] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
// CHECK-NEXT: [[C1:%[^ ,:)]+]] = mhlo.custom_call @SomethingElse([[T]], [[D]]) {has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[C2:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDepX([[G]], [[C1]]) {has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[C2]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %g = "mhlo.get_tuple_element"(%t) {index = 0 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  %c1 = "mhlo.custom_call"(%t, %d) {call_target_name = "SomethingElse", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = "mhlo.custom_call"(%g, %c1) {call_target_name = "AwsNeuronControlDepX", has_side_effect = true} : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}
