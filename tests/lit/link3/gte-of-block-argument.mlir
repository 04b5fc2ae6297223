// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins the GTE-of-block-argument divergence: with no defining op the tuple argument itself is passed through and the GTE erased (docs/link3-contract.md#a-get_tuple_element-of-a-block-argument; the binary would dereference a null op in replaceTuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[TP:%[^ ,:)]+]]: tuple<tensor<f32>, tensor<i32>>, [[X:%[^ ,:)]+]]: tensor<f32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].get_tuple_element
// CHECK: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[X]], [[TP]], [[D]]) : (tensor<f32>, tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: [[DIALECT]].get_tuple_element
func.func @main(%tp: tuple<tensor<f32>, tensor<i32>>, %x: tensor<f32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %g = "stablehlo.get_tuple_element"(%tp) {index = 1 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
  %cc = "stablehlo.custom_call"(%x, %g, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
