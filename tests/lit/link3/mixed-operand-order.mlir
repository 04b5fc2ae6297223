// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s -DDIALECT=stablehlo
// RUN: hlo2penguin-opt %s --pass-pipeline='builtin.module(stablehlo-legalize-to-hlo,flatten-control-dep-tuple-operands)' | filecheck %s -DDIALECT=mhlo
// Pins operand order: plain, tuple, plain, GTE(tuple) and data operands are flattened in operand order, data operand last (docs/link3-contract.md#operand-rewrite-replacetuples).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[A:%[^ ,:)]+]]: tensor<1xf32>, [[B:%[^ ,:)]+]]: tensor<2xf32>, [[C:%[^ ,:)]+]]: tensor<3xf32>, [[E:%[^ ,:)]+]]: tensor<5xf32>, [[F:%[^ ,:)]+]]: tensor<6xf32>, [[G:%[^ ,:)]+]]: tensor<7xf32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
// CHECK: [[CC:%[^ ,:)]+]] = [[DIALECT]].custom_call @AwsNeuronControlDep([[A]], [[B]], [[C]], [[E]], [[F]], [[G]], [[D]]) : (tensor<1xf32>, tensor<2xf32>, tensor<3xf32>, tensor<5xf32>, tensor<6xf32>, tensor<7xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return [[CC]]
// CHECK-NOT: [[DIALECT]].tuple
// CHECK-NOT: [[DIALECT]].get_tuple_element
func.func @main(%a: tensor<1xf32>, %b: tensor<2xf32>, %c: tensor<3xf32>, %e: tensor<5xf32>, %f: tensor<6xf32>, %g: tensor<7xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %t = "stablehlo.tuple"(%b, %c) : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %u = "stablehlo.tuple"(%f, %g) : (tensor<6xf32>, tensor<7xf32>) -> tuple<tensor<6xf32>, tensor<7xf32>>
  %x = "stablehlo.get_tuple_element"(%u) {index = 1 : i32} : (tuple<tensor<6xf32>, tensor<7xf32>>) -> tensor<7xf32>
  %cc = "stablehlo.custom_call"(%a, %t, %e, %x, %d) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<1xf32>, tuple<tensor<2xf32>, tensor<3xf32>>, tensor<5xf32>, tensor<7xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %cc : tensor<4xf32>
}
