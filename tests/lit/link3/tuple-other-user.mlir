// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins clean-up "only once nothing uses it": a tuple and a GTE that other ops still read survive the rewrite (docs/link3-contract.md#clean-up).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[P2:%[^ ,:)]+]]: tensor<2xf32>, [[P3:%[^ ,:)]+]]: tensor<3xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[T:%[^ ,:)]+]] = [[DIALECT]].tuple [[P0]], [[P1]] : tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: [[U:%[^ ,:)]+]] = [[DIALECT]].tuple [[P2]], [[P3]] : tuple<tensor<2xf32>, tensor<3xf32>>
// CHECK-NEXT: [[G:%[^ ,:)]+]] = [[DIALECT]].get_tuple_element [[U]][0] : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<2xf32>
// CHECK-NEXT: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[P2]], [[P3]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[O:%[^ ,:)]+]] = [[DIALECT]].custom_call @consumer([[T]]) : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
// CHECK-NEXT: [[S:%[^ ,:)]+]] = [[DIALECT]].add [[G]], [[G]] : tensor<2xf32>
// CHECK-NEXT: return [[CC]], [[O]], [[S]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %p2: tensor<2xf32>, %p3: tensor<3xf32>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<2xf32>) {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %u = "stablehlo.tuple"(%p2, %p3) : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %g = "stablehlo.get_tuple_element"(%u) {index = 0 : i32} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<2xf32>
  %cc = "stablehlo.custom_call"(%t, %g, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
  %o = "stablehlo.custom_call"(%t) {call_target_name = "consumer"} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  %s = "stablehlo.add"(%g, %g) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %cc, %o, %s : tensor<4xf32>, tensor<f32>, tensor<2xf32>
}
