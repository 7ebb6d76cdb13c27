//! `disable_jit`, `clear_caches` and `block_until_ready` over trees, as JAX's
//! `jax.disable_jit`, `jax.clear_caches` and `jax.block_until_ready`. `clear_caches` is
//! process-wide, so these tests have a binary of their own: no other test counts misses here.

mod common;

use jaxrs::prelude::*;

#[jit]
fn scaled(x: &Array, s: f32) -> Array {
    // Concrete only when jit is off: the body then runs eagerly.
    if x.is_concrete() {
        assert_eq!(x.to_vec::<f32>(), vec![1.0, 2.0]);
    }
    x * s
}

#[test]
fn disable_jit_runs_the_body_eagerly_and_is_restored() {
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let before = scaled::jit_site().cache_misses();
    let y = jaxrs::disable_jit(|| scaled(&x, 3.0));
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 6.0]);
    assert_eq!(
        scaled::jit_site().cache_misses(),
        before,
        "nothing compiled"
    );
    // Restored after a panic inside, too.
    let caught = std::panic::catch_unwind(|| jaxrs::disable_jit(|| panic!("inside")));
    assert!(caught.is_err());
    let y = scaled(&x, 3.0);
    assert_eq!(y.to_vec::<f32>(), vec![3.0, 6.0]);
    assert!(
        scaled::jit_site().cache_misses() > before,
        "jit is on again"
    );
    // grad inside disable_jit: the jitted body is differentiated eagerly.
    let g = jaxrs::disable_jit(|| grad(|x: Array| scaled(&x, 3.0).sum(None, false))(x.clone()));
    assert_eq!(g.to_vec::<f32>(), vec![3.0, 3.0]);
}

#[jit]
fn cubed(x: &Array) -> Array {
    x * x * x
}

#[test]
fn clear_caches_makes_every_jitted_function_compile_again() {
    let x = Array::from_vec(vec![2.0f32], &[1]);
    assert_eq!(cubed(&x).to_vec::<f32>(), vec![8.0]);
    let jitted = jit(|x: Array| &x + 1.0);
    assert_eq!(jitted.call(x.clone()).to_vec::<f32>(), vec![3.0]);
    let (m1, j1) = (
        cubed::jit_site().cache_misses(),
        jitted.site().cache_misses(),
    );
    cubed(&x);
    jitted.call(x.clone());
    assert_eq!(
        cubed::jit_site().cache_misses(),
        m1,
        "a hit before clearing"
    );
    jaxrs::clear_caches();
    assert_eq!(cubed(&x).to_vec::<f32>(), vec![8.0]);
    assert_eq!(jitted.call(x.clone()).to_vec::<f32>(), vec![3.0]);
    assert_eq!(cubed::jit_site().cache_misses(), m1 + 1);
    assert_eq!(jitted.site().cache_misses(), j1 + 1);
    // And the new program is cached again.
    cubed(&x);
    assert_eq!(cubed::jit_site().cache_misses(), m1 + 1);
}

#[test]
fn block_until_ready_waits_on_every_leaf_of_a_tree() {
    let x = Array::ones(&[4], DType::F32);
    let tree = (&x * &x * 8.0, vec![&x + 1.0, x.exp()]);
    let (a, rest) = jaxrs::block_until_ready(tree);
    assert_eq!(a.to_vec::<f32>(), vec![8.0; 4]);
    assert_eq!(rest[0].to_vec::<f32>(), vec![2.0; 4]);
    assert_eq!(rest.len(), 2);
}

/// The name locations of a lowered module (`loc("a/b/mul"(...))`), in order.
fn scope_names(module: &str) -> Vec<String> {
    module
        .split("loc(\"")
        .skip(1)
        .filter_map(|rest| {
            let (name, after) = rest.split_once('"')?;
            // A name location wraps the file location: `"name"("file":line:col)`.
            after.starts_with("(\"").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn named_scope_names_the_operations_in_the_stablehlo() {
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    let f = |x: Array| {
        let y = jaxrs::named_scope("outer", || {
            let doubled = &x * 2.0;
            jaxrs::named_scope("inner", || doubled.sin())
        });
        // Outside every scope: no name.
        y.exp()
    };
    let module = stablehlo(f, &x);
    let names = scope_names(&module);
    // The scalar's broadcast belongs to the scope as well.
    let want = [
        "outer/broadcast_in_dim",
        "outer/broadcast_in_dim",
        "outer/mul",
        "outer/inner/sin",
    ];
    assert_eq!(names, want, "{module}");
    assert!(module.contains("stablehlo.exponential"));
    // The value is untouched, eagerly and jitted.
    let want: Vec<f32> = [1.0f32, 2.0]
        .iter()
        .map(|v| (v * 2.0).sin().exp())
        .collect();
    for y in [f(x.clone()), jit(f).call(x)] {
        for (y, w) in y.to_vec::<f32>().iter().zip(&want) {
            assert!((y - w).abs() < 1e-6, "{y} vs {w}");
        }
    }
}

#[test]
fn named_scope_survives_grad_vmap_and_scan_and_nests_inner_jit() {
    let x = Array::from_vec(vec![0.5f32, 1.5], &[2]);
    let loss = |x: Array| jaxrs::named_scope("loss", || (&x * &x).sin().sum(None, false));
    // Every operation of the gradient (the JVP's and the transpose's) is named.
    let module = stablehlo(grad(loss), &x);
    let names = scope_names(&module);
    assert!(
        !names.is_empty() && names.iter().all(|n| n.starts_with("loss/")),
        "{names:?}"
    );
    let g = grad(loss)(x.clone()).to_vec::<f32>();
    let want: Vec<f32> = [0.5f32, 1.5]
        .iter()
        .map(|v| 2.0 * v * (v * v).cos())
        .collect();
    for (g, w) in g.iter().zip(&want) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }

    let batched = vmap(|row: Array| jaxrs::named_scope("row", || row.cos()), 0, 0);
    let names = scope_names(&stablehlo(batched, &Array::zeros(&[3, 2], DType::F32)));
    assert_eq!(names, ["row/cos"]);

    // A loop's body is named inside the scope the loop was called in.
    let looped = |x: Array| {
        jaxrs::named_scope("loop", || {
            fori_loop(
                0,
                3,
                |_, c: Array| jaxrs::named_scope("step", || c.tanh()),
                x,
            )
        })
    };
    let names = scope_names(&stablehlo(looped, &x));
    assert!(names.contains(&"loop/step/tanh".to_string()), "{names:?}");

    // An inner jit's names nest inside the caller's scope, and the inner jaxpr keeps only
    // its own (it is cached and may be called from anywhere).
    let inner = jit(|x: Array| jaxrs::named_scope("body", || x.sqrt()));
    let outer = |x: Array| jaxrs::named_scope("caller", || inner.call(x));
    let names = scope_names(&stablehlo(outer, &x));
    assert!(names.contains(&"caller/body/sqrt".to_string()), "{names:?}");
    let names = scope_names(&stablehlo(|x| inner.call(x), &x));
    assert!(names.contains(&"body/sqrt".to_string()), "{names:?}");
}

#[jit]
fn scoped_program(x: &Array) -> Array {
    jaxrs::named_scope("encoder", || (x * 3.0).tanh())
}

#[test]
fn named_scope_reaches_the_compiled_programs_op_names() {
    let x = Array::from_vec(vec![0.25f32, -0.5], &[2]);
    let y = scoped_program(&x);
    for (y, want) in y
        .to_vec::<f32>()
        .iter()
        .zip([0.75f32.tanh(), (-1.5f32).tanh()])
    {
        assert!((y - want).abs() < 1e-6, "{y} vs {want}");
    }
    // XLA keeps the name as the instructions' `op_name` metadata, which its profiles show.
    let (_, program) = scoped_program::jit_site()
        .last_optimized_program()
        .expect("compiled");
    let text = String::from_utf8_lossy(&program);
    assert!(
        text.contains("encoder/tanh"),
        "the optimized program names the op"
    );
}

#[test]
fn named_call_names_each_call() {
    let double = jaxrs::named_call("double", |x: Array| &x * 2.0);
    let f = |x: Array| double(double(x));
    let x = Array::from_vec(vec![1.0f32, -3.0], &[2]);
    let names = scope_names(&stablehlo(f, &x));
    assert_eq!(
        names.iter().filter(|n| *n == "double/mul").count(),
        2,
        "{names:?}"
    );
    assert!(names.iter().all(|n| n.starts_with("double/")), "{names:?}");
    assert_eq!(f(x).to_vec::<f32>(), vec![4.0, -12.0]);
}

#[test]
fn device_get_copies_every_leaf_of_a_tree_to_the_host() {
    let params = (
        Array::from_vec(vec![1.5f32, -2.0, 3.0, 0.0], &[2, 2]),
        vec![
            Array::scalar(7i32),
            Array::from_vec(vec![true, false], &[2]),
        ],
    );
    let host = jaxrs::device_get(&params);
    assert_eq!(host.structure(), &jaxrs::tree::structure(&params));
    let leaves = host.leaves();
    assert_eq!(
        (leaves[0].shape(), leaves[0].dtype()),
        (&[2usize, 2][..], DType::F32)
    );
    assert_eq!(leaves[0].to_vec::<f32>(), vec![1.5, -2.0, 3.0, 0.0]);
    assert_eq!(leaves[1].to_vec::<i32>(), vec![7]);
    assert_eq!(leaves[2].to_vec::<bool>(), vec![true, false]);
    assert_eq!(leaves[0].as_bytes().len(), 16);
    // Back on the device, the same values.
    assert_eq!(
        leaves[0].to_array().to_vec::<f32>(),
        params.0.to_vec::<f32>()
    );
    let again = jaxrs::try_device_get(&params).expect("no device failure");
    assert_eq!(again.leaves(), leaves);
    // The wrong element type is a programmer's mistake, named.
    let msg = common::panic_message(|| {
        leaves[1].to_vec::<f32>();
    });
    assert!(
        msg.contains("the array is int32 but float32 was asked for"),
        "{msg}"
    );
}
