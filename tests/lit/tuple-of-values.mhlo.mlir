// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands | filecheck %s
// Pins operand rewrite: a tuple operand becomes its elements, in order; the dead tuple is erased (docs/link3-contract.md#operand-rewrite-replacetuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: mhlo.tuple
// CHECK: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: [[R:%[^ ,:)]+]] = mhlo.add [[CC]], [[CC]]
// CHECK-NEXT: return [[R]]
// CHECK-NOT: mhlo.tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  %r = "mhlo.add"(%cc, %cc) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
