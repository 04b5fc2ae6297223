// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands | filecheck %s --check-prefix=MAIN
// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands --scope=first | filecheck %s --check-prefix=FIRST
// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands --scope=all | filecheck %s --check-prefix=ALL
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(flatten-control-dep-tuple-operands{scope=all})' | filecheck %s --check-prefix=ALL
// Pins the scope divergence on a module whose first function is not main: default main, first (the binary's getMainFunction), all (docs/link3-contract.md#scope-which-functions-are-walked, docs/link3-contract.md#scope-defaults-to-main-not-the-first-function).

// MAIN-LABEL: func.func private @helper
// MAIN-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// MAIN-NEXT: [[T:%[^ ,:)]+]] = mhlo.tuple [[P0]], [[P1]]
// MAIN-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[T]], [[D]]) {has_side_effect = true}
// MAIN-NEXT: return [[CC]]

// MAIN-LABEL: func.func @main
// MAIN-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// MAIN-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// MAIN-NEXT: return [[CC]]

// MAIN-LABEL: func.func private @tail
// MAIN-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// MAIN-NEXT: [[T:%[^ ,:)]+]] = mhlo.tuple [[P0]], [[P1]]
// MAIN-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[T]], [[D]]) {has_side_effect = true}
// MAIN-NEXT: return [[CC]]

// FIRST-LABEL: func.func private @helper
// FIRST-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// FIRST-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// FIRST-NEXT: return [[CC]]

// FIRST-LABEL: func.func @main
// FIRST-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// FIRST-NEXT: [[T:%[^ ,:)]+]] = mhlo.tuple [[P0]], [[P1]]
// FIRST-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[T]], [[D]]) {has_side_effect = true}
// FIRST-NEXT: return [[CC]]

// FIRST-LABEL: func.func private @tail
// FIRST-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// FIRST-NEXT: [[T:%[^ ,:)]+]] = mhlo.tuple [[P0]], [[P1]]
// FIRST-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[T]], [[D]]) {has_side_effect = true}
// FIRST-NEXT: return [[CC]]

// ALL-LABEL: func.func private @helper
// ALL-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// ALL-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// ALL-NEXT: return [[CC]]

// ALL-LABEL: func.func @main
// ALL-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// ALL-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// ALL-NEXT: return [[CC]]

// ALL-LABEL: func.func private @tail
// ALL-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// ALL-NEXT: [[CC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[D]]) : (tensor<f32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// ALL-NEXT: return [[CC]]

func.func private @helper(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}

func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}

func.func private @tail(%p0: tensor<f32>, %p1: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mhlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %cc = "mhlo.custom_call"(%t, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
