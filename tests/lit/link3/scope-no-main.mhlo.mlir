// RUN: not hlo2penguin-opt %s --flatten-control-dep-tuple-operands 2>&1 | filecheck %s --check-prefix=ERR
// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands --scope=first | filecheck %s --check-prefix=FIRST
// Pins the default scope's error: without a function named main the pass fails with one line naming the functions and the way out, not a traceback (docs/link3-contract.md#scope-which-functions-are-walked; docs/bad-input.md#bad-input).

// ERR-NOT: Traceback
// ERR: hlo2penguin-opt: error: flatten-control-dep-tuple-operands: the module has no function named 'main' (functions: helper, other); use scope=first or scope=all
// ERR-NOT: Traceback

// FIRST-LABEL: func.func private @helper
// FIRST-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// FIRST-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// FIRST-LABEL: func.func private @other
// FIRST-NEXT: mhlo.tuple
func.func private @helper(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}

func.func private @other(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
