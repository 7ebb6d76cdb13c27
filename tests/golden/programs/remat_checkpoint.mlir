module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>, %arg4: tensor<256x256xf32>, %arg5: tensor<256x256xf32>, %arg6: tensor<256x256xf32>, %arg7: tensor<256x256xf32>, %arg8: tensor<256x256xf32>, %arg9: tensor<256x256xf32>, %arg10: tensor<256x256xf32>, %arg11: tensor<256x256xf32>, %arg12: tensor<256x256xf32>, %arg13: tensor<256x256xf32>, %arg14: tensor<256x256xf32>, %arg15: tensor<256x256xf32>, %arg16: tensor<256x256xf32>, %arg17: tensor<256x256xf32>, %arg18: tensor<256x256xf32>, %arg19: tensor<256x256xf32>, %arg20: tensor<256x256xf32>, %arg21: tensor<256x256xf32>, %arg22: tensor<256x256xf32>, %arg23: tensor<256x256xf32>, %arg24: tensor<512x256xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<256x256xf32> {jax.result_info = "result[1][0][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][0][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][1][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][1][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][2][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][2][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][3][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][3][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][4][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][4][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][5][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][5][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][6][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][6][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][7][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][7][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][8][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][8][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][9][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][9][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][10][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][10][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][11][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][11][1]"}) {
    %0 = stablehlo.dot_general %arg24, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<512x256xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<512x256xf32>
    %cst = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %4 = stablehlo.multiply %3, %2 : tensor<512x256xf32>
    %5 = stablehlo.add %0, %4 : tensor<512x256xf32>
    %cst_0 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %7 = stablehlo.multiply %6, %5 : tensor<512x256xf32>
    %8 = stablehlo.tanh %7 : tensor<512x256xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %10 = stablehlo.add %9, %8 : tensor<512x256xf32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %12 = stablehlo.multiply %11, %10 : tensor<512x256xf32>
    %13 = stablehlo.multiply %0, %12 : tensor<512x256xf32>
    %14 = stablehlo.dot_general %13, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %15 = stablehlo.add %arg24, %14 : tensor<512x256xf32>
    %16 = stablehlo.dot_general %15, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %17 = stablehlo.multiply %16, %16 : tensor<512x256xf32>
    %18 = stablehlo.multiply %17, %16 : tensor<512x256xf32>
    %cst_3 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %20 = stablehlo.multiply %19, %18 : tensor<512x256xf32>
    %21 = stablehlo.add %16, %20 : tensor<512x256xf32>
    %cst_4 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %23 = stablehlo.multiply %22, %21 : tensor<512x256xf32>
    %24 = stablehlo.tanh %23 : tensor<512x256xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %26 = stablehlo.add %25, %24 : tensor<512x256xf32>
    %cst_6 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %28 = stablehlo.multiply %27, %26 : tensor<512x256xf32>
    %29 = stablehlo.multiply %16, %28 : tensor<512x256xf32>
    %30 = stablehlo.dot_general %29, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %31 = stablehlo.add %15, %30 : tensor<512x256xf32>
    %32 = stablehlo.dot_general %31, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %33 = stablehlo.multiply %32, %32 : tensor<512x256xf32>
    %34 = stablehlo.multiply %33, %32 : tensor<512x256xf32>
    %cst_7 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %36 = stablehlo.multiply %35, %34 : tensor<512x256xf32>
    %37 = stablehlo.add %32, %36 : tensor<512x256xf32>
    %cst_8 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %39 = stablehlo.multiply %38, %37 : tensor<512x256xf32>
    %40 = stablehlo.tanh %39 : tensor<512x256xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %42 = stablehlo.add %41, %40 : tensor<512x256xf32>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %44 = stablehlo.multiply %43, %42 : tensor<512x256xf32>
    %45 = stablehlo.multiply %32, %44 : tensor<512x256xf32>
    %46 = stablehlo.dot_general %45, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %47 = stablehlo.add %31, %46 : tensor<512x256xf32>
    %48 = stablehlo.dot_general %47, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %49 = stablehlo.multiply %48, %48 : tensor<512x256xf32>
    %50 = stablehlo.multiply %49, %48 : tensor<512x256xf32>
    %cst_11 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %52 = stablehlo.multiply %51, %50 : tensor<512x256xf32>
    %53 = stablehlo.add %48, %52 : tensor<512x256xf32>
    %cst_12 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %55 = stablehlo.multiply %54, %53 : tensor<512x256xf32>
    %56 = stablehlo.tanh %55 : tensor<512x256xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %58 = stablehlo.add %57, %56 : tensor<512x256xf32>
    %cst_14 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %60 = stablehlo.multiply %59, %58 : tensor<512x256xf32>
    %61 = stablehlo.multiply %48, %60 : tensor<512x256xf32>
    %62 = stablehlo.dot_general %61, %arg7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %63 = stablehlo.add %47, %62 : tensor<512x256xf32>
    %64 = stablehlo.dot_general %63, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %65 = stablehlo.multiply %64, %64 : tensor<512x256xf32>
    %66 = stablehlo.multiply %65, %64 : tensor<512x256xf32>
    %cst_15 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %68 = stablehlo.multiply %67, %66 : tensor<512x256xf32>
    %69 = stablehlo.add %64, %68 : tensor<512x256xf32>
    %cst_16 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %71 = stablehlo.multiply %70, %69 : tensor<512x256xf32>
    %72 = stablehlo.tanh %71 : tensor<512x256xf32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %74 = stablehlo.add %73, %72 : tensor<512x256xf32>
    %cst_18 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %76 = stablehlo.multiply %75, %74 : tensor<512x256xf32>
    %77 = stablehlo.multiply %64, %76 : tensor<512x256xf32>
    %78 = stablehlo.dot_general %77, %arg9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %79 = stablehlo.add %63, %78 : tensor<512x256xf32>
    %80 = stablehlo.dot_general %79, %arg10, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %81 = stablehlo.multiply %80, %80 : tensor<512x256xf32>
    %82 = stablehlo.multiply %81, %80 : tensor<512x256xf32>
    %cst_19 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %84 = stablehlo.multiply %83, %82 : tensor<512x256xf32>
    %85 = stablehlo.add %80, %84 : tensor<512x256xf32>
    %cst_20 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %86 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %87 = stablehlo.multiply %86, %85 : tensor<512x256xf32>
    %88 = stablehlo.tanh %87 : tensor<512x256xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %89 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %90 = stablehlo.add %89, %88 : tensor<512x256xf32>
    %cst_22 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %91 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %92 = stablehlo.multiply %91, %90 : tensor<512x256xf32>
    %93 = stablehlo.multiply %80, %92 : tensor<512x256xf32>
    %94 = stablehlo.dot_general %93, %arg11, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %95 = stablehlo.add %79, %94 : tensor<512x256xf32>
    %96 = stablehlo.dot_general %95, %arg12, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %97 = stablehlo.multiply %96, %96 : tensor<512x256xf32>
    %98 = stablehlo.multiply %97, %96 : tensor<512x256xf32>
    %cst_23 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %99 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %100 = stablehlo.multiply %99, %98 : tensor<512x256xf32>
    %101 = stablehlo.add %96, %100 : tensor<512x256xf32>
    %cst_24 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %102 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %103 = stablehlo.multiply %102, %101 : tensor<512x256xf32>
    %104 = stablehlo.tanh %103 : tensor<512x256xf32>
    %cst_25 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %106 = stablehlo.add %105, %104 : tensor<512x256xf32>
    %cst_26 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %108 = stablehlo.multiply %107, %106 : tensor<512x256xf32>
    %109 = stablehlo.multiply %96, %108 : tensor<512x256xf32>
    %110 = stablehlo.dot_general %109, %arg13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %111 = stablehlo.add %95, %110 : tensor<512x256xf32>
    %112 = stablehlo.dot_general %111, %arg14, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %113 = stablehlo.multiply %112, %112 : tensor<512x256xf32>
    %114 = stablehlo.multiply %113, %112 : tensor<512x256xf32>
    %cst_27 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %116 = stablehlo.multiply %115, %114 : tensor<512x256xf32>
    %117 = stablehlo.add %112, %116 : tensor<512x256xf32>
    %cst_28 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %119 = stablehlo.multiply %118, %117 : tensor<512x256xf32>
    %120 = stablehlo.tanh %119 : tensor<512x256xf32>
    %cst_29 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %122 = stablehlo.add %121, %120 : tensor<512x256xf32>
    %cst_30 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %123 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %124 = stablehlo.multiply %123, %122 : tensor<512x256xf32>
    %125 = stablehlo.multiply %112, %124 : tensor<512x256xf32>
    %126 = stablehlo.dot_general %125, %arg15, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %127 = stablehlo.add %111, %126 : tensor<512x256xf32>
    %128 = stablehlo.dot_general %127, %arg16, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %129 = stablehlo.multiply %128, %128 : tensor<512x256xf32>
    %130 = stablehlo.multiply %129, %128 : tensor<512x256xf32>
    %cst_31 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %131 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %132 = stablehlo.multiply %131, %130 : tensor<512x256xf32>
    %133 = stablehlo.add %128, %132 : tensor<512x256xf32>
    %cst_32 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %134 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %135 = stablehlo.multiply %134, %133 : tensor<512x256xf32>
    %136 = stablehlo.tanh %135 : tensor<512x256xf32>
    %cst_33 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %137 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %138 = stablehlo.add %137, %136 : tensor<512x256xf32>
    %cst_34 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %139 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %140 = stablehlo.multiply %139, %138 : tensor<512x256xf32>
    %141 = stablehlo.multiply %128, %140 : tensor<512x256xf32>
    %142 = stablehlo.dot_general %141, %arg17, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %143 = stablehlo.add %127, %142 : tensor<512x256xf32>
    %144 = stablehlo.dot_general %143, %arg18, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %145 = stablehlo.multiply %144, %144 : tensor<512x256xf32>
    %146 = stablehlo.multiply %145, %144 : tensor<512x256xf32>
    %cst_35 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %147 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %148 = stablehlo.multiply %147, %146 : tensor<512x256xf32>
    %149 = stablehlo.add %144, %148 : tensor<512x256xf32>
    %cst_36 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %150 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %151 = stablehlo.multiply %150, %149 : tensor<512x256xf32>
    %152 = stablehlo.tanh %151 : tensor<512x256xf32>
    %cst_37 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %153 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %154 = stablehlo.add %153, %152 : tensor<512x256xf32>
    %cst_38 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %155 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %156 = stablehlo.multiply %155, %154 : tensor<512x256xf32>
    %157 = stablehlo.multiply %144, %156 : tensor<512x256xf32>
    %158 = stablehlo.dot_general %157, %arg19, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %159 = stablehlo.add %143, %158 : tensor<512x256xf32>
    %160 = stablehlo.dot_general %159, %arg20, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %161 = stablehlo.multiply %160, %160 : tensor<512x256xf32>
    %162 = stablehlo.multiply %161, %160 : tensor<512x256xf32>
    %cst_39 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %163 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %164 = stablehlo.multiply %163, %162 : tensor<512x256xf32>
    %165 = stablehlo.add %160, %164 : tensor<512x256xf32>
    %cst_40 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %166 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %167 = stablehlo.multiply %166, %165 : tensor<512x256xf32>
    %168 = stablehlo.tanh %167 : tensor<512x256xf32>
    %cst_41 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %169 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %170 = stablehlo.add %169, %168 : tensor<512x256xf32>
    %cst_42 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %171 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %172 = stablehlo.multiply %171, %170 : tensor<512x256xf32>
    %173 = stablehlo.multiply %160, %172 : tensor<512x256xf32>
    %174 = stablehlo.dot_general %173, %arg21, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %175 = stablehlo.add %159, %174 : tensor<512x256xf32>
    %176 = stablehlo.dot_general %175, %arg22, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %177 = stablehlo.multiply %176, %176 : tensor<512x256xf32>
    %178 = stablehlo.multiply %177, %176 : tensor<512x256xf32>
    %cst_43 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %179 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %180 = stablehlo.multiply %179, %178 : tensor<512x256xf32>
    %181 = stablehlo.add %176, %180 : tensor<512x256xf32>
    %cst_44 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %183 = stablehlo.multiply %182, %181 : tensor<512x256xf32>
    %184 = stablehlo.tanh %183 : tensor<512x256xf32>
    %cst_45 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %185 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %186 = stablehlo.add %185, %184 : tensor<512x256xf32>
    %cst_46 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %187 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %188 = stablehlo.multiply %187, %186 : tensor<512x256xf32>
    %189 = stablehlo.multiply %176, %188 : tensor<512x256xf32>
    %190 = stablehlo.dot_general %189, %arg23, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %191 = stablehlo.add %175, %190 : tensor<512x256xf32>
    %192 = stablehlo.multiply %191, %191 : tensor<512x256xf32>
    %cst_47 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %193 = stablehlo.reduce(%192 init: %cst_47) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x256xf32>, tensor<f32>) -> tensor<f32>
    %cst_48 = stablehlo.constant dense<1.310720e+05> : tensor<f32>
    %194 = stablehlo.divide %193, %cst_48 : tensor<f32>
    %cst_49 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_50 = stablehlo.constant dense<1.310720e+05> : tensor<f32>
    %195 = stablehlo.divide %cst_49, %cst_50 : tensor<f32>
    %196 = stablehlo.broadcast_in_dim %195, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %197 = stablehlo.multiply %191, %196 : tensor<512x256xf32>
    %198 = stablehlo.multiply %196, %191 : tensor<512x256xf32>
    %199 = stablehlo.add %197, %198 : tensor<512x256xf32>
    %200:4 = stablehlo.optimization_barrier %175, %arg22, %arg23, %199 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %201 = stablehlo.dot_general %200#0, %200#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %202 = stablehlo.multiply %201, %201 : tensor<512x256xf32>
    %203 = stablehlo.multiply %202, %201 : tensor<512x256xf32>
    %204 = stablehlo.multiply %201, %201 : tensor<512x256xf32>
    %cst_51 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %205 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %206 = stablehlo.multiply %205, %204 : tensor<512x256xf32>
    %cst_52 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %207 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %208 = stablehlo.multiply %207, %203 : tensor<512x256xf32>
    %209 = stablehlo.add %201, %208 : tensor<512x256xf32>
    %cst_53 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %210 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %211 = stablehlo.multiply %210, %209 : tensor<512x256xf32>
    %212 = stablehlo.tanh %211 : tensor<512x256xf32>
    %cst_54 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %214 = stablehlo.subtract %213, %212 : tensor<512x256xf32>
    %cst_55 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %215 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %216 = stablehlo.add %215, %212 : tensor<512x256xf32>
    %cst_56 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %217 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %218 = stablehlo.multiply %217, %216 : tensor<512x256xf32>
    %219 = stablehlo.multiply %201, %218 : tensor<512x256xf32>
    %220 = stablehlo.dot_general %200#3, %219, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %221 = stablehlo.transpose %220, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %222 = stablehlo.dot_general %200#3, %200#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %223 = stablehlo.multiply %201, %222 : tensor<512x256xf32>
    %224 = stablehlo.multiply %222, %218 : tensor<512x256xf32>
    %cst_57 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %225 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %226 = stablehlo.multiply %225, %223 : tensor<512x256xf32>
    %227 = stablehlo.multiply %226, %214 : tensor<512x256xf32>
    %228 = stablehlo.multiply %227, %212 : tensor<512x256xf32>
    %229 = stablehlo.add %227, %228 : tensor<512x256xf32>
    %cst_58 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %230 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %231 = stablehlo.multiply %230, %229 : tensor<512x256xf32>
    %232 = stablehlo.add %224, %231 : tensor<512x256xf32>
    %cst_59 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %233 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %234 = stablehlo.multiply %233, %231 : tensor<512x256xf32>
    %235 = stablehlo.multiply %234, %206 : tensor<512x256xf32>
    %236 = stablehlo.add %232, %235 : tensor<512x256xf32>
    %237 = stablehlo.dot_general %236, %200#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %238 = stablehlo.transpose %237, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %239 = stablehlo.dot_general %236, %200#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %240 = stablehlo.add %200#3, %239 : tensor<512x256xf32>
    %241:4 = stablehlo.optimization_barrier %159, %arg20, %arg21, %240 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %242 = stablehlo.dot_general %241#0, %241#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %243 = stablehlo.multiply %242, %242 : tensor<512x256xf32>
    %244 = stablehlo.multiply %243, %242 : tensor<512x256xf32>
    %245 = stablehlo.multiply %242, %242 : tensor<512x256xf32>
    %cst_60 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %246 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %247 = stablehlo.multiply %246, %245 : tensor<512x256xf32>
    %cst_61 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %248 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %249 = stablehlo.multiply %248, %244 : tensor<512x256xf32>
    %250 = stablehlo.add %242, %249 : tensor<512x256xf32>
    %cst_62 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %251 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %252 = stablehlo.multiply %251, %250 : tensor<512x256xf32>
    %253 = stablehlo.tanh %252 : tensor<512x256xf32>
    %cst_63 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %254 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %255 = stablehlo.subtract %254, %253 : tensor<512x256xf32>
    %cst_64 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %256 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %257 = stablehlo.add %256, %253 : tensor<512x256xf32>
    %cst_65 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %258 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %259 = stablehlo.multiply %258, %257 : tensor<512x256xf32>
    %260 = stablehlo.multiply %242, %259 : tensor<512x256xf32>
    %261 = stablehlo.dot_general %241#3, %260, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %262 = stablehlo.transpose %261, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %263 = stablehlo.dot_general %241#3, %241#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %264 = stablehlo.multiply %242, %263 : tensor<512x256xf32>
    %265 = stablehlo.multiply %263, %259 : tensor<512x256xf32>
    %cst_66 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %266 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %267 = stablehlo.multiply %266, %264 : tensor<512x256xf32>
    %268 = stablehlo.multiply %267, %255 : tensor<512x256xf32>
    %269 = stablehlo.multiply %268, %253 : tensor<512x256xf32>
    %270 = stablehlo.add %268, %269 : tensor<512x256xf32>
    %cst_67 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %271 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %272 = stablehlo.multiply %271, %270 : tensor<512x256xf32>
    %273 = stablehlo.add %265, %272 : tensor<512x256xf32>
    %cst_68 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %274 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %275 = stablehlo.multiply %274, %272 : tensor<512x256xf32>
    %276 = stablehlo.multiply %275, %247 : tensor<512x256xf32>
    %277 = stablehlo.add %273, %276 : tensor<512x256xf32>
    %278 = stablehlo.dot_general %277, %241#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %279 = stablehlo.transpose %278, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %280 = stablehlo.dot_general %277, %241#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %281 = stablehlo.add %241#3, %280 : tensor<512x256xf32>
    %282:4 = stablehlo.optimization_barrier %143, %arg18, %arg19, %281 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %283 = stablehlo.dot_general %282#0, %282#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %284 = stablehlo.multiply %283, %283 : tensor<512x256xf32>
    %285 = stablehlo.multiply %284, %283 : tensor<512x256xf32>
    %286 = stablehlo.multiply %283, %283 : tensor<512x256xf32>
    %cst_69 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %287 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %288 = stablehlo.multiply %287, %286 : tensor<512x256xf32>
    %cst_70 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %289 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %290 = stablehlo.multiply %289, %285 : tensor<512x256xf32>
    %291 = stablehlo.add %283, %290 : tensor<512x256xf32>
    %cst_71 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %292 = stablehlo.broadcast_in_dim %cst_71, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %293 = stablehlo.multiply %292, %291 : tensor<512x256xf32>
    %294 = stablehlo.tanh %293 : tensor<512x256xf32>
    %cst_72 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %295 = stablehlo.broadcast_in_dim %cst_72, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %296 = stablehlo.subtract %295, %294 : tensor<512x256xf32>
    %cst_73 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %297 = stablehlo.broadcast_in_dim %cst_73, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %298 = stablehlo.add %297, %294 : tensor<512x256xf32>
    %cst_74 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %299 = stablehlo.broadcast_in_dim %cst_74, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %300 = stablehlo.multiply %299, %298 : tensor<512x256xf32>
    %301 = stablehlo.multiply %283, %300 : tensor<512x256xf32>
    %302 = stablehlo.dot_general %282#3, %301, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %303 = stablehlo.transpose %302, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %304 = stablehlo.dot_general %282#3, %282#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %305 = stablehlo.multiply %283, %304 : tensor<512x256xf32>
    %306 = stablehlo.multiply %304, %300 : tensor<512x256xf32>
    %cst_75 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %307 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %308 = stablehlo.multiply %307, %305 : tensor<512x256xf32>
    %309 = stablehlo.multiply %308, %296 : tensor<512x256xf32>
    %310 = stablehlo.multiply %309, %294 : tensor<512x256xf32>
    %311 = stablehlo.add %309, %310 : tensor<512x256xf32>
    %cst_76 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %312 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %313 = stablehlo.multiply %312, %311 : tensor<512x256xf32>
    %314 = stablehlo.add %306, %313 : tensor<512x256xf32>
    %cst_77 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %315 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %316 = stablehlo.multiply %315, %313 : tensor<512x256xf32>
    %317 = stablehlo.multiply %316, %288 : tensor<512x256xf32>
    %318 = stablehlo.add %314, %317 : tensor<512x256xf32>
    %319 = stablehlo.dot_general %318, %282#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %320 = stablehlo.transpose %319, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %321 = stablehlo.dot_general %318, %282#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %322 = stablehlo.add %282#3, %321 : tensor<512x256xf32>
    %323:4 = stablehlo.optimization_barrier %127, %arg16, %arg17, %322 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %324 = stablehlo.dot_general %323#0, %323#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %325 = stablehlo.multiply %324, %324 : tensor<512x256xf32>
    %326 = stablehlo.multiply %325, %324 : tensor<512x256xf32>
    %327 = stablehlo.multiply %324, %324 : tensor<512x256xf32>
    %cst_78 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %328 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %329 = stablehlo.multiply %328, %327 : tensor<512x256xf32>
    %cst_79 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %330 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %331 = stablehlo.multiply %330, %326 : tensor<512x256xf32>
    %332 = stablehlo.add %324, %331 : tensor<512x256xf32>
    %cst_80 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %333 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %334 = stablehlo.multiply %333, %332 : tensor<512x256xf32>
    %335 = stablehlo.tanh %334 : tensor<512x256xf32>
    %cst_81 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %336 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %337 = stablehlo.subtract %336, %335 : tensor<512x256xf32>
    %cst_82 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %338 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %339 = stablehlo.add %338, %335 : tensor<512x256xf32>
    %cst_83 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %340 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %341 = stablehlo.multiply %340, %339 : tensor<512x256xf32>
    %342 = stablehlo.multiply %324, %341 : tensor<512x256xf32>
    %343 = stablehlo.dot_general %323#3, %342, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %344 = stablehlo.transpose %343, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %345 = stablehlo.dot_general %323#3, %323#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %346 = stablehlo.multiply %324, %345 : tensor<512x256xf32>
    %347 = stablehlo.multiply %345, %341 : tensor<512x256xf32>
    %cst_84 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %348 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %349 = stablehlo.multiply %348, %346 : tensor<512x256xf32>
    %350 = stablehlo.multiply %349, %337 : tensor<512x256xf32>
    %351 = stablehlo.multiply %350, %335 : tensor<512x256xf32>
    %352 = stablehlo.add %350, %351 : tensor<512x256xf32>
    %cst_85 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %353 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %354 = stablehlo.multiply %353, %352 : tensor<512x256xf32>
    %355 = stablehlo.add %347, %354 : tensor<512x256xf32>
    %cst_86 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %356 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %357 = stablehlo.multiply %356, %354 : tensor<512x256xf32>
    %358 = stablehlo.multiply %357, %329 : tensor<512x256xf32>
    %359 = stablehlo.add %355, %358 : tensor<512x256xf32>
    %360 = stablehlo.dot_general %359, %323#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %361 = stablehlo.transpose %360, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %362 = stablehlo.dot_general %359, %323#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %363 = stablehlo.add %323#3, %362 : tensor<512x256xf32>
    %364:4 = stablehlo.optimization_barrier %111, %arg14, %arg15, %363 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %365 = stablehlo.dot_general %364#0, %364#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %366 = stablehlo.multiply %365, %365 : tensor<512x256xf32>
    %367 = stablehlo.multiply %366, %365 : tensor<512x256xf32>
    %368 = stablehlo.multiply %365, %365 : tensor<512x256xf32>
    %cst_87 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %369 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %370 = stablehlo.multiply %369, %368 : tensor<512x256xf32>
    %cst_88 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %371 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %372 = stablehlo.multiply %371, %367 : tensor<512x256xf32>
    %373 = stablehlo.add %365, %372 : tensor<512x256xf32>
    %cst_89 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %374 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %375 = stablehlo.multiply %374, %373 : tensor<512x256xf32>
    %376 = stablehlo.tanh %375 : tensor<512x256xf32>
    %cst_90 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %377 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %378 = stablehlo.subtract %377, %376 : tensor<512x256xf32>
    %cst_91 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %379 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %380 = stablehlo.add %379, %376 : tensor<512x256xf32>
    %cst_92 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %381 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %382 = stablehlo.multiply %381, %380 : tensor<512x256xf32>
    %383 = stablehlo.multiply %365, %382 : tensor<512x256xf32>
    %384 = stablehlo.dot_general %364#3, %383, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %385 = stablehlo.transpose %384, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %386 = stablehlo.dot_general %364#3, %364#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %387 = stablehlo.multiply %365, %386 : tensor<512x256xf32>
    %388 = stablehlo.multiply %386, %382 : tensor<512x256xf32>
    %cst_93 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %389 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %390 = stablehlo.multiply %389, %387 : tensor<512x256xf32>
    %391 = stablehlo.multiply %390, %378 : tensor<512x256xf32>
    %392 = stablehlo.multiply %391, %376 : tensor<512x256xf32>
    %393 = stablehlo.add %391, %392 : tensor<512x256xf32>
    %cst_94 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %394 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %395 = stablehlo.multiply %394, %393 : tensor<512x256xf32>
    %396 = stablehlo.add %388, %395 : tensor<512x256xf32>
    %cst_95 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %397 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %398 = stablehlo.multiply %397, %395 : tensor<512x256xf32>
    %399 = stablehlo.multiply %398, %370 : tensor<512x256xf32>
    %400 = stablehlo.add %396, %399 : tensor<512x256xf32>
    %401 = stablehlo.dot_general %400, %364#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %402 = stablehlo.transpose %401, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %403 = stablehlo.dot_general %400, %364#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %404 = stablehlo.add %364#3, %403 : tensor<512x256xf32>
    %405:4 = stablehlo.optimization_barrier %95, %arg12, %arg13, %404 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %406 = stablehlo.dot_general %405#0, %405#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %407 = stablehlo.multiply %406, %406 : tensor<512x256xf32>
    %408 = stablehlo.multiply %407, %406 : tensor<512x256xf32>
    %409 = stablehlo.multiply %406, %406 : tensor<512x256xf32>
    %cst_96 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %410 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %411 = stablehlo.multiply %410, %409 : tensor<512x256xf32>
    %cst_97 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %412 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %413 = stablehlo.multiply %412, %408 : tensor<512x256xf32>
    %414 = stablehlo.add %406, %413 : tensor<512x256xf32>
    %cst_98 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %415 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %416 = stablehlo.multiply %415, %414 : tensor<512x256xf32>
    %417 = stablehlo.tanh %416 : tensor<512x256xf32>
    %cst_99 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %418 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %419 = stablehlo.subtract %418, %417 : tensor<512x256xf32>
    %cst_100 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %420 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %421 = stablehlo.add %420, %417 : tensor<512x256xf32>
    %cst_101 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %422 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %423 = stablehlo.multiply %422, %421 : tensor<512x256xf32>
    %424 = stablehlo.multiply %406, %423 : tensor<512x256xf32>
    %425 = stablehlo.dot_general %405#3, %424, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %426 = stablehlo.transpose %425, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %427 = stablehlo.dot_general %405#3, %405#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %428 = stablehlo.multiply %406, %427 : tensor<512x256xf32>
    %429 = stablehlo.multiply %427, %423 : tensor<512x256xf32>
    %cst_102 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %430 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %431 = stablehlo.multiply %430, %428 : tensor<512x256xf32>
    %432 = stablehlo.multiply %431, %419 : tensor<512x256xf32>
    %433 = stablehlo.multiply %432, %417 : tensor<512x256xf32>
    %434 = stablehlo.add %432, %433 : tensor<512x256xf32>
    %cst_103 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %435 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %436 = stablehlo.multiply %435, %434 : tensor<512x256xf32>
    %437 = stablehlo.add %429, %436 : tensor<512x256xf32>
    %cst_104 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %438 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %439 = stablehlo.multiply %438, %436 : tensor<512x256xf32>
    %440 = stablehlo.multiply %439, %411 : tensor<512x256xf32>
    %441 = stablehlo.add %437, %440 : tensor<512x256xf32>
    %442 = stablehlo.dot_general %441, %405#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %443 = stablehlo.transpose %442, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %444 = stablehlo.dot_general %441, %405#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %445 = stablehlo.add %405#3, %444 : tensor<512x256xf32>
    %446:4 = stablehlo.optimization_barrier %79, %arg10, %arg11, %445 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %447 = stablehlo.dot_general %446#0, %446#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %448 = stablehlo.multiply %447, %447 : tensor<512x256xf32>
    %449 = stablehlo.multiply %448, %447 : tensor<512x256xf32>
    %450 = stablehlo.multiply %447, %447 : tensor<512x256xf32>
    %cst_105 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %451 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %452 = stablehlo.multiply %451, %450 : tensor<512x256xf32>
    %cst_106 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %453 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %454 = stablehlo.multiply %453, %449 : tensor<512x256xf32>
    %455 = stablehlo.add %447, %454 : tensor<512x256xf32>
    %cst_107 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %456 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %457 = stablehlo.multiply %456, %455 : tensor<512x256xf32>
    %458 = stablehlo.tanh %457 : tensor<512x256xf32>
    %cst_108 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %459 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %460 = stablehlo.subtract %459, %458 : tensor<512x256xf32>
    %cst_109 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %461 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %462 = stablehlo.add %461, %458 : tensor<512x256xf32>
    %cst_110 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %463 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %464 = stablehlo.multiply %463, %462 : tensor<512x256xf32>
    %465 = stablehlo.multiply %447, %464 : tensor<512x256xf32>
    %466 = stablehlo.dot_general %446#3, %465, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %467 = stablehlo.transpose %466, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %468 = stablehlo.dot_general %446#3, %446#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %469 = stablehlo.multiply %447, %468 : tensor<512x256xf32>
    %470 = stablehlo.multiply %468, %464 : tensor<512x256xf32>
    %cst_111 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %471 = stablehlo.broadcast_in_dim %cst_111, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %472 = stablehlo.multiply %471, %469 : tensor<512x256xf32>
    %473 = stablehlo.multiply %472, %460 : tensor<512x256xf32>
    %474 = stablehlo.multiply %473, %458 : tensor<512x256xf32>
    %475 = stablehlo.add %473, %474 : tensor<512x256xf32>
    %cst_112 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %476 = stablehlo.broadcast_in_dim %cst_112, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %477 = stablehlo.multiply %476, %475 : tensor<512x256xf32>
    %478 = stablehlo.add %470, %477 : tensor<512x256xf32>
    %cst_113 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %479 = stablehlo.broadcast_in_dim %cst_113, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %480 = stablehlo.multiply %479, %477 : tensor<512x256xf32>
    %481 = stablehlo.multiply %480, %452 : tensor<512x256xf32>
    %482 = stablehlo.add %478, %481 : tensor<512x256xf32>
    %483 = stablehlo.dot_general %482, %446#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %484 = stablehlo.transpose %483, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %485 = stablehlo.dot_general %482, %446#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %486 = stablehlo.add %446#3, %485 : tensor<512x256xf32>
    %487:4 = stablehlo.optimization_barrier %63, %arg8, %arg9, %486 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %488 = stablehlo.dot_general %487#0, %487#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %489 = stablehlo.multiply %488, %488 : tensor<512x256xf32>
    %490 = stablehlo.multiply %489, %488 : tensor<512x256xf32>
    %491 = stablehlo.multiply %488, %488 : tensor<512x256xf32>
    %cst_114 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %492 = stablehlo.broadcast_in_dim %cst_114, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %493 = stablehlo.multiply %492, %491 : tensor<512x256xf32>
    %cst_115 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %494 = stablehlo.broadcast_in_dim %cst_115, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %495 = stablehlo.multiply %494, %490 : tensor<512x256xf32>
    %496 = stablehlo.add %488, %495 : tensor<512x256xf32>
    %cst_116 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %497 = stablehlo.broadcast_in_dim %cst_116, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %498 = stablehlo.multiply %497, %496 : tensor<512x256xf32>
    %499 = stablehlo.tanh %498 : tensor<512x256xf32>
    %cst_117 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %500 = stablehlo.broadcast_in_dim %cst_117, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %501 = stablehlo.subtract %500, %499 : tensor<512x256xf32>
    %cst_118 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %502 = stablehlo.broadcast_in_dim %cst_118, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %503 = stablehlo.add %502, %499 : tensor<512x256xf32>
    %cst_119 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %504 = stablehlo.broadcast_in_dim %cst_119, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %505 = stablehlo.multiply %504, %503 : tensor<512x256xf32>
    %506 = stablehlo.multiply %488, %505 : tensor<512x256xf32>
    %507 = stablehlo.dot_general %487#3, %506, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %508 = stablehlo.transpose %507, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %509 = stablehlo.dot_general %487#3, %487#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %510 = stablehlo.multiply %488, %509 : tensor<512x256xf32>
    %511 = stablehlo.multiply %509, %505 : tensor<512x256xf32>
    %cst_120 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %512 = stablehlo.broadcast_in_dim %cst_120, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %513 = stablehlo.multiply %512, %510 : tensor<512x256xf32>
    %514 = stablehlo.multiply %513, %501 : tensor<512x256xf32>
    %515 = stablehlo.multiply %514, %499 : tensor<512x256xf32>
    %516 = stablehlo.add %514, %515 : tensor<512x256xf32>
    %cst_121 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %517 = stablehlo.broadcast_in_dim %cst_121, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %518 = stablehlo.multiply %517, %516 : tensor<512x256xf32>
    %519 = stablehlo.add %511, %518 : tensor<512x256xf32>
    %cst_122 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %520 = stablehlo.broadcast_in_dim %cst_122, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %521 = stablehlo.multiply %520, %518 : tensor<512x256xf32>
    %522 = stablehlo.multiply %521, %493 : tensor<512x256xf32>
    %523 = stablehlo.add %519, %522 : tensor<512x256xf32>
    %524 = stablehlo.dot_general %523, %487#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %525 = stablehlo.transpose %524, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %526 = stablehlo.dot_general %523, %487#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %527 = stablehlo.add %487#3, %526 : tensor<512x256xf32>
    %528:4 = stablehlo.optimization_barrier %47, %arg6, %arg7, %527 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %529 = stablehlo.dot_general %528#0, %528#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %530 = stablehlo.multiply %529, %529 : tensor<512x256xf32>
    %531 = stablehlo.multiply %530, %529 : tensor<512x256xf32>
    %532 = stablehlo.multiply %529, %529 : tensor<512x256xf32>
    %cst_123 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %533 = stablehlo.broadcast_in_dim %cst_123, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %534 = stablehlo.multiply %533, %532 : tensor<512x256xf32>
    %cst_124 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %535 = stablehlo.broadcast_in_dim %cst_124, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %536 = stablehlo.multiply %535, %531 : tensor<512x256xf32>
    %537 = stablehlo.add %529, %536 : tensor<512x256xf32>
    %cst_125 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %538 = stablehlo.broadcast_in_dim %cst_125, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %539 = stablehlo.multiply %538, %537 : tensor<512x256xf32>
    %540 = stablehlo.tanh %539 : tensor<512x256xf32>
    %cst_126 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %541 = stablehlo.broadcast_in_dim %cst_126, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %542 = stablehlo.subtract %541, %540 : tensor<512x256xf32>
    %cst_127 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %543 = stablehlo.broadcast_in_dim %cst_127, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %544 = stablehlo.add %543, %540 : tensor<512x256xf32>
    %cst_128 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %545 = stablehlo.broadcast_in_dim %cst_128, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %546 = stablehlo.multiply %545, %544 : tensor<512x256xf32>
    %547 = stablehlo.multiply %529, %546 : tensor<512x256xf32>
    %548 = stablehlo.dot_general %528#3, %547, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %549 = stablehlo.transpose %548, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %550 = stablehlo.dot_general %528#3, %528#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %551 = stablehlo.multiply %529, %550 : tensor<512x256xf32>
    %552 = stablehlo.multiply %550, %546 : tensor<512x256xf32>
    %cst_129 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %553 = stablehlo.broadcast_in_dim %cst_129, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %554 = stablehlo.multiply %553, %551 : tensor<512x256xf32>
    %555 = stablehlo.multiply %554, %542 : tensor<512x256xf32>
    %556 = stablehlo.multiply %555, %540 : tensor<512x256xf32>
    %557 = stablehlo.add %555, %556 : tensor<512x256xf32>
    %cst_130 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %558 = stablehlo.broadcast_in_dim %cst_130, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %559 = stablehlo.multiply %558, %557 : tensor<512x256xf32>
    %560 = stablehlo.add %552, %559 : tensor<512x256xf32>
    %cst_131 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %561 = stablehlo.broadcast_in_dim %cst_131, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %562 = stablehlo.multiply %561, %559 : tensor<512x256xf32>
    %563 = stablehlo.multiply %562, %534 : tensor<512x256xf32>
    %564 = stablehlo.add %560, %563 : tensor<512x256xf32>
    %565 = stablehlo.dot_general %564, %528#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %566 = stablehlo.transpose %565, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %567 = stablehlo.dot_general %564, %528#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %568 = stablehlo.add %528#3, %567 : tensor<512x256xf32>
    %569:4 = stablehlo.optimization_barrier %31, %arg4, %arg5, %568 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %570 = stablehlo.dot_general %569#0, %569#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %571 = stablehlo.multiply %570, %570 : tensor<512x256xf32>
    %572 = stablehlo.multiply %571, %570 : tensor<512x256xf32>
    %573 = stablehlo.multiply %570, %570 : tensor<512x256xf32>
    %cst_132 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %574 = stablehlo.broadcast_in_dim %cst_132, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %575 = stablehlo.multiply %574, %573 : tensor<512x256xf32>
    %cst_133 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %576 = stablehlo.broadcast_in_dim %cst_133, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %577 = stablehlo.multiply %576, %572 : tensor<512x256xf32>
    %578 = stablehlo.add %570, %577 : tensor<512x256xf32>
    %cst_134 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %579 = stablehlo.broadcast_in_dim %cst_134, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %580 = stablehlo.multiply %579, %578 : tensor<512x256xf32>
    %581 = stablehlo.tanh %580 : tensor<512x256xf32>
    %cst_135 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %582 = stablehlo.broadcast_in_dim %cst_135, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %583 = stablehlo.subtract %582, %581 : tensor<512x256xf32>
    %cst_136 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %584 = stablehlo.broadcast_in_dim %cst_136, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %585 = stablehlo.add %584, %581 : tensor<512x256xf32>
    %cst_137 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %586 = stablehlo.broadcast_in_dim %cst_137, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %587 = stablehlo.multiply %586, %585 : tensor<512x256xf32>
    %588 = stablehlo.multiply %570, %587 : tensor<512x256xf32>
    %589 = stablehlo.dot_general %569#3, %588, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %590 = stablehlo.transpose %589, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %591 = stablehlo.dot_general %569#3, %569#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %592 = stablehlo.multiply %570, %591 : tensor<512x256xf32>
    %593 = stablehlo.multiply %591, %587 : tensor<512x256xf32>
    %cst_138 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %594 = stablehlo.broadcast_in_dim %cst_138, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %595 = stablehlo.multiply %594, %592 : tensor<512x256xf32>
    %596 = stablehlo.multiply %595, %583 : tensor<512x256xf32>
    %597 = stablehlo.multiply %596, %581 : tensor<512x256xf32>
    %598 = stablehlo.add %596, %597 : tensor<512x256xf32>
    %cst_139 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %599 = stablehlo.broadcast_in_dim %cst_139, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %600 = stablehlo.multiply %599, %598 : tensor<512x256xf32>
    %601 = stablehlo.add %593, %600 : tensor<512x256xf32>
    %cst_140 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %602 = stablehlo.broadcast_in_dim %cst_140, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %603 = stablehlo.multiply %602, %600 : tensor<512x256xf32>
    %604 = stablehlo.multiply %603, %575 : tensor<512x256xf32>
    %605 = stablehlo.add %601, %604 : tensor<512x256xf32>
    %606 = stablehlo.dot_general %605, %569#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %607 = stablehlo.transpose %606, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %608 = stablehlo.dot_general %605, %569#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %609 = stablehlo.add %569#3, %608 : tensor<512x256xf32>
    %610:4 = stablehlo.optimization_barrier %15, %arg2, %arg3, %609 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %611 = stablehlo.dot_general %610#0, %610#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %612 = stablehlo.multiply %611, %611 : tensor<512x256xf32>
    %613 = stablehlo.multiply %612, %611 : tensor<512x256xf32>
    %614 = stablehlo.multiply %611, %611 : tensor<512x256xf32>
    %cst_141 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %615 = stablehlo.broadcast_in_dim %cst_141, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %616 = stablehlo.multiply %615, %614 : tensor<512x256xf32>
    %cst_142 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %617 = stablehlo.broadcast_in_dim %cst_142, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %618 = stablehlo.multiply %617, %613 : tensor<512x256xf32>
    %619 = stablehlo.add %611, %618 : tensor<512x256xf32>
    %cst_143 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %620 = stablehlo.broadcast_in_dim %cst_143, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %621 = stablehlo.multiply %620, %619 : tensor<512x256xf32>
    %622 = stablehlo.tanh %621 : tensor<512x256xf32>
    %cst_144 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %623 = stablehlo.broadcast_in_dim %cst_144, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %624 = stablehlo.subtract %623, %622 : tensor<512x256xf32>
    %cst_145 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %625 = stablehlo.broadcast_in_dim %cst_145, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %626 = stablehlo.add %625, %622 : tensor<512x256xf32>
    %cst_146 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %627 = stablehlo.broadcast_in_dim %cst_146, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %628 = stablehlo.multiply %627, %626 : tensor<512x256xf32>
    %629 = stablehlo.multiply %611, %628 : tensor<512x256xf32>
    %630 = stablehlo.dot_general %610#3, %629, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %631 = stablehlo.transpose %630, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %632 = stablehlo.dot_general %610#3, %610#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %633 = stablehlo.multiply %611, %632 : tensor<512x256xf32>
    %634 = stablehlo.multiply %632, %628 : tensor<512x256xf32>
    %cst_147 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %635 = stablehlo.broadcast_in_dim %cst_147, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %636 = stablehlo.multiply %635, %633 : tensor<512x256xf32>
    %637 = stablehlo.multiply %636, %624 : tensor<512x256xf32>
    %638 = stablehlo.multiply %637, %622 : tensor<512x256xf32>
    %639 = stablehlo.add %637, %638 : tensor<512x256xf32>
    %cst_148 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %640 = stablehlo.broadcast_in_dim %cst_148, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %641 = stablehlo.multiply %640, %639 : tensor<512x256xf32>
    %642 = stablehlo.add %634, %641 : tensor<512x256xf32>
    %cst_149 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %643 = stablehlo.broadcast_in_dim %cst_149, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %644 = stablehlo.multiply %643, %641 : tensor<512x256xf32>
    %645 = stablehlo.multiply %644, %616 : tensor<512x256xf32>
    %646 = stablehlo.add %642, %645 : tensor<512x256xf32>
    %647 = stablehlo.dot_general %646, %610#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %648 = stablehlo.transpose %647, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %649 = stablehlo.dot_general %646, %610#1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %650 = stablehlo.add %610#3, %649 : tensor<512x256xf32>
    %651:4 = stablehlo.optimization_barrier %arg24, %arg0, %arg1, %650 : tensor<512x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<512x256xf32>
    %652 = stablehlo.dot_general %651#0, %651#1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %653 = stablehlo.multiply %652, %652 : tensor<512x256xf32>
    %654 = stablehlo.multiply %653, %652 : tensor<512x256xf32>
    %655 = stablehlo.multiply %652, %652 : tensor<512x256xf32>
    %cst_150 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %656 = stablehlo.broadcast_in_dim %cst_150, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %657 = stablehlo.multiply %656, %655 : tensor<512x256xf32>
    %cst_151 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %658 = stablehlo.broadcast_in_dim %cst_151, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %659 = stablehlo.multiply %658, %654 : tensor<512x256xf32>
    %660 = stablehlo.add %652, %659 : tensor<512x256xf32>
    %cst_152 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %661 = stablehlo.broadcast_in_dim %cst_152, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %662 = stablehlo.multiply %661, %660 : tensor<512x256xf32>
    %663 = stablehlo.tanh %662 : tensor<512x256xf32>
    %cst_153 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %664 = stablehlo.broadcast_in_dim %cst_153, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %665 = stablehlo.subtract %664, %663 : tensor<512x256xf32>
    %cst_154 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %666 = stablehlo.broadcast_in_dim %cst_154, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %667 = stablehlo.add %666, %663 : tensor<512x256xf32>
    %cst_155 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %668 = stablehlo.broadcast_in_dim %cst_155, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %669 = stablehlo.multiply %668, %667 : tensor<512x256xf32>
    %670 = stablehlo.multiply %652, %669 : tensor<512x256xf32>
    %671 = stablehlo.dot_general %651#3, %670, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %672 = stablehlo.transpose %671, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %673 = stablehlo.dot_general %651#3, %651#2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %674 = stablehlo.multiply %652, %673 : tensor<512x256xf32>
    %675 = stablehlo.multiply %673, %669 : tensor<512x256xf32>
    %cst_156 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %676 = stablehlo.broadcast_in_dim %cst_156, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %677 = stablehlo.multiply %676, %674 : tensor<512x256xf32>
    %678 = stablehlo.multiply %677, %665 : tensor<512x256xf32>
    %679 = stablehlo.multiply %678, %663 : tensor<512x256xf32>
    %680 = stablehlo.add %678, %679 : tensor<512x256xf32>
    %cst_157 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %681 = stablehlo.broadcast_in_dim %cst_157, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %682 = stablehlo.multiply %681, %680 : tensor<512x256xf32>
    %683 = stablehlo.add %675, %682 : tensor<512x256xf32>
    %cst_158 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %684 = stablehlo.broadcast_in_dim %cst_158, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %685 = stablehlo.multiply %684, %682 : tensor<512x256xf32>
    %686 = stablehlo.multiply %685, %657 : tensor<512x256xf32>
    %687 = stablehlo.add %683, %686 : tensor<512x256xf32>
    %688 = stablehlo.dot_general %687, %651#0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %689 = stablehlo.transpose %688, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    return %194, %689, %672, %648, %631, %607, %590, %566, %549, %525, %508, %484, %467, %443, %426, %402, %385, %361, %344, %320, %303, %279, %262, %238, %221 : tensor<f32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
  }
}
