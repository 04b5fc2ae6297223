// RUN: hlo2penguin-opt %s --flatten-control-dep-tuple-operands | filecheck %s
// Pins the pre-order walk over nested regions: control-dep calls inside a while body, an if branch and an mhlo.fusion region are flattened in place (docs/link3-contract.md#walk-filter-which-calls-are-rebuilt).

// CHECK-LABEL: func.func @main
// CHECK-SAME: ([[I:%[^ ,:)]+]]: tensor<i32>, [[D:%[^ ,:)]+]]: tensor<4xf32>)
// CHECK: [[W:%[^ :]+]]:2 = mhlo.while([[BI:%[^ ,:)]+]] = [[I]], [[BD:%[^ ,:)]+]] = [[D]])
// CHECK: } do {
// CHECK-NEXT: [[ONE:%[^ ,:)]+]] = mhlo.constant dense<1>
// CHECK-NEXT: [[N:%[^ ,:)]+]] = mhlo.add [[BI]], [[ONE]]
// CHECK-NEXT: [[BC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[BI]], [[N]], [[BD]]) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: mhlo.return [[N]], [[BC]]
// CHECK: [[F:%[^ ,:)]+]] = "mhlo.fusion"
// CHECK-NEXT: ^bb0([[FI:%[^ ,:)]+]]: tensor<i32>, [[FD:%[^ ,:)]+]]: tensor<4xf32>):
// CHECK-NEXT: [[FC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[FI]], [[FI]], [[FD]]) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: mhlo.return [[FC]]
// CHECK: "mhlo.if"
// CHECK-NEXT: [[IC:%[^ ,:)]+]] = mhlo.custom_call @AwsNeuronControlDep([[I]], [[W]]#0, [[F]]) : (tensor<i32>, tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: mhlo.return [[IC]]
// CHECK-NOT: mhlo.tuple
// CHECK-NOT: mhlo.get_tuple_element
func.func @main(%i: tensor<i32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %w:2 = "mhlo.while"(%i, %d) ({
  ^bb0(%ci: tensor<i32>, %cd: tensor<4xf32>):
    %lim = "mhlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %p = "mhlo.compare"(%ci, %lim) {comparison_direction = #mhlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "mhlo.return"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%bi: tensor<i32>, %bd: tensor<4xf32>):
    %one = "mhlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %n = "mhlo.add"(%bi, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %t = "mhlo.tuple"(%bi, %n) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
    %bc = "mhlo.custom_call"(%t, %bd) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<i32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
    "mhlo.return"(%n, %bc) : (tensor<i32>, tensor<4xf32>) -> ()
  }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
  %f = "mhlo.fusion"(%i, %w#1) ({
  ^bb0(%fi: tensor<i32>, %fd: tensor<4xf32>):
    %ft = "mhlo.tuple"(%fi, %fi) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
    %fc = "mhlo.custom_call"(%ft, %fd) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tuple<tensor<i32>, tensor<i32>>, tensor<4xf32>) -> tensor<4xf32>
    "mhlo.return"(%fc) : (tensor<4xf32>) -> ()
  }) {fusion_kind = #mhlo<fusion_kind kLoop>} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
  %br = "mhlo.compare"(%i, %i) {comparison_direction = #mhlo<comparison_direction EQ>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "mhlo.if"(%br) ({
    %t2 = "mhlo.tuple"(%i, %w#0) : (tensor<i32>, tensor<i32>) -> tuple<tensor<i32>, tensor<i32>>
    %g2 = "mhlo.get_tuple_element"(%t2) {index = 1 : i32} : (tuple<tensor<i32>, tensor<i32>>) -> tensor<i32>
    %ic = "mhlo.custom_call"(%g2, %f) {call_target_name = "AwsNeuronControlDep", has_side_effect = true} : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
    "mhlo.return"(%ic) : (tensor<4xf32>) -> ()
  }, {
    "mhlo.return"(%d) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
