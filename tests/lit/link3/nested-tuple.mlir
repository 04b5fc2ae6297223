// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins operand rewrite "one level": tuple(tuple(a, b), c) becomes (tuple(a, b), c); the inner tuple survives as an operand, the outer is erased (docs/link3-contract.md#one-level-per-run-or-until-unchanged).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[P2:%[^ ,:)]+]]: tensor<2xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NEXT: [[IN:%[^ ,:)]+]] = [[DIALECT]].tuple [[P0]], [[P1]] : tuple<tensor<f32>, tensor<i32>>
// CHECK-NOT: [[DIALECT]].tuple
// CHECK: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[IN]], [[P2]], [[D]]) : (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: [[DIALECT]].tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %p2: tensor<2xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %in = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %out = "stablehlo.tuple"(%in, %p2) : (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>) -> tuple<tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>>
  %cc = "stablehlo.custom_call"(%out, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
