module @jit_train_step attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["dp"=2, "mp"=2, "fsdp"=2]> {stablehlo.mesh = {axes = [{name = "dp", size = 2 : i64}, {name = "mp", size = 2 : i64}, {name = "fsdp", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, %arg1: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg3: tensor<96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, %arg4: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg5: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg6: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg7: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg8: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, %arg9: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, %arg10: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, %arg11: tensor<32x96xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, %arg12: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg13: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg14: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg15: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg16: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp", "fsdp"}, {}]>}, %arg17: tensor<8x8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"dp", "fsdp"}, {}]>}) -> (tensor<64xf32> {jax.result_info = "result[0]['h0.b_fc']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.b_o']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.b_proj']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<96xf32> {jax.result_info = "result[0]['h0.b_qkv']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.ln1_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.ln1_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.ln2_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[0]['h0.ln2_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32x64xf32> {jax.result_info = "result[0]['h0.w_fc']", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, tensor<32x32xf32> {jax.result_info = "result[0]['h0.w_o']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, tensor<64x32xf32> {jax.result_info = "result[0]['h0.w_proj']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, tensor<32x96xf32> {jax.result_info = "result[0]['h0.w_qkv']", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, tensor<32xf32> {jax.result_info = "result[0]['lnf_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[0]['lnf_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<8x32xf32> {jax.result_info = "result[0]['wpe']", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<64x32xf32> {jax.result_info = "result[0]['wte']", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<f32> {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<64xf32> {jax.result_info = "result[3]['h0.b_fc']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.b_o']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.b_proj']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<96xf32> {jax.result_info = "result[3]['h0.b_qkv']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.ln1_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.ln1_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.ln2_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[3]['h0.ln2_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32x64xf32> {jax.result_info = "result[3]['h0.w_fc']", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, tensor<32x32xf32> {jax.result_info = "result[3]['h0.w_o']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, tensor<64x32xf32> {jax.result_info = "result[3]['h0.w_proj']", sdy.sharding = #sdy.sharding<@mesh, [{"mp"}, {"fsdp"}]>}, tensor<32x96xf32> {jax.result_info = "result[3]['h0.w_qkv']", sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {"mp"}]>}, tensor<32xf32> {jax.result_info = "result[3]['lnf_b']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<32xf32> {jax.result_info = "result[3]['lnf_g']", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<8x32xf32> {jax.result_info = "result[3]['wpe']", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, tensor<64x32xf32> {jax.result_info = "result[3]['wte']", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %1 = stablehlo.compare LT, %arg16, %0, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %3 = stablehlo.add %arg16, %2 : tensor<8x8xi32>
    %4 = stablehlo.select %1, %3, %arg16 : tensor<8x8xi1>, tensor<8x8xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %6 = "stablehlo.gather"(%arg15, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (tensor<64x32xf32>, tensor<8x8x1xi32>) -> tensor<8x8x32xf32>
    %7 = stablehlo.broadcast_in_dim %arg14, dims = [1, 2] : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1, 2] : (tensor<1x8x32xf32>) -> tensor<8x8x32xf32>
    %9 = stablehlo.add %6, %8 : tensor<8x8x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_1 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %13 = stablehlo.divide %11, %12 : tensor<8x8x1xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %15 = stablehlo.subtract %9, %14 : tensor<8x8x32xf32>
    %16 = chlo.square %15 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %18 = stablehlo.multiply %17, %15 : tensor<8x8x32xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%16 init: %cst_3) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_4 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %22 = stablehlo.divide %20, %21 : tensor<8x8x1xf32>
    %23 = stablehlo.broadcast_in_dim %13, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %24 = stablehlo.subtract %9, %23 : tensor<8x8x32xf32>
    %cst_5 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %26 = stablehlo.add %22, %25 : tensor<8x8x1xf32>
    %27 = stablehlo.rsqrt %26 : tensor<8x8x1xf32>
    %28 = stablehlo.divide %27, %26 : tensor<8x8x1xf32>
    %cst_6 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %30 = stablehlo.multiply %29, %28 : tensor<8x8x1xf32>
    %31 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %32 = stablehlo.multiply %24, %31 : tensor<8x8x32xf32>
    %33 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %35 = stablehlo.multiply %32, %34 : tensor<8x8x32xf32>
    %36 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %38 = stablehlo.add %35, %37 : tensor<8x8x32xf32>
    %39 = stablehlo.dot_general %38, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x96xf32>) -> tensor<8x8x96xf32>
    %40 = stablehlo.broadcast_in_dim %arg3, dims = [2] : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %41 = stablehlo.broadcast_in_dim %40, dims = [0, 1, 2] : (tensor<1x1x96xf32>) -> tensor<8x8x96xf32>
    %42 = stablehlo.add %39, %41 : tensor<8x8x96xf32>
    %43 = stablehlo.slice %42 [0:8, 0:8, 0:32] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %44 = stablehlo.slice %42 [0:8, 0:8, 32:64] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %45 = stablehlo.slice %42 [0:8, 0:8, 64:96] : (tensor<8x8x96xf32>) -> tensor<8x8x32xf32>
    %46 = stablehlo.reshape %43 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %47 = stablehlo.transpose %46, dims = [0, 2, 1, 3] : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %48 = stablehlo.reshape %44 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %49 = stablehlo.transpose %48, dims = [0, 2, 1, 3] : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %50 = stablehlo.reshape %45 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %51 = stablehlo.transpose %50, dims = [0, 2, 1, 3] : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %52 = stablehlo.dot_general %47, %49, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %cst_7 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %53 = stablehlo.sqrt %cst_7 : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %55 = stablehlo.divide %52, %54 : tensor<8x4x8x8xf32>
    %c_8 = stablehlo.constant dense<true> : tensor<i1>
    %56 = stablehlo.broadcast_in_dim %c_8, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %57 = call @tril(%56) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_9 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %58:2 = call @_where(%57, %55, %cst_9) : (tensor<8x8xi1>, tensor<8x4x8x8xf32>, tensor<f32>) -> (tensor<8x4x8x8xf32>, tensor<8x4x8x8xi1>)
    %cst_10 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %59 = stablehlo.reduce(%58#0 init: %cst_10) applies stablehlo.maximum across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %cst_11 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8x4x8xf32>
    %61 = stablehlo.maximum %60, %59 : tensor<8x4x8xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x8xf32>
    %64 = stablehlo.subtract %58#0, %63 : tensor<8x4x8x8xf32>
    %65 = stablehlo.exponential %64 : tensor<8x4x8x8xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %66 = stablehlo.reduce(%65 init: %cst_12) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %68 = stablehlo.broadcast_in_dim %67, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x8xf32>
    %69 = stablehlo.divide %65, %68 : tensor<8x4x8x8xf32>
    %70 = stablehlo.multiply %67, %67 : tensor<8x4x8x1xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %71 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x4x8x1xf32>
    %72 = stablehlo.divide %71, %70 : tensor<8x4x8x1xf32>
    %73 = stablehlo.dot_general %69, %51, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %74 = stablehlo.transpose %73, dims = [0, 2, 1, 3] : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %75 = stablehlo.reshape %74 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %76 = stablehlo.dot_general %75, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %77 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %79 = stablehlo.add %76, %78 : tensor<8x8x32xf32>
    %80 = stablehlo.add %9, %79 : tensor<8x8x32xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %81 = stablehlo.reduce(%80 init: %cst_14) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %82 = stablehlo.broadcast_in_dim %81, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_15 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %84 = stablehlo.divide %82, %83 : tensor<8x8x1xf32>
    %85 = stablehlo.broadcast_in_dim %84, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %86 = stablehlo.subtract %80, %85 : tensor<8x8x32xf32>
    %87 = chlo.square %86 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_16 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %89 = stablehlo.multiply %88, %86 : tensor<8x8x32xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %90 = stablehlo.reduce(%87 init: %cst_17) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %91 = stablehlo.broadcast_in_dim %90, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_18 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %92 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %93 = stablehlo.divide %91, %92 : tensor<8x8x1xf32>
    %94 = stablehlo.broadcast_in_dim %84, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %95 = stablehlo.subtract %80, %94 : tensor<8x8x32xf32>
    %cst_19 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %96 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %97 = stablehlo.add %93, %96 : tensor<8x8x1xf32>
    %98 = stablehlo.rsqrt %97 : tensor<8x8x1xf32>
    %99 = stablehlo.divide %98, %97 : tensor<8x8x1xf32>
    %cst_20 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<8x8x1xf32>
    %102 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %103 = stablehlo.multiply %95, %102 : tensor<8x8x32xf32>
    %104 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %105 = stablehlo.broadcast_in_dim %104, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %106 = stablehlo.multiply %103, %105 : tensor<8x8x32xf32>
    %107 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %108 = stablehlo.broadcast_in_dim %107, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %109 = stablehlo.add %106, %108 : tensor<8x8x32xf32>
    %110 = stablehlo.dot_general %109, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    %111 = stablehlo.broadcast_in_dim %arg0, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %112 = stablehlo.broadcast_in_dim %111, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<8x8x64xf32>
    %113 = stablehlo.add %110, %112 : tensor<8x8x64xf32>
    %cst_21 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %114 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %115 = stablehlo.multiply %114, %113 : tensor<8x8x64xf32>
    %116 = stablehlo.multiply %113, %113 : tensor<8x8x64xf32>
    %117 = stablehlo.multiply %116, %113 : tensor<8x8x64xf32>
    %118 = stablehlo.multiply %113, %113 : tensor<8x8x64xf32>
    %cst_22 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %120 = stablehlo.multiply %119, %118 : tensor<8x8x64xf32>
    %cst_23 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %122 = stablehlo.multiply %121, %117 : tensor<8x8x64xf32>
    %123 = stablehlo.add %113, %122 : tensor<8x8x64xf32>
    %cst_24 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %124 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %125 = stablehlo.multiply %124, %123 : tensor<8x8x64xf32>
    %126 = stablehlo.tanh %125 : tensor<8x8x64xf32>
    %cst_25 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %127 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %128 = stablehlo.subtract %127, %126 : tensor<8x8x64xf32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %129 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %130 = stablehlo.add %129, %126 : tensor<8x8x64xf32>
    %131 = stablehlo.multiply %115, %130 : tensor<8x8x64xf32>
    %132 = stablehlo.dot_general %131, %arg10, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<64x32xf32>) -> tensor<8x8x32xf32>
    %133 = stablehlo.add %80, %132 : tensor<8x8x32xf32>
    %134 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %135 = stablehlo.broadcast_in_dim %134, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %136 = stablehlo.add %133, %135 : tensor<8x8x32xf32>
    %cst_27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %137 = stablehlo.reduce(%136 init: %cst_27) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %138 = stablehlo.broadcast_in_dim %137, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_28 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %140 = stablehlo.divide %138, %139 : tensor<8x8x1xf32>
    %141 = stablehlo.broadcast_in_dim %140, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %142 = stablehlo.subtract %136, %141 : tensor<8x8x32xf32>
    %143 = chlo.square %142 : tensor<8x8x32xf32> -> tensor<8x8x32xf32>
    %cst_29 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %144 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<8x8x32xf32>
    %145 = stablehlo.multiply %144, %142 : tensor<8x8x32xf32>
    %cst_30 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %146 = stablehlo.reduce(%143 init: %cst_30) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %147 = stablehlo.broadcast_in_dim %146, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_31 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %148 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %149 = stablehlo.divide %147, %148 : tensor<8x8x1xf32>
    %150 = stablehlo.broadcast_in_dim %140, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %151 = stablehlo.subtract %136, %150 : tensor<8x8x32xf32>
    %cst_32 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %152 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %153 = stablehlo.add %149, %152 : tensor<8x8x1xf32>
    %154 = stablehlo.rsqrt %153 : tensor<8x8x1xf32>
    %155 = stablehlo.divide %154, %153 : tensor<8x8x1xf32>
    %cst_33 = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %157 = stablehlo.multiply %156, %155 : tensor<8x8x1xf32>
    %158 = stablehlo.broadcast_in_dim %154, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %159 = stablehlo.multiply %151, %158 : tensor<8x8x32xf32>
    %160 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %161 = stablehlo.broadcast_in_dim %160, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %162 = stablehlo.multiply %159, %161 : tensor<8x8x32xf32>
    %163 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %164 = stablehlo.broadcast_in_dim %163, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %165 = stablehlo.add %162, %164 : tensor<8x8x32xf32>
    %166 = stablehlo.transpose %arg15, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %167 = stablehlo.dot_general %165, %166, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x64xf32>) -> tensor<8x8x64xf32>
    %168:3 = call @log_softmax(%167) : (tensor<8x8x64xf32>) -> (tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>)
    %169 = stablehlo.broadcast_in_dim %arg17, dims = [0, 1] : (tensor<8x8xi32>) -> tensor<8x8x1xi32>
    %170:2 = call @take_along_axis(%168#0, %169) : (tensor<8x8x64xf32>, tensor<8x8x1xi32>) -> (tensor<8x8x1xf32>, tensor<8x8x1x1xi32>)
    %171 = stablehlo.reshape %170#0 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %172 = stablehlo.reduce(%171 init: %cst_34) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_35 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %173 = stablehlo.divide %172, %cst_35 : tensor<f32>
    %174 = stablehlo.negate %173 : tensor<f32>
    %cst_36 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %175 = stablehlo.negate %cst_36 : tensor<f32>
    %cst_37 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %176 = stablehlo.divide %175, %cst_37 : tensor<f32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %178 = stablehlo.broadcast_in_dim %177, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %179 = call @take_along_axis_0(%170#1, %178) : (tensor<8x8x1x1xi32>, tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %180 = call @log_softmax_1(%168#1, %168#2, %179) : (tensor<8x8x64xf32>, tensor<8x8x1xf32>, tensor<8x8x64xf32>) -> tensor<8x8x64xf32>
    %181 = stablehlo.dot_general %180, %165, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %182 = stablehlo.transpose %181, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %183 = stablehlo.dot_general %180, %166, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<32x64xf32>) -> tensor<8x8x32xf32>
    %184 = stablehlo.transpose %182, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %185 = stablehlo.reduce(%183 init: %cst_38) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %186 = stablehlo.reshape %185 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %187 = stablehlo.reduce(%186 init: %cst_39) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %188 = stablehlo.multiply %159, %183 : tensor<8x8x32xf32>
    %cst_40 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %189 = stablehlo.reduce(%188 init: %cst_40) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %190 = stablehlo.reshape %189 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %191 = stablehlo.broadcast_in_dim %160, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %192 = stablehlo.multiply %183, %191 : tensor<8x8x32xf32>
    %cst_41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %193 = stablehlo.reduce(%190 init: %cst_41) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %194 = stablehlo.multiply %151, %192 : tensor<8x8x32xf32>
    %cst_42 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %195 = stablehlo.reduce(%194 init: %cst_42) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %196 = stablehlo.reshape %195 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %197 = stablehlo.broadcast_in_dim %154, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %198 = stablehlo.multiply %192, %197 : tensor<8x8x32xf32>
    %199 = stablehlo.multiply %196, %157 : tensor<8x8x1xf32>
    %200 = stablehlo.negate %198 : tensor<8x8x32xf32>
    %cst_43 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %201 = stablehlo.reduce(%200 init: %cst_43) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %202 = stablehlo.reshape %201 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %cst_44 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %203 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %204 = stablehlo.divide %199, %203 : tensor<8x8x1xf32>
    %cst_45 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %205 = stablehlo.reduce(%204 init: %cst_45) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %206 = stablehlo.broadcast_in_dim %205, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %207 = stablehlo.multiply %206, %145 : tensor<8x8x32xf32>
    %208 = stablehlo.negate %207 : tensor<8x8x32xf32>
    %cst_46 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %209 = stablehlo.reduce(%208 init: %cst_46) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %210 = stablehlo.reshape %209 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %211 = stablehlo.add %198, %207 : tensor<8x8x32xf32>
    %212 = stablehlo.add %202, %210 : tensor<8x8x1xf32>
    %cst_47 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %214 = stablehlo.divide %212, %213 : tensor<8x8x1xf32>
    %cst_48 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %215 = stablehlo.reduce(%214 init: %cst_48) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %216 = stablehlo.broadcast_in_dim %215, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %217 = stablehlo.add %211, %216 : tensor<8x8x32xf32>
    %cst_49 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %218 = stablehlo.reduce(%217 init: %cst_49) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %219 = stablehlo.reshape %218 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_50 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %220 = stablehlo.reduce(%219 init: %cst_50) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %221 = stablehlo.dot_general %217, %131, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x64xf32>) -> tensor<32x64xf32>
    %222 = stablehlo.transpose %221, dims = [1, 0] : (tensor<32x64xf32>) -> tensor<64x32xf32>
    %223 = stablehlo.dot_general %217, %arg10, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<64x32xf32>) -> tensor<8x8x64xf32>
    %224 = stablehlo.multiply %115, %223 : tensor<8x8x64xf32>
    %225 = stablehlo.multiply %223, %130 : tensor<8x8x64xf32>
    %226 = stablehlo.multiply %224, %128 : tensor<8x8x64xf32>
    %227 = stablehlo.multiply %226, %126 : tensor<8x8x64xf32>
    %228 = stablehlo.add %226, %227 : tensor<8x8x64xf32>
    %cst_51 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %229 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %230 = stablehlo.multiply %229, %228 : tensor<8x8x64xf32>
    %cst_52 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %231 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %232 = stablehlo.multiply %231, %230 : tensor<8x8x64xf32>
    %233 = stablehlo.multiply %232, %120 : tensor<8x8x64xf32>
    %234 = stablehlo.add %230, %233 : tensor<8x8x64xf32>
    %cst_53 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %235 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %236 = stablehlo.multiply %235, %225 : tensor<8x8x64xf32>
    %237 = stablehlo.add %234, %236 : tensor<8x8x64xf32>
    %cst_54 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %238 = stablehlo.reduce(%237 init: %cst_54) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<64xf32>
    %239 = stablehlo.reshape %238 : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %cst_55 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %240 = stablehlo.reduce(%239 init: %cst_55) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x64xf32>, tensor<f32>) -> tensor<64xf32>
    %241 = stablehlo.dot_general %237, %109, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %242 = stablehlo.transpose %241, dims = [1, 0] : (tensor<64x32xf32>) -> tensor<32x64xf32>
    %243 = stablehlo.dot_general %237, %arg8, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x64xf32>, tensor<32x64xf32>) -> tensor<8x8x32xf32>
    %cst_56 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %244 = stablehlo.reduce(%243 init: %cst_56) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %245 = stablehlo.reshape %244 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_57 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %246 = stablehlo.reduce(%245 init: %cst_57) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %247 = stablehlo.multiply %103, %243 : tensor<8x8x32xf32>
    %cst_58 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %248 = stablehlo.reduce(%247 init: %cst_58) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %249 = stablehlo.reshape %248 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %250 = stablehlo.broadcast_in_dim %104, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %251 = stablehlo.multiply %243, %250 : tensor<8x8x32xf32>
    %cst_59 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %252 = stablehlo.reduce(%249 init: %cst_59) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %253 = stablehlo.multiply %95, %251 : tensor<8x8x32xf32>
    %cst_60 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %254 = stablehlo.reduce(%253 init: %cst_60) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %255 = stablehlo.reshape %254 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %256 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %257 = stablehlo.multiply %251, %256 : tensor<8x8x32xf32>
    %258 = stablehlo.multiply %255, %101 : tensor<8x8x1xf32>
    %259 = stablehlo.negate %257 : tensor<8x8x32xf32>
    %cst_61 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %260 = stablehlo.reduce(%259 init: %cst_61) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %261 = stablehlo.reshape %260 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %262 = stablehlo.add %217, %257 : tensor<8x8x32xf32>
    %cst_62 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %263 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %264 = stablehlo.divide %258, %263 : tensor<8x8x1xf32>
    %cst_63 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %265 = stablehlo.reduce(%264 init: %cst_63) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %266 = stablehlo.broadcast_in_dim %265, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %267 = stablehlo.multiply %266, %89 : tensor<8x8x32xf32>
    %268 = stablehlo.negate %267 : tensor<8x8x32xf32>
    %cst_64 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %269 = stablehlo.reduce(%268 init: %cst_64) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %270 = stablehlo.reshape %269 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %271 = stablehlo.add %262, %267 : tensor<8x8x32xf32>
    %272 = stablehlo.add %261, %270 : tensor<8x8x1xf32>
    %cst_65 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %273 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %274 = stablehlo.divide %272, %273 : tensor<8x8x1xf32>
    %cst_66 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %275 = stablehlo.reduce(%274 init: %cst_66) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %276 = stablehlo.broadcast_in_dim %275, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %277 = stablehlo.add %271, %276 : tensor<8x8x32xf32>
    %cst_67 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %278 = stablehlo.reduce(%277 init: %cst_67) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %279 = stablehlo.reshape %278 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_68 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %280 = stablehlo.reduce(%279 init: %cst_68) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %281 = stablehlo.dot_general %277, %75, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<32x32xf32>
    %282 = stablehlo.transpose %281, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
    %283 = stablehlo.dot_general %277, %arg9, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x32xf32>, tensor<32x32xf32>) -> tensor<8x8x32xf32>
    %284 = stablehlo.reshape %283 : (tensor<8x8x32xf32>) -> tensor<8x8x4x8xf32>
    %285 = stablehlo.transpose %284, dims = [0, 2, 1, 3] : (tensor<8x8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %286 = stablehlo.dot_general %285, %69, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %287 = stablehlo.transpose %286, dims = [0, 1, 3, 2] : (tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %288 = stablehlo.dot_general %285, %51, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %289 = stablehlo.broadcast_in_dim %72, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x8xf32>
    %290 = stablehlo.multiply %288, %289 : tensor<8x4x8x8xf32>
    %291 = stablehlo.multiply %290, %65 : tensor<8x4x8x8xf32>
    %cst_69 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %292 = stablehlo.reduce(%291 init: %cst_69) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x8xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %293 = stablehlo.reshape %292 : (tensor<8x4x8xf32>) -> tensor<8x4x8x1xf32>
    %294 = stablehlo.negate %293 : tensor<8x4x8x1xf32>
    %295 = stablehlo.broadcast_in_dim %67, dims = [0, 1, 2, 3] : (tensor<8x4x8x1xf32>) -> tensor<8x4x8x8xf32>
    %296 = stablehlo.divide %288, %295 : tensor<8x4x8x8xf32>
    %cst_70 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %297 = stablehlo.reduce(%294 init: %cst_70) applies stablehlo.add across dimensions = [3] : (tensor<8x4x8x1xf32>, tensor<f32>) -> tensor<8x4x8xf32>
    %298 = stablehlo.broadcast_in_dim %297, dims = [0, 1, 2] : (tensor<8x4x8xf32>) -> tensor<8x4x8x8xf32>
    %299 = stablehlo.add %296, %298 : tensor<8x4x8x8xf32>
    %300 = stablehlo.multiply %299, %65 : tensor<8x4x8x8xf32>
    %301 = call @_where_2(%58#1, %300) : (tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %302 = stablehlo.broadcast_in_dim %53, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %303 = stablehlo.divide %301, %302 : tensor<8x4x8x8xf32>
    %304 = stablehlo.dot_general %303, %47, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %305 = stablehlo.dot_general %303, %49, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<8x4x8x8xf32>, tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32>
    %306 = stablehlo.transpose %287, dims = [0, 2, 1, 3] : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %307 = stablehlo.reshape %306 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %308 = stablehlo.transpose %304, dims = [0, 2, 1, 3] : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %309 = stablehlo.reshape %308 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %310 = stablehlo.transpose %305, dims = [0, 2, 1, 3] : (tensor<8x4x8x8xf32>) -> tensor<8x8x4x8xf32>
    %311 = stablehlo.reshape %310 : (tensor<8x8x4x8xf32>) -> tensor<8x8x32xf32>
    %312 = stablehlo.concatenate %311, %309, %307, dim = 2 : (tensor<8x8x32xf32>, tensor<8x8x32xf32>, tensor<8x8x32xf32>) -> tensor<8x8x96xf32>
    %cst_71 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %313 = stablehlo.reduce(%312 init: %cst_71) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x96xf32>, tensor<f32>) -> tensor<96xf32>
    %314 = stablehlo.reshape %313 : (tensor<96xf32>) -> tensor<1x1x96xf32>
    %cst_72 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %315 = stablehlo.reduce(%314 init: %cst_72) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x96xf32>, tensor<f32>) -> tensor<96xf32>
    %316 = stablehlo.dot_general %312, %38, contracting_dims = [0, 1] x [0, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<8x8x32xf32>) -> tensor<96x32xf32>
    %317 = stablehlo.transpose %316, dims = [1, 0] : (tensor<96x32xf32>) -> tensor<32x96xf32>
    %318 = stablehlo.dot_general %312, %arg11, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x96xf32>, tensor<32x96xf32>) -> tensor<8x8x32xf32>
    %cst_73 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %319 = stablehlo.reduce(%318 init: %cst_73) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %320 = stablehlo.reshape %319 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %cst_74 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %321 = stablehlo.reduce(%320 init: %cst_74) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %322 = stablehlo.multiply %32, %318 : tensor<8x8x32xf32>
    %cst_75 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %323 = stablehlo.reduce(%322 init: %cst_75) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<32xf32>
    %324 = stablehlo.reshape %323 : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %325 = stablehlo.broadcast_in_dim %33, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<8x8x32xf32>
    %326 = stablehlo.multiply %318, %325 : tensor<8x8x32xf32>
    %cst_76 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %327 = stablehlo.reduce(%324 init: %cst_76) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %328 = stablehlo.multiply %24, %326 : tensor<8x8x32xf32>
    %cst_77 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %329 = stablehlo.reduce(%328 init: %cst_77) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %330 = stablehlo.reshape %329 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %331 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x32xf32>
    %332 = stablehlo.multiply %326, %331 : tensor<8x8x32xf32>
    %333 = stablehlo.multiply %330, %30 : tensor<8x8x1xf32>
    %334 = stablehlo.negate %332 : tensor<8x8x32xf32>
    %cst_78 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %335 = stablehlo.reduce(%334 init: %cst_78) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %336 = stablehlo.reshape %335 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %337 = stablehlo.add %277, %332 : tensor<8x8x32xf32>
    %cst_79 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %338 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %339 = stablehlo.divide %333, %338 : tensor<8x8x1xf32>
    %cst_80 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %340 = stablehlo.reduce(%339 init: %cst_80) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %341 = stablehlo.broadcast_in_dim %340, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %342 = stablehlo.multiply %341, %18 : tensor<8x8x32xf32>
    %343 = stablehlo.negate %342 : tensor<8x8x32xf32>
    %cst_81 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %344 = stablehlo.reduce(%343 init: %cst_81) applies stablehlo.add across dimensions = [2] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x8xf32>
    %345 = stablehlo.reshape %344 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %346 = stablehlo.add %337, %342 : tensor<8x8x32xf32>
    %347 = stablehlo.add %336, %345 : tensor<8x8x1xf32>
    %cst_82 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %348 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %349 = stablehlo.divide %347, %348 : tensor<8x8x1xf32>
    %cst_83 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %350 = stablehlo.reduce(%349 init: %cst_83) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %351 = stablehlo.broadcast_in_dim %350, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x32xf32>
    %352 = stablehlo.add %346, %351 : tensor<8x8x32xf32>
    %cst_84 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %353 = stablehlo.reduce(%352 init: %cst_84) applies stablehlo.add across dimensions = [0] : (tensor<8x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %354 = stablehlo.reshape %353 : (tensor<8x32xf32>) -> tensor<1x8x32xf32>
    %cst_85 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %355 = stablehlo.reduce(%354 init: %cst_85) applies stablehlo.add across dimensions = [0] : (tensor<1x8x32xf32>, tensor<f32>) -> tensor<8x32xf32>
    %cst_86 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %356 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %357 = "stablehlo.scatter"(%356, %5, %352) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>, unique_indices = false}> ({
    ^bb0(%arg18: tensor<f32>, %arg19: tensor<f32>):
      %407 = stablehlo.add %arg18, %arg19 : tensor<f32>
      stablehlo.return %407 : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<8x8x1xi32>, tensor<8x8x32xf32>) -> tensor<64x32xf32>
    %358 = stablehlo.add %184, %357 : tensor<64x32xf32>
    %cst_87 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %359 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %360 = stablehlo.multiply %359, %240 : tensor<64xf32>
    %361 = stablehlo.subtract %arg0, %360 : tensor<64xf32>
    %cst_88 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %362 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %363 = stablehlo.multiply %362, %280 : tensor<32xf32>
    %364 = stablehlo.subtract %arg1, %363 : tensor<32xf32>
    %cst_89 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %365 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %366 = stablehlo.multiply %365, %220 : tensor<32xf32>
    %367 = stablehlo.subtract %arg2, %366 : tensor<32xf32>
    %cst_90 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %368 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<96xf32>
    %369 = stablehlo.multiply %368, %315 : tensor<96xf32>
    %370 = stablehlo.subtract %arg3, %369 : tensor<96xf32>
    %cst_91 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %371 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %372 = stablehlo.multiply %371, %321 : tensor<32xf32>
    %373 = stablehlo.subtract %arg4, %372 : tensor<32xf32>
    %cst_92 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %374 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %375 = stablehlo.multiply %374, %327 : tensor<32xf32>
    %376 = stablehlo.subtract %arg5, %375 : tensor<32xf32>
    %cst_93 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %377 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %378 = stablehlo.multiply %377, %246 : tensor<32xf32>
    %379 = stablehlo.subtract %arg6, %378 : tensor<32xf32>
    %cst_94 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %380 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %381 = stablehlo.multiply %380, %252 : tensor<32xf32>
    %382 = stablehlo.subtract %arg7, %381 : tensor<32xf32>
    %cst_95 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %383 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<32x64xf32>
    %384 = stablehlo.multiply %383, %242 : tensor<32x64xf32>
    %385 = stablehlo.subtract %arg8, %384 : tensor<32x64xf32>
    %cst_96 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %386 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<32x32xf32>
    %387 = stablehlo.multiply %386, %282 : tensor<32x32xf32>
    %388 = stablehlo.subtract %arg9, %387 : tensor<32x32xf32>
    %cst_97 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %389 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %390 = stablehlo.multiply %389, %222 : tensor<64x32xf32>
    %391 = stablehlo.subtract %arg10, %390 : tensor<64x32xf32>
    %cst_98 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %392 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<32x96xf32>
    %393 = stablehlo.multiply %392, %317 : tensor<32x96xf32>
    %394 = stablehlo.subtract %arg11, %393 : tensor<32x96xf32>
    %cst_99 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %395 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %396 = stablehlo.multiply %395, %187 : tensor<32xf32>
    %397 = stablehlo.subtract %arg12, %396 : tensor<32xf32>
    %cst_100 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %398 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %399 = stablehlo.multiply %398, %193 : tensor<32xf32>
    %400 = stablehlo.subtract %arg13, %399 : tensor<32xf32>
    %cst_101 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %401 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %402 = stablehlo.multiply %401, %355 : tensor<8x32xf32>
    %403 = stablehlo.subtract %arg14, %402 : tensor<8x32xf32>
    %cst_102 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %404 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
    %405 = stablehlo.multiply %404, %358 : tensor<64x32xf32>
    %406 = stablehlo.subtract %arg15, %405 : tensor<64x32xf32>
    return %361, %364, %367, %370, %373, %376, %379, %382, %385, %388, %391, %394, %397, %400, %403, %406, %174, %240, %280, %220, %315, %321, %327, %246, %252, %242, %282, %222, %317, %187, %193, %355, %358 : tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<32x96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<64x32xf32>, tensor<f32>, tensor<64xf32>, tensor<32xf32>, tensor<32xf32>, tensor<96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<32x96xf32>, tensor<32xf32>, tensor<32xf32>, tensor<8x32xf32>, tensor<64x32xf32>
  }
  func.func private @tril(%arg0: tensor<8x8xi1>) -> tensor<8x8xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<8x8xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %2 = stablehlo.add %0, %1 : tensor<8x8xi32>
    %3 = stablehlo.iota dim = 1 : tensor<8x8xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<8x8xi1>, tensor<8x8xi1>
    return %6 : tensor<8x8xi1>
  }
  func.func private @_where(%arg0: tensor<8x8xi1>, %arg1: tensor<8x4x8x8xf32>, %arg2: tensor<f32>) -> (tensor<8x4x8x8xf32>, tensor<8x4x8x8xi1>) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<8x4x8x8xi1>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %2 = stablehlo.select %0, %arg1, %1 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    return %2, %0 : tensor<8x4x8x8xf32>, tensor<8x4x8x8xi1>
  }
  func.func private @log_softmax(%arg0: tensor<8x8x64xf32>) -> (tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<8x8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<8x8x64xf32>
    %6 = stablehlo.exponential %5 : tensor<8x8x64xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %9 = stablehlo.log %8 : tensor<8x8x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1, 2] : (tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<8x8x64xf32>
    return %11, %6, %8 : tensor<8x8x64xf32>, tensor<8x8x64xf32>, tensor<8x8x1xf32>
  }
  func.func private @take_along_axis(%arg0: tensor<8x8x64xf32>, %arg1: tensor<8x8x1xi32>) -> (tensor<8x8x1xf32>, tensor<8x8x1x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x8x1xi32>, tensor<8x8x1xi32>) -> tensor<8x8x1xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x8x1xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x8x1xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<8x8x1xi1>, tensor<8x8x1xi32>
    %5 = stablehlo.reshape %4 : (tensor<8x8x1xi32>) -> tensor<8x8x1x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<8x8x1x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [3] : (tensor<1xi32>) -> tensor<1x1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x1xi32>) -> tensor<8x8x1x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<8x8x1x1xi32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<8x8x1x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [3] : (tensor<8x8x1x1xi1>, tensor<i1>) -> tensor<8x8x1xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [2], operand_batching_dims = [0, 1], start_indices_batching_dims = [0, 1], start_index_map = [2], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>) -> tensor<8x8x1xf32>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<8x8x1xi1>, tensor<8x8x1xf32>
    return %15, %5 : tensor<8x8x1xf32>, tensor<8x8x1x1xi32>
  }
  func.func private @take_along_axis_0(%arg0: tensor<8x8x1x1xi32>, %arg1: tensor<8x8x1xf32>) -> tensor<8x8x64xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x8x64xf32>
    %1 = "stablehlo.scatter"(%0, %arg0, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [2], input_batching_dims = [0, 1], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2], index_vector_dim = 3>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<8x8x64xf32>, tensor<8x8x1x1xi32>, tensor<8x8x1xf32>) -> tensor<8x8x64xf32>
    return %1 : tensor<8x8x64xf32>
  }
  func.func private @log_softmax_1(%arg0: tensor<8x8x64xf32>, %arg1: tensor<8x8x1xf32>, %arg2: tensor<8x8x64xf32>) -> tensor<8x8x64xf32> {
    %0 = stablehlo.negate %arg2 : tensor<8x8x64xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<8x8x64xf32>, tensor<f32>) -> tensor<8x8xf32>
    %2 = stablehlo.reshape %1 : (tensor<8x8xf32>) -> tensor<8x8x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<8x8x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<8x8x1xf32>, tensor<f32>) -> tensor<8x8xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<8x8xf32>) -> tensor<8x8x64xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<8x8x64xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<8x8x64xf32>
    return %7 : tensor<8x8x64xf32>
  }
  func.func private @_where_2(%arg0: tensor<8x4x8x8xi1>, %arg1: tensor<8x4x8x8xf32>) -> tensor<8x4x8x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x4x8x8xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<8x4x8x8xi1>, tensor<8x4x8x8xf32>
    return %1 : tensor<8x4x8x8xf32>
  }
}
