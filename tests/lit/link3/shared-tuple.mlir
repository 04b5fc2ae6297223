// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins clean-up "each op once": a tuple and a GTE shared by two control-dep calls; both calls are rewritten, each bypassed op erased exactly once (docs/link3-contract.md#clean-up).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[P2:%[^ ,:)]+]]: tensor<2xf32>, [[P3:%[^ ,:)]+]]: tensor<3xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
// CHECK: [[C1:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[P2]], [[P3]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[C2:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P2]], [[P3]], [[P0]], [[P1]], [[C1]]) : (tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[C2]]
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %p2: tensor<2xf32>, %p3: tensor<3xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %u = "stablehlo.tuple"(%p2, %p3) : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %g = "stablehlo.get_tuple_element"(%u) {index = 0 : i32} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<2xf32>
  %c1 = "stablehlo.custom_call"(%t, %g, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c2 = "stablehlo.custom_call"(%g, %t, %c1) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<2xf32>, tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %c2 : tensor<4xf32>
}
