// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins the data-operand divergence: only the predecessors (all operands but the last) are unpacked; a tuple or GTE data operand D stays as is, and a call whose only tuple-ish operand is D is not rebuilt (docs/link3-contract.md#the-data-operand-is-never-unpacked; the binary's replaceTuples loop covers every operand).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[P0:%[^ ,:)]+]]: tensor<f32>, [[P1:%[^ ,:)]+]]: tensor<i32>, [[X:%[^ ,:)]+]]: tensor<2xf32>, [[Y:%[^ ,:)]+]]: tensor<3xf32>)
// CHECK-NEXT: [[DT:%[^ ,:)]+]] = [[DIALECT]].tuple [[X]], [[Y]] : tuple<tensor<2xf32>, tensor<3xf32>>
// CHECK-NEXT: [[C1:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[P1]], [[DT]]) : (tensor<f32>, tensor<i32>, tuple<tensor<2xf32>, tensor<3xf32>>) -> tuple<tensor<2xf32>, tensor<3xf32>>
// CHECK-NEXT: [[G:%[^ ,:)]+]] = [[DIALECT]].get_tuple_element [[C1]][1] : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<3xf32>
// CHECK-NEXT: [[C2:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[P0]], [[G]]) {has_side_effect = true} : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: return [[C2]]
func.func @main(%p0: tensor<f32>, %p1: tensor<i32>, %x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %t = "stablehlo.tuple"(%p0, %p1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  %dt = "stablehlo.tuple"(%x, %y) : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %c1 = "stablehlo.custom_call"(%t, %dt) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<f32>, tensor<i32>>, tuple<tensor<2xf32>, tensor<3xf32>>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %g = "stablehlo.get_tuple_element"(%c1) {index = 1 : i32} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %c2 = "stablehlo.custom_call"(%p0, %g) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  return %c2 : tensor<3xf32>
}
