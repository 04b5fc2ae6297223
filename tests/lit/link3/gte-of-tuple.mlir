// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins operand rewrite: get_tuple_element(tuple(...)) becomes ALL the tuple's elements, not only the indexed one; GTE and tuple are erased (docs/link3-contract.md#operand-rewrite-replacetuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[P2:%[^ ,:)]+]]: tensor<2xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
// CHECK: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[P2]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %p2: tensor<2xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1, %p2) : (tensor<f32>, tensor<i32>, tensor<2xf32>) -> tuple<tensor<f32>, tensor<i32>, tensor<2xf32>>
  %g = "stablehlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<f32>, tensor<i32>, tensor<2xf32>>) -> tensor<i32>
  %cc = "stablehlo.custom_call"(%g, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
