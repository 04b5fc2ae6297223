// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands --until-unchanged | filecheck %s
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(flatten-control-dep-tuple-operands{until-unchanged=true})' | filecheck %s
// Pins the until-unchanged option (what pipeline.run does): tuple(tuple(a, b), c) comes apart to (a, b, c) in one invocation, and both tuples are erased (one level per run, as nested-tuple.mhlo.mlir pins, repeated until nothing changes).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[P2:%[^ ,:)]+]]: tensor<2xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: mhlo.tuple
// CHECK: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[P2]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<2xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: mhlo.tuple
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %p2: tensor<2xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %in = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %out = "mhlo.tuple"(%in, %p2) : (tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>) -> tuple<tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>>
  %cc = "mhlo.custom_call"(%out, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tuple<tensor<f32>, tensor<i32>>, tensor<2xf32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
