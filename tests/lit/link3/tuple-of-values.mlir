// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins operand rewrite: a tuple operand becomes its elements, in order; the dead tuple is erased (docs/link3-contract.md#operand-rewrite-replacetuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].tuple
// CHECK: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[R:%[^ ,:)]+]] = [[DIALECT]].add [[CC]], [[CC]]
// CHECK-NEXT: return [[R]]
// CHECK-NOT: [[DIALECT]].tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "stablehlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %r = "stablehlo.add"(%cc, %cc) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
