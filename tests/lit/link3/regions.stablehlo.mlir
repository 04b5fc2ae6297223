// RUN: hlo2penguin-opt %s --stablehlo-flatten-control-dep-tuple-operands | filecheck %s
// Pins the pre-order walk over nested regions: control-dep calls inside a while body and an if branch are flattened in place (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[I:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK: [[W:%[^ :]+]]:2 = stablehlo.while([[BI:%[^ ,:)]+]] = [[I]], [[BD:%[^ ,:)]+]] = [[D]])
// CHECK: } do {
// CHECK-NEXT: [[ONE:%[^ ,:)]+]] = stablehlo.constant dense<1>
// CHECK-NEXT: [[N:%[^ ,:)]+]] = stablehlo.add [[BI]], [[ONE]]
// CHECK-NEXT: [[BC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[BI]], [[N]], [[BD]]) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.return [[N]], [[BC]]
// CHECK: "stablehlo.if"
// CHECK-NEXT: [[IC:%[^ ,:)]+]] = stablehlo.custom_call @AwsNeuronControlDep([[I]], [[W]]#0, [[W]]#1) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: stablehlo.return [[IC]]
// CHECK-NOT: stablehlo.tuple
// CHECK-NOT: stablehlo.get_tuple_element
func.func @main(%i: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %w:2 = "stablehlo.while"(%i, %d) ({
  ^bb0(%ci: tensor<i32>, %cd: tensor<4xf32>):
    %lim = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %p = "stablehlo.compare"(%ci, %lim) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%bi: tensor<i32>, %bd: tensor<4xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %n = "stablehlo.add"(%bi, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t = "stablehlo.tuple"(%bi, %n) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
    %bc = "stablehlo.custom_call"(%t, %bd) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<i32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%n, %bc) : (tensor<i32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  %br = "stablehlo.compare"(%i, %i) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "stablehlo.if"(%br) ({
    %t2 = "stablehlo.tuple"(%i, %w#0) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
    %g2 = "stablehlo.get_tuple_element"(%t2) {index = 1 : i32} : (tuple<tensor<i32>, tensor<i32>>) -> tensor<i32>
    %ic = "stablehlo.custom_call"(%g2, %w#1) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
    "stablehlo.return"(%ic) : (tensor<4xf32>) -> ()
  }, {
    "stablehlo.return"(%d) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
