module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x256xf32>, %arg1: tensor<256x256xf32>, %arg2: tensor<256x256xf32>, %arg3: tensor<256x256xf32>, %arg4: tensor<256x256xf32>, %arg5: tensor<256x256xf32>, %arg6: tensor<256x256xf32>, %arg7: tensor<256x256xf32>, %arg8: tensor<256x256xf32>, %arg9: tensor<256x256xf32>, %arg10: tensor<256x256xf32>, %arg11: tensor<256x256xf32>, %arg12: tensor<256x256xf32>, %arg13: tensor<256x256xf32>, %arg14: tensor<256x256xf32>, %arg15: tensor<256x256xf32>, %arg16: tensor<256x256xf32>, %arg17: tensor<256x256xf32>, %arg18: tensor<256x256xf32>, %arg19: tensor<256x256xf32>, %arg20: tensor<256x256xf32>, %arg21: tensor<256x256xf32>, %arg22: tensor<256x256xf32>, %arg23: tensor<256x256xf32>, %arg24: tensor<512x256xf32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<256x256xf32> {jax.result_info = "result[1][0][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][0][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][1][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][1][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][2][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][2][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][3][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][3][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][4][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][4][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][5][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][5][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][6][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][6][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][7][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][7][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][8][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][8][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][9][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][9][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][10][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][10][1]"}, tensor<256x256xf32> {jax.result_info = "result[1][11][0]"}, tensor<256x256xf32> {jax.result_info = "result[1][11][1]"}) {
    %0 = stablehlo.dot_general %arg24, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<512x256xf32>
    %2 = stablehlo.multiply %1, %0 : tensor<512x256xf32>
    %3 = stablehlo.multiply %0, %0 : tensor<512x256xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %5 = stablehlo.multiply %4, %3 : tensor<512x256xf32>
    %cst_0 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %7 = stablehlo.multiply %6, %2 : tensor<512x256xf32>
    %8 = stablehlo.add %0, %7 : tensor<512x256xf32>
    %cst_1 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %10 = stablehlo.multiply %9, %8 : tensor<512x256xf32>
    %11 = stablehlo.tanh %10 : tensor<512x256xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %13 = stablehlo.subtract %12, %11 : tensor<512x256xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %15 = stablehlo.add %14, %11 : tensor<512x256xf32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %17 = stablehlo.multiply %16, %15 : tensor<512x256xf32>
    %18 = stablehlo.multiply %0, %17 : tensor<512x256xf32>
    %19 = stablehlo.dot_general %18, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %20 = stablehlo.add %arg24, %19 : tensor<512x256xf32>
    %21 = stablehlo.dot_general %20, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %22 = stablehlo.multiply %21, %21 : tensor<512x256xf32>
    %23 = stablehlo.multiply %22, %21 : tensor<512x256xf32>
    %24 = stablehlo.multiply %21, %21 : tensor<512x256xf32>
    %cst_5 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %26 = stablehlo.multiply %25, %24 : tensor<512x256xf32>
    %cst_6 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %28 = stablehlo.multiply %27, %23 : tensor<512x256xf32>
    %29 = stablehlo.add %21, %28 : tensor<512x256xf32>
    %cst_7 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %31 = stablehlo.multiply %30, %29 : tensor<512x256xf32>
    %32 = stablehlo.tanh %31 : tensor<512x256xf32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %34 = stablehlo.subtract %33, %32 : tensor<512x256xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %36 = stablehlo.add %35, %32 : tensor<512x256xf32>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %38 = stablehlo.multiply %37, %36 : tensor<512x256xf32>
    %39 = stablehlo.multiply %21, %38 : tensor<512x256xf32>
    %40 = stablehlo.dot_general %39, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %41 = stablehlo.add %20, %40 : tensor<512x256xf32>
    %42 = stablehlo.dot_general %41, %arg4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %43 = stablehlo.multiply %42, %42 : tensor<512x256xf32>
    %44 = stablehlo.multiply %43, %42 : tensor<512x256xf32>
    %45 = stablehlo.multiply %42, %42 : tensor<512x256xf32>
    %cst_11 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %47 = stablehlo.multiply %46, %45 : tensor<512x256xf32>
    %cst_12 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %49 = stablehlo.multiply %48, %44 : tensor<512x256xf32>
    %50 = stablehlo.add %42, %49 : tensor<512x256xf32>
    %cst_13 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %52 = stablehlo.multiply %51, %50 : tensor<512x256xf32>
    %53 = stablehlo.tanh %52 : tensor<512x256xf32>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %55 = stablehlo.subtract %54, %53 : tensor<512x256xf32>
    %cst_15 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %57 = stablehlo.add %56, %53 : tensor<512x256xf32>
    %cst_16 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %59 = stablehlo.multiply %58, %57 : tensor<512x256xf32>
    %60 = stablehlo.multiply %42, %59 : tensor<512x256xf32>
    %61 = stablehlo.dot_general %60, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %62 = stablehlo.add %41, %61 : tensor<512x256xf32>
    %63 = stablehlo.dot_general %62, %arg6, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %64 = stablehlo.multiply %63, %63 : tensor<512x256xf32>
    %65 = stablehlo.multiply %64, %63 : tensor<512x256xf32>
    %66 = stablehlo.multiply %63, %63 : tensor<512x256xf32>
    %cst_17 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %68 = stablehlo.multiply %67, %66 : tensor<512x256xf32>
    %cst_18 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %70 = stablehlo.multiply %69, %65 : tensor<512x256xf32>
    %71 = stablehlo.add %63, %70 : tensor<512x256xf32>
    %cst_19 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %73 = stablehlo.multiply %72, %71 : tensor<512x256xf32>
    %74 = stablehlo.tanh %73 : tensor<512x256xf32>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %76 = stablehlo.subtract %75, %74 : tensor<512x256xf32>
    %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %78 = stablehlo.add %77, %74 : tensor<512x256xf32>
    %cst_22 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %80 = stablehlo.multiply %79, %78 : tensor<512x256xf32>
    %81 = stablehlo.multiply %63, %80 : tensor<512x256xf32>
    %82 = stablehlo.dot_general %81, %arg7, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %83 = stablehlo.add %62, %82 : tensor<512x256xf32>
    %84 = stablehlo.dot_general %83, %arg8, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %85 = stablehlo.multiply %84, %84 : tensor<512x256xf32>
    %86 = stablehlo.multiply %85, %84 : tensor<512x256xf32>
    %87 = stablehlo.multiply %84, %84 : tensor<512x256xf32>
    %cst_23 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %89 = stablehlo.multiply %88, %87 : tensor<512x256xf32>
    %cst_24 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %91 = stablehlo.multiply %90, %86 : tensor<512x256xf32>
    %92 = stablehlo.add %84, %91 : tensor<512x256xf32>
    %cst_25 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %93 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %94 = stablehlo.multiply %93, %92 : tensor<512x256xf32>
    %95 = stablehlo.tanh %94 : tensor<512x256xf32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %96 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %97 = stablehlo.subtract %96, %95 : tensor<512x256xf32>
    %cst_27 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %98 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %99 = stablehlo.add %98, %95 : tensor<512x256xf32>
    %cst_28 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %100 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %101 = stablehlo.multiply %100, %99 : tensor<512x256xf32>
    %102 = stablehlo.multiply %84, %101 : tensor<512x256xf32>
    %103 = stablehlo.dot_general %102, %arg9, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %104 = stablehlo.add %83, %103 : tensor<512x256xf32>
    %105 = stablehlo.dot_general %104, %arg10, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %106 = stablehlo.multiply %105, %105 : tensor<512x256xf32>
    %107 = stablehlo.multiply %106, %105 : tensor<512x256xf32>
    %108 = stablehlo.multiply %105, %105 : tensor<512x256xf32>
    %cst_29 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %109 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %110 = stablehlo.multiply %109, %108 : tensor<512x256xf32>
    %cst_30 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %111 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %112 = stablehlo.multiply %111, %107 : tensor<512x256xf32>
    %113 = stablehlo.add %105, %112 : tensor<512x256xf32>
    %cst_31 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %114 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %115 = stablehlo.multiply %114, %113 : tensor<512x256xf32>
    %116 = stablehlo.tanh %115 : tensor<512x256xf32>
    %cst_32 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %118 = stablehlo.subtract %117, %116 : tensor<512x256xf32>
    %cst_33 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %120 = stablehlo.add %119, %116 : tensor<512x256xf32>
    %cst_34 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %122 = stablehlo.multiply %121, %120 : tensor<512x256xf32>
    %123 = stablehlo.multiply %105, %122 : tensor<512x256xf32>
    %124 = stablehlo.dot_general %123, %arg11, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %125 = stablehlo.add %104, %124 : tensor<512x256xf32>
    %126 = stablehlo.dot_general %125, %arg12, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %127 = stablehlo.multiply %126, %126 : tensor<512x256xf32>
    %128 = stablehlo.multiply %127, %126 : tensor<512x256xf32>
    %129 = stablehlo.multiply %126, %126 : tensor<512x256xf32>
    %cst_35 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %131 = stablehlo.multiply %130, %129 : tensor<512x256xf32>
    %cst_36 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %132 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %133 = stablehlo.multiply %132, %128 : tensor<512x256xf32>
    %134 = stablehlo.add %126, %133 : tensor<512x256xf32>
    %cst_37 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %135 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %136 = stablehlo.multiply %135, %134 : tensor<512x256xf32>
    %137 = stablehlo.tanh %136 : tensor<512x256xf32>
    %cst_38 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %138 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %139 = stablehlo.subtract %138, %137 : tensor<512x256xf32>
    %cst_39 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %140 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %141 = stablehlo.add %140, %137 : tensor<512x256xf32>
    %cst_40 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %142 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %143 = stablehlo.multiply %142, %141 : tensor<512x256xf32>
    %144 = stablehlo.multiply %126, %143 : tensor<512x256xf32>
    %145 = stablehlo.dot_general %144, %arg13, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %146 = stablehlo.add %125, %145 : tensor<512x256xf32>
    %147 = stablehlo.dot_general %146, %arg14, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %148 = stablehlo.multiply %147, %147 : tensor<512x256xf32>
    %149 = stablehlo.multiply %148, %147 : tensor<512x256xf32>
    %150 = stablehlo.multiply %147, %147 : tensor<512x256xf32>
    %cst_41 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %151 = stablehlo.broadcast_in_dim %cst_41, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %152 = stablehlo.multiply %151, %150 : tensor<512x256xf32>
    %cst_42 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %153 = stablehlo.broadcast_in_dim %cst_42, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %154 = stablehlo.multiply %153, %149 : tensor<512x256xf32>
    %155 = stablehlo.add %147, %154 : tensor<512x256xf32>
    %cst_43 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %156 = stablehlo.broadcast_in_dim %cst_43, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %157 = stablehlo.multiply %156, %155 : tensor<512x256xf32>
    %158 = stablehlo.tanh %157 : tensor<512x256xf32>
    %cst_44 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %159 = stablehlo.broadcast_in_dim %cst_44, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %160 = stablehlo.subtract %159, %158 : tensor<512x256xf32>
    %cst_45 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %161 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %162 = stablehlo.add %161, %158 : tensor<512x256xf32>
    %cst_46 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %163 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %164 = stablehlo.multiply %163, %162 : tensor<512x256xf32>
    %165 = stablehlo.multiply %147, %164 : tensor<512x256xf32>
    %166 = stablehlo.dot_general %165, %arg15, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %167 = stablehlo.add %146, %166 : tensor<512x256xf32>
    %168 = stablehlo.dot_general %167, %arg16, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %169 = stablehlo.multiply %168, %168 : tensor<512x256xf32>
    %170 = stablehlo.multiply %169, %168 : tensor<512x256xf32>
    %171 = stablehlo.multiply %168, %168 : tensor<512x256xf32>
    %cst_47 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %172 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %173 = stablehlo.multiply %172, %171 : tensor<512x256xf32>
    %cst_48 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %174 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %175 = stablehlo.multiply %174, %170 : tensor<512x256xf32>
    %176 = stablehlo.add %168, %175 : tensor<512x256xf32>
    %cst_49 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %177 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %178 = stablehlo.multiply %177, %176 : tensor<512x256xf32>
    %179 = stablehlo.tanh %178 : tensor<512x256xf32>
    %cst_50 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %180 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %181 = stablehlo.subtract %180, %179 : tensor<512x256xf32>
    %cst_51 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %183 = stablehlo.add %182, %179 : tensor<512x256xf32>
    %cst_52 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %184 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %185 = stablehlo.multiply %184, %183 : tensor<512x256xf32>
    %186 = stablehlo.multiply %168, %185 : tensor<512x256xf32>
    %187 = stablehlo.dot_general %186, %arg17, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %188 = stablehlo.add %167, %187 : tensor<512x256xf32>
    %189 = stablehlo.dot_general %188, %arg18, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %190 = stablehlo.multiply %189, %189 : tensor<512x256xf32>
    %191 = stablehlo.multiply %190, %189 : tensor<512x256xf32>
    %192 = stablehlo.multiply %189, %189 : tensor<512x256xf32>
    %cst_53 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %193 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %194 = stablehlo.multiply %193, %192 : tensor<512x256xf32>
    %cst_54 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %195 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %196 = stablehlo.multiply %195, %191 : tensor<512x256xf32>
    %197 = stablehlo.add %189, %196 : tensor<512x256xf32>
    %cst_55 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %198 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %199 = stablehlo.multiply %198, %197 : tensor<512x256xf32>
    %200 = stablehlo.tanh %199 : tensor<512x256xf32>
    %cst_56 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %201 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %202 = stablehlo.subtract %201, %200 : tensor<512x256xf32>
    %cst_57 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %203 = stablehlo.broadcast_in_dim %cst_57, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %204 = stablehlo.add %203, %200 : tensor<512x256xf32>
    %cst_58 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %205 = stablehlo.broadcast_in_dim %cst_58, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %206 = stablehlo.multiply %205, %204 : tensor<512x256xf32>
    %207 = stablehlo.multiply %189, %206 : tensor<512x256xf32>
    %208 = stablehlo.dot_general %207, %arg19, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %209 = stablehlo.add %188, %208 : tensor<512x256xf32>
    %210 = stablehlo.dot_general %209, %arg20, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %211 = stablehlo.multiply %210, %210 : tensor<512x256xf32>
    %212 = stablehlo.multiply %211, %210 : tensor<512x256xf32>
    %213 = stablehlo.multiply %210, %210 : tensor<512x256xf32>
    %cst_59 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %214 = stablehlo.broadcast_in_dim %cst_59, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %215 = stablehlo.multiply %214, %213 : tensor<512x256xf32>
    %cst_60 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %216 = stablehlo.broadcast_in_dim %cst_60, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %217 = stablehlo.multiply %216, %212 : tensor<512x256xf32>
    %218 = stablehlo.add %210, %217 : tensor<512x256xf32>
    %cst_61 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %219 = stablehlo.broadcast_in_dim %cst_61, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %220 = stablehlo.multiply %219, %218 : tensor<512x256xf32>
    %221 = stablehlo.tanh %220 : tensor<512x256xf32>
    %cst_62 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %222 = stablehlo.broadcast_in_dim %cst_62, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %223 = stablehlo.subtract %222, %221 : tensor<512x256xf32>
    %cst_63 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %224 = stablehlo.broadcast_in_dim %cst_63, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %225 = stablehlo.add %224, %221 : tensor<512x256xf32>
    %cst_64 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %226 = stablehlo.broadcast_in_dim %cst_64, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %227 = stablehlo.multiply %226, %225 : tensor<512x256xf32>
    %228 = stablehlo.multiply %210, %227 : tensor<512x256xf32>
    %229 = stablehlo.dot_general %228, %arg21, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %230 = stablehlo.add %209, %229 : tensor<512x256xf32>
    %231 = stablehlo.dot_general %230, %arg22, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %232 = stablehlo.multiply %231, %231 : tensor<512x256xf32>
    %233 = stablehlo.multiply %232, %231 : tensor<512x256xf32>
    %234 = stablehlo.multiply %231, %231 : tensor<512x256xf32>
    %cst_65 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %235 = stablehlo.broadcast_in_dim %cst_65, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %236 = stablehlo.multiply %235, %234 : tensor<512x256xf32>
    %cst_66 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %237 = stablehlo.broadcast_in_dim %cst_66, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %238 = stablehlo.multiply %237, %233 : tensor<512x256xf32>
    %239 = stablehlo.add %231, %238 : tensor<512x256xf32>
    %cst_67 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %240 = stablehlo.broadcast_in_dim %cst_67, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %241 = stablehlo.multiply %240, %239 : tensor<512x256xf32>
    %242 = stablehlo.tanh %241 : tensor<512x256xf32>
    %cst_68 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %243 = stablehlo.broadcast_in_dim %cst_68, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %244 = stablehlo.subtract %243, %242 : tensor<512x256xf32>
    %cst_69 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %245 = stablehlo.broadcast_in_dim %cst_69, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %246 = stablehlo.add %245, %242 : tensor<512x256xf32>
    %cst_70 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %247 = stablehlo.broadcast_in_dim %cst_70, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %248 = stablehlo.multiply %247, %246 : tensor<512x256xf32>
    %249 = stablehlo.multiply %231, %248 : tensor<512x256xf32>
    %250 = stablehlo.dot_general %249, %arg23, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %251 = stablehlo.add %230, %250 : tensor<512x256xf32>
    %252 = stablehlo.multiply %251, %251 : tensor<512x256xf32>
    %cst_71 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %253 = stablehlo.reduce(%252 init: %cst_71) applies stablehlo.add across dimensions = [0, 1] : (tensor<512x256xf32>, tensor<f32>) -> tensor<f32>
    %cst_72 = stablehlo.constant dense<1.310720e+05> : tensor<f32>
    %254 = stablehlo.divide %253, %cst_72 : tensor<f32>
    %cst_73 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_74 = stablehlo.constant dense<1.310720e+05> : tensor<f32>
    %255 = stablehlo.divide %cst_73, %cst_74 : tensor<f32>
    %256 = stablehlo.broadcast_in_dim %255, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %257 = stablehlo.multiply %251, %256 : tensor<512x256xf32>
    %258 = stablehlo.multiply %256, %251 : tensor<512x256xf32>
    %259 = stablehlo.add %257, %258 : tensor<512x256xf32>
    %260 = stablehlo.dot_general %259, %249, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %261 = stablehlo.transpose %260, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %262 = stablehlo.dot_general %259, %arg23, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %263 = stablehlo.multiply %231, %262 : tensor<512x256xf32>
    %264 = stablehlo.multiply %262, %248 : tensor<512x256xf32>
    %cst_75 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %265 = stablehlo.broadcast_in_dim %cst_75, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %266 = stablehlo.multiply %265, %263 : tensor<512x256xf32>
    %267 = stablehlo.multiply %266, %244 : tensor<512x256xf32>
    %268 = stablehlo.multiply %267, %242 : tensor<512x256xf32>
    %269 = stablehlo.add %267, %268 : tensor<512x256xf32>
    %cst_76 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %270 = stablehlo.broadcast_in_dim %cst_76, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %271 = stablehlo.multiply %270, %269 : tensor<512x256xf32>
    %272 = stablehlo.add %264, %271 : tensor<512x256xf32>
    %cst_77 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %273 = stablehlo.broadcast_in_dim %cst_77, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %274 = stablehlo.multiply %273, %271 : tensor<512x256xf32>
    %275 = stablehlo.multiply %274, %236 : tensor<512x256xf32>
    %276 = stablehlo.add %272, %275 : tensor<512x256xf32>
    %277 = stablehlo.dot_general %276, %230, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %278 = stablehlo.transpose %277, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %279 = stablehlo.dot_general %276, %arg22, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %280 = stablehlo.add %259, %279 : tensor<512x256xf32>
    %281 = stablehlo.dot_general %280, %228, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %282 = stablehlo.transpose %281, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %283 = stablehlo.dot_general %280, %arg21, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %284 = stablehlo.multiply %210, %283 : tensor<512x256xf32>
    %285 = stablehlo.multiply %283, %227 : tensor<512x256xf32>
    %cst_78 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %286 = stablehlo.broadcast_in_dim %cst_78, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %287 = stablehlo.multiply %286, %284 : tensor<512x256xf32>
    %288 = stablehlo.multiply %287, %223 : tensor<512x256xf32>
    %289 = stablehlo.multiply %288, %221 : tensor<512x256xf32>
    %290 = stablehlo.add %288, %289 : tensor<512x256xf32>
    %cst_79 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %291 = stablehlo.broadcast_in_dim %cst_79, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %292 = stablehlo.multiply %291, %290 : tensor<512x256xf32>
    %293 = stablehlo.add %285, %292 : tensor<512x256xf32>
    %cst_80 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %294 = stablehlo.broadcast_in_dim %cst_80, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %295 = stablehlo.multiply %294, %292 : tensor<512x256xf32>
    %296 = stablehlo.multiply %295, %215 : tensor<512x256xf32>
    %297 = stablehlo.add %293, %296 : tensor<512x256xf32>
    %298 = stablehlo.dot_general %297, %209, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %299 = stablehlo.transpose %298, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %300 = stablehlo.dot_general %297, %arg20, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %301 = stablehlo.add %280, %300 : tensor<512x256xf32>
    %302 = stablehlo.dot_general %301, %207, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %303 = stablehlo.transpose %302, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %304 = stablehlo.dot_general %301, %arg19, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %305 = stablehlo.multiply %189, %304 : tensor<512x256xf32>
    %306 = stablehlo.multiply %304, %206 : tensor<512x256xf32>
    %cst_81 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %307 = stablehlo.broadcast_in_dim %cst_81, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %308 = stablehlo.multiply %307, %305 : tensor<512x256xf32>
    %309 = stablehlo.multiply %308, %202 : tensor<512x256xf32>
    %310 = stablehlo.multiply %309, %200 : tensor<512x256xf32>
    %311 = stablehlo.add %309, %310 : tensor<512x256xf32>
    %cst_82 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %312 = stablehlo.broadcast_in_dim %cst_82, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %313 = stablehlo.multiply %312, %311 : tensor<512x256xf32>
    %314 = stablehlo.add %306, %313 : tensor<512x256xf32>
    %cst_83 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %315 = stablehlo.broadcast_in_dim %cst_83, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %316 = stablehlo.multiply %315, %313 : tensor<512x256xf32>
    %317 = stablehlo.multiply %316, %194 : tensor<512x256xf32>
    %318 = stablehlo.add %314, %317 : tensor<512x256xf32>
    %319 = stablehlo.dot_general %318, %188, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %320 = stablehlo.transpose %319, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %321 = stablehlo.dot_general %318, %arg18, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %322 = stablehlo.add %301, %321 : tensor<512x256xf32>
    %323 = stablehlo.dot_general %322, %186, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %324 = stablehlo.transpose %323, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %325 = stablehlo.dot_general %322, %arg17, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %326 = stablehlo.multiply %168, %325 : tensor<512x256xf32>
    %327 = stablehlo.multiply %325, %185 : tensor<512x256xf32>
    %cst_84 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %328 = stablehlo.broadcast_in_dim %cst_84, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %329 = stablehlo.multiply %328, %326 : tensor<512x256xf32>
    %330 = stablehlo.multiply %329, %181 : tensor<512x256xf32>
    %331 = stablehlo.multiply %330, %179 : tensor<512x256xf32>
    %332 = stablehlo.add %330, %331 : tensor<512x256xf32>
    %cst_85 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %333 = stablehlo.broadcast_in_dim %cst_85, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %334 = stablehlo.multiply %333, %332 : tensor<512x256xf32>
    %335 = stablehlo.add %327, %334 : tensor<512x256xf32>
    %cst_86 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %336 = stablehlo.broadcast_in_dim %cst_86, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %337 = stablehlo.multiply %336, %334 : tensor<512x256xf32>
    %338 = stablehlo.multiply %337, %173 : tensor<512x256xf32>
    %339 = stablehlo.add %335, %338 : tensor<512x256xf32>
    %340 = stablehlo.dot_general %339, %167, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %341 = stablehlo.transpose %340, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %342 = stablehlo.dot_general %339, %arg16, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %343 = stablehlo.add %322, %342 : tensor<512x256xf32>
    %344 = stablehlo.dot_general %343, %165, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %345 = stablehlo.transpose %344, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %346 = stablehlo.dot_general %343, %arg15, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %347 = stablehlo.multiply %147, %346 : tensor<512x256xf32>
    %348 = stablehlo.multiply %346, %164 : tensor<512x256xf32>
    %cst_87 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %349 = stablehlo.broadcast_in_dim %cst_87, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %350 = stablehlo.multiply %349, %347 : tensor<512x256xf32>
    %351 = stablehlo.multiply %350, %160 : tensor<512x256xf32>
    %352 = stablehlo.multiply %351, %158 : tensor<512x256xf32>
    %353 = stablehlo.add %351, %352 : tensor<512x256xf32>
    %cst_88 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %354 = stablehlo.broadcast_in_dim %cst_88, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %355 = stablehlo.multiply %354, %353 : tensor<512x256xf32>
    %356 = stablehlo.add %348, %355 : tensor<512x256xf32>
    %cst_89 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %357 = stablehlo.broadcast_in_dim %cst_89, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %358 = stablehlo.multiply %357, %355 : tensor<512x256xf32>
    %359 = stablehlo.multiply %358, %152 : tensor<512x256xf32>
    %360 = stablehlo.add %356, %359 : tensor<512x256xf32>
    %361 = stablehlo.dot_general %360, %146, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %362 = stablehlo.transpose %361, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %363 = stablehlo.dot_general %360, %arg14, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %364 = stablehlo.add %343, %363 : tensor<512x256xf32>
    %365 = stablehlo.dot_general %364, %144, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %366 = stablehlo.transpose %365, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %367 = stablehlo.dot_general %364, %arg13, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %368 = stablehlo.multiply %126, %367 : tensor<512x256xf32>
    %369 = stablehlo.multiply %367, %143 : tensor<512x256xf32>
    %cst_90 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %370 = stablehlo.broadcast_in_dim %cst_90, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %371 = stablehlo.multiply %370, %368 : tensor<512x256xf32>
    %372 = stablehlo.multiply %371, %139 : tensor<512x256xf32>
    %373 = stablehlo.multiply %372, %137 : tensor<512x256xf32>
    %374 = stablehlo.add %372, %373 : tensor<512x256xf32>
    %cst_91 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %375 = stablehlo.broadcast_in_dim %cst_91, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %376 = stablehlo.multiply %375, %374 : tensor<512x256xf32>
    %377 = stablehlo.add %369, %376 : tensor<512x256xf32>
    %cst_92 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %378 = stablehlo.broadcast_in_dim %cst_92, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %379 = stablehlo.multiply %378, %376 : tensor<512x256xf32>
    %380 = stablehlo.multiply %379, %131 : tensor<512x256xf32>
    %381 = stablehlo.add %377, %380 : tensor<512x256xf32>
    %382 = stablehlo.dot_general %381, %125, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %383 = stablehlo.transpose %382, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %384 = stablehlo.dot_general %381, %arg12, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %385 = stablehlo.add %364, %384 : tensor<512x256xf32>
    %386 = stablehlo.dot_general %385, %123, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %387 = stablehlo.transpose %386, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %388 = stablehlo.dot_general %385, %arg11, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %389 = stablehlo.multiply %105, %388 : tensor<512x256xf32>
    %390 = stablehlo.multiply %388, %122 : tensor<512x256xf32>
    %cst_93 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %391 = stablehlo.broadcast_in_dim %cst_93, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %392 = stablehlo.multiply %391, %389 : tensor<512x256xf32>
    %393 = stablehlo.multiply %392, %118 : tensor<512x256xf32>
    %394 = stablehlo.multiply %393, %116 : tensor<512x256xf32>
    %395 = stablehlo.add %393, %394 : tensor<512x256xf32>
    %cst_94 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %396 = stablehlo.broadcast_in_dim %cst_94, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %397 = stablehlo.multiply %396, %395 : tensor<512x256xf32>
    %398 = stablehlo.add %390, %397 : tensor<512x256xf32>
    %cst_95 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %399 = stablehlo.broadcast_in_dim %cst_95, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %400 = stablehlo.multiply %399, %397 : tensor<512x256xf32>
    %401 = stablehlo.multiply %400, %110 : tensor<512x256xf32>
    %402 = stablehlo.add %398, %401 : tensor<512x256xf32>
    %403 = stablehlo.dot_general %402, %104, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %404 = stablehlo.transpose %403, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %405 = stablehlo.dot_general %402, %arg10, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %406 = stablehlo.add %385, %405 : tensor<512x256xf32>
    %407 = stablehlo.dot_general %406, %102, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %408 = stablehlo.transpose %407, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %409 = stablehlo.dot_general %406, %arg9, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %410 = stablehlo.multiply %84, %409 : tensor<512x256xf32>
    %411 = stablehlo.multiply %409, %101 : tensor<512x256xf32>
    %cst_96 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %412 = stablehlo.broadcast_in_dim %cst_96, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %413 = stablehlo.multiply %412, %410 : tensor<512x256xf32>
    %414 = stablehlo.multiply %413, %97 : tensor<512x256xf32>
    %415 = stablehlo.multiply %414, %95 : tensor<512x256xf32>
    %416 = stablehlo.add %414, %415 : tensor<512x256xf32>
    %cst_97 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %417 = stablehlo.broadcast_in_dim %cst_97, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %418 = stablehlo.multiply %417, %416 : tensor<512x256xf32>
    %419 = stablehlo.add %411, %418 : tensor<512x256xf32>
    %cst_98 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %420 = stablehlo.broadcast_in_dim %cst_98, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %421 = stablehlo.multiply %420, %418 : tensor<512x256xf32>
    %422 = stablehlo.multiply %421, %89 : tensor<512x256xf32>
    %423 = stablehlo.add %419, %422 : tensor<512x256xf32>
    %424 = stablehlo.dot_general %423, %83, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %425 = stablehlo.transpose %424, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %426 = stablehlo.dot_general %423, %arg8, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %427 = stablehlo.add %406, %426 : tensor<512x256xf32>
    %428 = stablehlo.dot_general %427, %81, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %429 = stablehlo.transpose %428, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %430 = stablehlo.dot_general %427, %arg7, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %431 = stablehlo.multiply %63, %430 : tensor<512x256xf32>
    %432 = stablehlo.multiply %430, %80 : tensor<512x256xf32>
    %cst_99 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %433 = stablehlo.broadcast_in_dim %cst_99, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %434 = stablehlo.multiply %433, %431 : tensor<512x256xf32>
    %435 = stablehlo.multiply %434, %76 : tensor<512x256xf32>
    %436 = stablehlo.multiply %435, %74 : tensor<512x256xf32>
    %437 = stablehlo.add %435, %436 : tensor<512x256xf32>
    %cst_100 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %438 = stablehlo.broadcast_in_dim %cst_100, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %439 = stablehlo.multiply %438, %437 : tensor<512x256xf32>
    %440 = stablehlo.add %432, %439 : tensor<512x256xf32>
    %cst_101 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %441 = stablehlo.broadcast_in_dim %cst_101, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %442 = stablehlo.multiply %441, %439 : tensor<512x256xf32>
    %443 = stablehlo.multiply %442, %68 : tensor<512x256xf32>
    %444 = stablehlo.add %440, %443 : tensor<512x256xf32>
    %445 = stablehlo.dot_general %444, %62, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %446 = stablehlo.transpose %445, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %447 = stablehlo.dot_general %444, %arg6, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %448 = stablehlo.add %427, %447 : tensor<512x256xf32>
    %449 = stablehlo.dot_general %448, %60, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %450 = stablehlo.transpose %449, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %451 = stablehlo.dot_general %448, %arg5, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %452 = stablehlo.multiply %42, %451 : tensor<512x256xf32>
    %453 = stablehlo.multiply %451, %59 : tensor<512x256xf32>
    %cst_102 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %454 = stablehlo.broadcast_in_dim %cst_102, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %455 = stablehlo.multiply %454, %452 : tensor<512x256xf32>
    %456 = stablehlo.multiply %455, %55 : tensor<512x256xf32>
    %457 = stablehlo.multiply %456, %53 : tensor<512x256xf32>
    %458 = stablehlo.add %456, %457 : tensor<512x256xf32>
    %cst_103 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %459 = stablehlo.broadcast_in_dim %cst_103, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %460 = stablehlo.multiply %459, %458 : tensor<512x256xf32>
    %461 = stablehlo.add %453, %460 : tensor<512x256xf32>
    %cst_104 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %462 = stablehlo.broadcast_in_dim %cst_104, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %463 = stablehlo.multiply %462, %460 : tensor<512x256xf32>
    %464 = stablehlo.multiply %463, %47 : tensor<512x256xf32>
    %465 = stablehlo.add %461, %464 : tensor<512x256xf32>
    %466 = stablehlo.dot_general %465, %41, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %467 = stablehlo.transpose %466, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %468 = stablehlo.dot_general %465, %arg4, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %469 = stablehlo.add %448, %468 : tensor<512x256xf32>
    %470 = stablehlo.dot_general %469, %39, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %471 = stablehlo.transpose %470, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %472 = stablehlo.dot_general %469, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %473 = stablehlo.multiply %21, %472 : tensor<512x256xf32>
    %474 = stablehlo.multiply %472, %38 : tensor<512x256xf32>
    %cst_105 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %475 = stablehlo.broadcast_in_dim %cst_105, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %476 = stablehlo.multiply %475, %473 : tensor<512x256xf32>
    %477 = stablehlo.multiply %476, %34 : tensor<512x256xf32>
    %478 = stablehlo.multiply %477, %32 : tensor<512x256xf32>
    %479 = stablehlo.add %477, %478 : tensor<512x256xf32>
    %cst_106 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %480 = stablehlo.broadcast_in_dim %cst_106, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %481 = stablehlo.multiply %480, %479 : tensor<512x256xf32>
    %482 = stablehlo.add %474, %481 : tensor<512x256xf32>
    %cst_107 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %483 = stablehlo.broadcast_in_dim %cst_107, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %484 = stablehlo.multiply %483, %481 : tensor<512x256xf32>
    %485 = stablehlo.multiply %484, %26 : tensor<512x256xf32>
    %486 = stablehlo.add %482, %485 : tensor<512x256xf32>
    %487 = stablehlo.dot_general %486, %20, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %488 = stablehlo.transpose %487, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %489 = stablehlo.dot_general %486, %arg2, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %490 = stablehlo.add %469, %489 : tensor<512x256xf32>
    %491 = stablehlo.dot_general %490, %18, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %492 = stablehlo.transpose %491, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    %493 = stablehlo.dot_general %490, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<256x256xf32>) -> tensor<512x256xf32>
    %494 = stablehlo.multiply %0, %493 : tensor<512x256xf32>
    %495 = stablehlo.multiply %493, %17 : tensor<512x256xf32>
    %cst_108 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %496 = stablehlo.broadcast_in_dim %cst_108, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %497 = stablehlo.multiply %496, %494 : tensor<512x256xf32>
    %498 = stablehlo.multiply %497, %13 : tensor<512x256xf32>
    %499 = stablehlo.multiply %498, %11 : tensor<512x256xf32>
    %500 = stablehlo.add %498, %499 : tensor<512x256xf32>
    %cst_109 = stablehlo.constant dense<0.797884583> : tensor<f32>
    %501 = stablehlo.broadcast_in_dim %cst_109, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %502 = stablehlo.multiply %501, %500 : tensor<512x256xf32>
    %503 = stablehlo.add %495, %502 : tensor<512x256xf32>
    %cst_110 = stablehlo.constant dense<4.471500e-02> : tensor<f32>
    %504 = stablehlo.broadcast_in_dim %cst_110, dims = [] : (tensor<f32>) -> tensor<512x256xf32>
    %505 = stablehlo.multiply %504, %502 : tensor<512x256xf32>
    %506 = stablehlo.multiply %505, %5 : tensor<512x256xf32>
    %507 = stablehlo.add %503, %506 : tensor<512x256xf32>
    %508 = stablehlo.dot_general %507, %arg24, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<512x256xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
    %509 = stablehlo.transpose %508, dims = [1, 0] : (tensor<256x256xf32>) -> tensor<256x256xf32>
    return %254, %509, %492, %488, %471, %467, %450, %446, %429, %425, %408, %404, %387, %383, %366, %362, %345, %341, %324, %320, %303, %299, %282, %278, %261 : tensor<f32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>
  }
}
