module @jit_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg5: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg6: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg7: tensor<4x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg8: tensor<4x16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<64x32xf32> {jax.result_info = "result[1]['emb']"}, tensor<32xf32> {jax.result_info = "result[1]['ln1']"}, tensor<32xf32> {jax.result_info = "result[1]['ln2']"}, tensor<32x128xf32> {jax.result_info = "result[1]['w1']"}, tensor<128x32xf32> {jax.result_info = "result[1]['w2']"}, tensor<32x32xf32> {jax.result_info = "result[1]['wo']"}, tensor<32x96xf32> {jax.result_info = "result[1]['wqkv']"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x16xi32>
    %1 = stablehlo.compare LT, %arg7, %0, SIGNED : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x16xi32>
    %3 = stablehlo.add %arg7, %2 : tensor<4x16xi32>
    %4 = stablehlo.select %1, %3, %arg7 : tensor<4x16xi1>, tensor<4x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x16xi32>) -> tensor<4x16x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<4x16x1xi32>) -> tensor<4x16x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_1 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<4x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %12 = stablehlo.subtract %6, %11 : tensor<4x16x32xf32>
    %13 = stablehlo.multiply %12, %12 : tensor<4x16x32xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x16x32xf32>
    %15 = stablehlo.multiply %14, %12 : tensor<4x16x32xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%13 init: %cst_3) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_4 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %19 = stablehlo.divide %17, %18 : tensor<4x16x1xf32>
    %20 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %21 = stablehlo.subtract %6, %20 : tensor<4x16x32xf32>
    %cst_5 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %23 = stablehlo.add %19, %22 : tensor<4x16x1xf32>
    %24 = stablehlo.rsqrt %23 : tensor<4x16x1xf32>
    %25 = stablehlo.divide %24, %23 : tensor<4x16x1xf32>
    %cst_6 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %27 = stablehlo.multiply %26, %25 : tensor<4x16x1xf32>
    %28 = stablehlo.broadcast_in_dim %24, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %29 = stablehlo.multiply %21, %28 : tensor<4x16x32xf32>
    %30 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<4x16x32xf32>
    %32 = stablehlo.multiply %29, %31 : tensor<4x16x32xf32>
    %33 = stablehlo.dot_general %32, %arg6, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x96xf32>) -> tensor<4x16x96xf32>
    %34 = stablehlo.slice %33 [0:4, 0:16, 0:32] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %35 = stablehlo.slice %33 [0:4, 0:16, 32:64] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %36 = stablehlo.slice %33 [0:4, 0:16, 64:96] : (tensor<4x16x96xf32>) -> tensor<4x16x32xf32>
    %37 = stablehlo.reshape %34 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %38 = stablehlo.transpose %37, dims = [0, 2, 1, 3] : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %39 = stablehlo.reshape %35 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %40 = stablehlo.transpose %39, dims = [0, 2, 1, 3] : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %41 = stablehlo.reshape %36 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %42 = stablehlo.transpose %41, dims = [0, 2, 1, 3] : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %43 = stablehlo.dot_general %38, %40, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x8xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x16xf32>
    %cst_7 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %44 = stablehlo.sqrt %cst_7 : tensor<f32>
    %45 = stablehlo.convert %44 : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %47 = stablehlo.divide %43, %46 : tensor<4x4x16x16xf32>
    %c_8 = stablehlo.constant dense<true> : tensor<i1>
    %48 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %49 = call @tril(%48) : (tensor<16x16xi1>) -> tensor<16x16xi1>
    %cst_9 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %50:2 = call @_where(%49, %47, %cst_9) : (tensor<16x16xi1>, tensor<4x4x16x16xf32>, tensor<f32>) -> (tensor<4x4x16x16xf32>, tensor<4x4x16x16xi1>)
    %cst_10 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %51 = stablehlo.reduce(%50#0 init: %cst_10) applies stablehlo.maximum across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %cst_11 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<4x4x16xf32>
    %53 = stablehlo.maximum %52, %51 : tensor<4x4x16xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %56 = stablehlo.subtract %50#0, %55 : tensor<4x4x16x16xf32>
    %57 = stablehlo.exponential %56 : tensor<4x4x16x16xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %58 = stablehlo.reduce(%57 init: %cst_12) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %60 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %61 = stablehlo.divide %57, %60 : tensor<4x4x16x16xf32>
    %62 = stablehlo.multiply %59, %59 : tensor<4x4x16x1xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<4x4x16x1xf32>
    %64 = stablehlo.divide %63, %62 : tensor<4x4x16x1xf32>
    %65 = stablehlo.dot_general %61, %42, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x16xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x8xf32>
    %66 = stablehlo.transpose %65, dims = [0, 2, 1, 3] : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %67 = stablehlo.reshape %66 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %68 = stablehlo.dot_general %67, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %69 = stablehlo.add %6, %68 : tensor<4x16x32xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.reduce(%69 init: %cst_14) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_15 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %73 = stablehlo.divide %71, %72 : tensor<4x16x1xf32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %75 = stablehlo.subtract %69, %74 : tensor<4x16x32xf32>
    %76 = stablehlo.multiply %75, %75 : tensor<4x16x32xf32>
    %cst_16 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<4x16x32xf32>
    %78 = stablehlo.multiply %77, %75 : tensor<4x16x32xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.reduce(%76 init: %cst_17) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_18 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %82 = stablehlo.divide %80, %81 : tensor<4x16x1xf32>
    %83 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %84 = stablehlo.subtract %69, %83 : tensor<4x16x32xf32>
    %cst_19 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %86 = stablehlo.add %82, %85 : tensor<4x16x1xf32>
    %87 = stablehlo.rsqrt %86 : tensor<4x16x1xf32>
    %88 = stablehlo.divide %87, %86 : tensor<4x16x1xf32>
    %cst_20 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %89 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %90 = stablehlo.multiply %89, %88 : tensor<4x16x1xf32>
    %91 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %92 = stablehlo.multiply %84, %91 : tensor<4x16x32xf32>
    %93 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %94 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<4x16x32xf32>
    %95 = stablehlo.multiply %92, %94 : tensor<4x16x32xf32>
    %96 = stablehlo.dot_general %95, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x128xf32>) -> tensor<4x16x128xf32>
    %97 = stablehlo.multiply %96, %96 : tensor<4x16x128xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<4x16x128xf32>
    %99 = stablehlo.multiply %96, %96 : tensor<4x16x128xf32>
    %cst_21 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<4x16x128xf32>
    %cst_22 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %102 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %103 = stablehlo.multiply %102, %98 : tensor<4x16x128xf32>
    %104 = stablehlo.add %96, %103 : tensor<4x16x128xf32>
    %cst_23 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<4x16x128xf32>
    %107 = stablehlo.tanh %106 : tensor<4x16x128xf32>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %109 = stablehlo.subtract %108, %107 : tensor<4x16x128xf32>
    %cst_25 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %110 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %111 = stablehlo.add %110, %107 : tensor<4x16x128xf32>
    %cst_26 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %113 = stablehlo.multiply %112, %111 : tensor<4x16x128xf32>
    %114 = stablehlo.multiply %96, %113 : tensor<4x16x128xf32>
    %115 = stablehlo.dot_general %114, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x128xf32>, tensor<128x32xf32>) -> tensor<4x16x32xf32>
    %116 = stablehlo.add %69, %115 : tensor<4x16x32xf32>
    %117 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %118 = stablehlo.dot_general %116, %117, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x64xf32>) -> tensor<4x16x64xf32>
    %119:3 = call @log_softmax(%118) : (tensor<4x16x64xf32>) -> (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x1xf32>)
    %120 = stablehlo.broadcast_in_dim %arg8, dims = [0, 1] : (tensor<4x16xi32>) -> tensor<4x16x1xi32>
    %121:2 = call @take_along_axis(%119#0, %120) : (tensor<4x16x64xf32>, tensor<4x16x1xi32>) -> (tensor<4x16x1xf32>, tensor<4x16x1x1xi32>)
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %122 = stablehlo.reduce(%121#0 init: %cst_27) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_28 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %123 = stablehlo.divide %122, %cst_28 : tensor<f32>
    %124 = stablehlo.negate %123 : tensor<f32>
    %cst_29 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %125 = stablehlo.negate %cst_29 : tensor<f32>
    %cst_30 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %126 = stablehlo.divide %125, %cst_30 : tensor<f32>
    %127 = stablehlo.broadcast_in_dim %126, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %128 = call @take_along_axis_0(%121#1, %127) : (tensor<4x16x1x1xi32>, tensor<4x16x1xf32>) -> tensor<4x16x64xf32>
    %129 = call @log_softmax_1(%119#1, %119#2, %128) : (tensor<4x16x64xf32>, tensor<4x16x1xf32>, tensor<4x16x64xf32>) -> tensor<4x16x64xf32>
    %130 = stablehlo.dot_general %129, %116, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x64xf32>, tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %131 = stablehlo.transpose %130, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %132 = stablehlo.dot_general %129, %117, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x64xf32>, tensor<32x64xf32>) -> tensor<4x16x32xf32>
    %133 = stablehlo.transpose %131, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %134 = stablehlo.dot_general %132, %114, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<4x16x128xf32>) -> tensor<32x128xf32>
    %135 = stablehlo.transpose %134, dims = [1, 0] : (tensor<32x128xf32>) -> tensor<128x32xf32>
    %136 = stablehlo.dot_general %132, %arg4, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<128x32xf32>) -> tensor<4x16x128xf32>
    %137 = stablehlo.multiply %96, %136 : tensor<4x16x128xf32>
    %138 = stablehlo.multiply %136, %113 : tensor<4x16x128xf32>
    %cst_31 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %140 = stablehlo.multiply %139, %137 : tensor<4x16x128xf32>
    %141 = stablehlo.multiply %140, %109 : tensor<4x16x128xf32>
    %142 = stablehlo.multiply %141, %107 : tensor<4x16x128xf32>
    %143 = stablehlo.add %141, %142 : tensor<4x16x128xf32>
    %cst_32 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %144 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %145 = stablehlo.multiply %144, %143 : tensor<4x16x128xf32>
    %146 = stablehlo.add %138, %145 : tensor<4x16x128xf32>
    %cst_33 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<4x16x128xf32>
    %148 = stablehlo.multiply %147, %145 : tensor<4x16x128xf32>
    %149 = stablehlo.multiply %148, %101 : tensor<4x16x128xf32>
    %150 = stablehlo.add %146, %149 : tensor<4x16x128xf32>
    %151 = stablehlo.dot_general %150, %95, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x128xf32>, tensor<4x16x32xf32>) -> tensor<128x32xf32>
    %152 = stablehlo.transpose %151, dims = [1, 0] : (tensor<128x32xf32>) -> tensor<32x128xf32>
    %153 = stablehlo.dot_general %150, %arg3, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x128xf32>, tensor<32x128xf32>) -> tensor<4x16x32xf32>
    %154 = stablehlo.multiply %92, %153 : tensor<4x16x32xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %155 = stablehlo.reduce(%154 init: %cst_34) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %156 = stablehlo.reshape %155 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %157 = stablehlo.broadcast_in_dim %93, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<4x16x32xf32>
    %158 = stablehlo.multiply %153, %157 : tensor<4x16x32xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %159 = stablehlo.reduce(%156 init: %cst_35) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %160 = stablehlo.multiply %84, %158 : tensor<4x16x32xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %161 = stablehlo.reduce(%160 init: %cst_36) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %162 = stablehlo.reshape %161 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %163 = stablehlo.broadcast_in_dim %87, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %164 = stablehlo.multiply %158, %163 : tensor<4x16x32xf32>
    %165 = stablehlo.multiply %162, %90 : tensor<4x16x1xf32>
    %166 = stablehlo.negate %164 : tensor<4x16x32xf32>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %167 = stablehlo.reduce(%166 init: %cst_37) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %168 = stablehlo.reshape %167 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %169 = stablehlo.add %132, %164 : tensor<4x16x32xf32>
    %cst_38 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %170 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %171 = stablehlo.divide %165, %170 : tensor<4x16x1xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %172 = stablehlo.reduce(%171 init: %cst_39) applies stablehlo.add across dimensions = [2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<4x16xf32>
    %173 = stablehlo.broadcast_in_dim %172, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %174 = stablehlo.multiply %173, %78 : tensor<4x16x32xf32>
    %175 = stablehlo.negate %174 : tensor<4x16x32xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %176 = stablehlo.reduce(%175 init: %cst_40) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %177 = stablehlo.reshape %176 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %178 = stablehlo.add %169, %174 : tensor<4x16x32xf32>
    %179 = stablehlo.add %168, %177 : tensor<4x16x1xf32>
    %cst_41 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %180 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %181 = stablehlo.divide %179, %180 : tensor<4x16x1xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %182 = stablehlo.reduce(%181 init: %cst_42) applies stablehlo.add across dimensions = [2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<4x16xf32>
    %183 = stablehlo.broadcast_in_dim %182, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %184 = stablehlo.add %178, %183 : tensor<4x16x32xf32>
    %185 = stablehlo.dot_general %184, %67, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<4x16x32xf32>) -> tensor<32x32xf32>
    %186 = stablehlo.transpose %185, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %187 = stablehlo.dot_general %184, %arg5, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x32xf32>, tensor<32x32xf32>) -> tensor<4x16x32xf32>
    %188 = stablehlo.reshape %187 : (tensor<4x16x32xf32>) -> tensor<4x16x4x8xf32>
    %189 = stablehlo.transpose %188, dims = [0, 2, 1, 3] : (tensor<4x16x4x8xf32>) -> tensor<4x4x16x8xf32>
    %190 = stablehlo.dot_general %189, %61, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x8xf32>, tensor<4x4x16x16xf32>) -> tensor<4x4x8x16xf32>
    %191 = stablehlo.transpose %190, dims = [0, 1, 3, 2] : (tensor<4x4x8x16xf32>) -> tensor<4x4x16x8xf32>
    %192 = stablehlo.dot_general %189, %42, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x8xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x16xf32>
    %193 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %194 = stablehlo.multiply %192, %193 : tensor<4x4x16x16xf32>
    %195 = stablehlo.multiply %194, %57 : tensor<4x4x16x16xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %196 = stablehlo.reduce(%195 init: %cst_43) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x16xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %197 = stablehlo.reshape %196 : (tensor<4x4x16xf32>) -> tensor<4x4x16x1xf32>
    %198 = stablehlo.negate %197 : tensor<4x4x16x1xf32>
    %199 = stablehlo.broadcast_in_dim %59, dims = [0, 1, 2, 3] : (tensor<4x4x16x1xf32>) -> tensor<4x4x16x16xf32>
    %200 = stablehlo.divide %192, %199 : tensor<4x4x16x16xf32>
    %cst_44 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %201 = stablehlo.reduce(%198 init: %cst_44) applies stablehlo.add across dimensions = [3] : (tensor<4x4x16x1xf32>, tensor<f32>) -> tensor<4x4x16xf32>
    %202 = stablehlo.broadcast_in_dim %201, dims = [0, 1, 2] : (tensor<4x4x16xf32>) -> tensor<4x4x16x16xf32>
    %203 = stablehlo.add %200, %202 : tensor<4x4x16x16xf32>
    %204 = stablehlo.multiply %203, %57 : tensor<4x4x16x16xf32>
    %205 = call @_where_2(%50#1, %204) : (tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xf32>
    %206 = stablehlo.broadcast_in_dim %45, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %207 = stablehlo.divide %205, %206 : tensor<4x4x16x16xf32>
    %208 = stablehlo.dot_general %207, %38, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x16xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x8xf32>
    %209 = stablehlo.dot_general %207, %40, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<4x4x16x16xf32>, tensor<4x4x16x8xf32>) -> tensor<4x4x16x8xf32>
    %210 = stablehlo.transpose %191, dims = [0, 2, 1, 3] : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %211 = stablehlo.reshape %210 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %212 = stablehlo.transpose %208, dims = [0, 2, 1, 3] : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %213 = stablehlo.reshape %212 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %214 = stablehlo.transpose %209, dims = [0, 2, 1, 3] : (tensor<4x4x16x8xf32>) -> tensor<4x16x4x8xf32>
    %215 = stablehlo.reshape %214 : (tensor<4x16x4x8xf32>) -> tensor<4x16x32xf32>
    %216 = stablehlo.concatenate %215, %213, %211, dim = 2 : (tensor<4x16x32xf32>, tensor<4x16x32xf32>, tensor<4x16x32xf32>) -> tensor<4x16x96xf32>
    %217 = stablehlo.dot_general %216, %32, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x96xf32>, tensor<4x16x32xf32>) -> tensor<96x32xf32>
    %218 = stablehlo.transpose %217, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %219 = stablehlo.dot_general %216, %arg6, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x96xf32>, tensor<32x96xf32>) -> tensor<4x16x32xf32>
    %220 = stablehlo.multiply %29, %219 : tensor<4x16x32xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %221 = stablehlo.reduce(%220 init: %cst_45) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %222 = stablehlo.reshape %221 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %223 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<4x16x32xf32>
    %224 = stablehlo.multiply %219, %223 : tensor<4x16x32xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %225 = stablehlo.reduce(%222 init: %cst_46) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %226 = stablehlo.multiply %21, %224 : tensor<4x16x32xf32>
    %cst_47 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %227 = stablehlo.reduce(%226 init: %cst_47) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %228 = stablehlo.reshape %227 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %229 = stablehlo.broadcast_in_dim %24, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x32xf32>
    %230 = stablehlo.multiply %224, %229 : tensor<4x16x32xf32>
    %231 = stablehlo.multiply %228, %27 : tensor<4x16x1xf32>
    %232 = stablehlo.negate %230 : tensor<4x16x32xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %233 = stablehlo.reduce(%232 init: %cst_48) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %234 = stablehlo.reshape %233 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %235 = stablehlo.add %184, %230 : tensor<4x16x32xf32>
    %cst_49 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %236 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %237 = stablehlo.divide %231, %236 : tensor<4x16x1xf32>
    %cst_50 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %238 = stablehlo.reduce(%237 init: %cst_50) applies stablehlo.add across dimensions = [2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<4x16xf32>
    %239 = stablehlo.broadcast_in_dim %238, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %240 = stablehlo.multiply %239, %15 : tensor<4x16x32xf32>
    %241 = stablehlo.negate %240 : tensor<4x16x32xf32>
    %cst_51 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %242 = stablehlo.reduce(%241 init: %cst_51) applies stablehlo.add across dimensions = [2] : (tensor<4x16x32xf32>, tensor<f32>) -> tensor<4x16xf32>
    %243 = stablehlo.reshape %242 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %244 = stablehlo.add %235, %240 : tensor<4x16x32xf32>
    %245 = stablehlo.add %234, %243 : tensor<4x16x1xf32>
    %cst_52 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %246 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %247 = stablehlo.divide %245, %246 : tensor<4x16x1xf32>
    %cst_53 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %248 = stablehlo.reduce(%247 init: %cst_53) applies stablehlo.add across dimensions = [2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<4x16xf32>
    %249 = stablehlo.broadcast_in_dim %248, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x32xf32>
    %250 = stablehlo.add %244, %249 : tensor<4x16x32xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %251 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %252 = "stablehlo.scatter"(%251, %5, %250) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %275 = stablehlo.add %arg9, %arg10 : tensor<f32>
      stablehlo.return %275 : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<4x16x1xi32>, tensor<4x16x32xf32>) -> tensor<64x32xf32>
    %253 = stablehlo.add %133, %252 : tensor<64x32xf32>
    %cst_55 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %254 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %255 = stablehlo.multiply %254, %253 : tensor<64x32xf32>
    %256 = stablehlo.subtract %arg0, %255 : tensor<64x32xf32>
    %cst_56 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %257 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %258 = stablehlo.multiply %257, %225 : tensor<32xf32>
    %259 = stablehlo.subtract %arg1, %258 : tensor<32xf32>
    %cst_57 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %260 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %261 = stablehlo.multiply %260, %159 : tensor<32xf32>
    %262 = stablehlo.subtract %arg2, %261 : tensor<32xf32>
    %cst_58 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %263 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<32x128xf32>
    %264 = stablehlo.multiply %263, %152 : tensor<32x128xf32>
    %265 = stablehlo.subtract %arg3, %264 : tensor<32x128xf32>
    %cst_59 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %266 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<128x32xf32>
    %267 = stablehlo.multiply %266, %135 : tensor<128x32xf32>
    %268 = stablehlo.subtract %arg4, %267 : tensor<128x32xf32>
    %cst_60 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %269 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %270 = stablehlo.multiply %269, %186 : tensor<32x32xf32>
    %271 = stablehlo.subtract %arg5, %270 : tensor<32x32xf32>
    %cst_61 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %272 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %273 = stablehlo.multiply %272, %218 : tensor<32x96xf32>
    %274 = stablehlo.subtract %arg6, %273 : tensor<32x96xf32>
    return %124, %256, %259, %262, %265, %268, %271, %274 : tensor<f32>, tensor<64x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x128xf32>, tensor<128x32xf32>, tensor<32x32xf32>, tensor<32x96xf32>
  }
  func.func private @tril(%arg0: tensor<16x16xi1>) -> tensor<16x16xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<16x16xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<16x16xi32>
    %2 = stablehlo.add %0, %1 : tensor<16x16xi32>
    %3 = stablehlo.iota dim = 1 : tensor<16x16xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<16x16xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<16x16xi1>, tensor<16x16xi1>
    return %6 : tensor<16x16xi1>
  }
  func.func private @_where(%arg0: tensor<16x16xi1>, %arg1: tensor<4x4x16x16xf32>, %arg2: tensor<f32>) -> (tensor<4x4x16x16xf32>, tensor<4x4x16x16xi1>) {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<16x16xi1>) -> tensor<4x4x16x16xi1>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %3 = stablehlo.select %1, %arg1, %2 : tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>
    return %3, %1 : tensor<4x4x16x16xf32>, tensor<4x4x16x16xi1>
  }
  func.func private @log_softmax(%arg0: tensor<4x16x64xf32>) -> (tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<4x16x64xf32>, tensor<f32>) -> tensor<4x16xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4x16xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x64xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x16x64xf32>
    %6 = stablehlo.exponential %5 : tensor<4x16x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<4x16x64xf32>, tensor<f32>) -> tensor<4x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %9 = stablehlo.log %8 : tensor<4x16x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x64xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<4x16x64xf32>
    return %11, %6, %8 : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<4x16x64xf32>, %arg1: tensor<4x16x1xi32>) -> (tensor<4x16x1xf32>, tensor<4x16x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x16x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x16x1xi32>, tensor<4x16x1xi32>) -> tensor<4x16x1xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x16x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x16x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<4x16x1xi1>, tensor<4x16x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<4x16x1xi32>) -> tensor<4x16x1x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x16x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x16x1x1xi32>, tensor<4x16x1x1xi32>) -> tensor<4x16x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<4x16x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<4x16x1x1xi32>, tensor<4x16x1x1xi32>) -> tensor<4x16x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<4x16x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<4x16x1x1xi1>, tensor<i1>) -> tensor<4x16x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<4x16x64xf32>, tensor<4x16x1x1xi32>) -> tensor<4x16x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<4x16x1xi1>, tensor<4x16x1xf32>
    return %15, %5 : tensor<4x16x1xf32>, tensor<4x16x1x1xi32>
  }
  func.func private @take_along_axis_0(%arg0: tensor<4x16x1x1xi32>, %arg1: tensor<4x16x1xf32>) -> tensor<4x16x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16x64xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x16x64xf32>, tensor<4x16x1x1xi32>, tensor<4x16x1xf32>) -> tensor<4x16x64xf32>
    return %1 : tensor<4x16x64xf32>
  }
  func.func private @log_softmax_1(%arg0: tensor<4x16x64xf32>, %arg1: tensor<4x16x1xf32>, %arg2: tensor<4x16x64xf32>) -> tensor<4x16x64xf32> {
    %0 = stablehlo.negate %arg2 : tensor<4x16x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<4x16x64xf32>, tensor<f32>) -> tensor<4x16xf32>
    %2 = stablehlo.reshape %1 : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<4x16x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<4x16x1xf32>, tensor<f32>) -> tensor<4x16xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x64xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x16x64xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<4x16x64xf32>
    return %7 : tensor<4x16x64xf32>
  }
  func.func private @_where_2(%arg0: tensor<4x4x16x16xi1>, %arg1: tensor<4x4x16x16xf32>) -> tensor<4x4x16x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4x16x16xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<4x4x16x16xi1>, tensor<4x4x16x16xf32>
    return %1 : tensor<4x4x16x16xf32>
  }
}
