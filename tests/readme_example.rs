//! The README's first example, as written there, trains.

use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

fn loss(p: &Params, x: &Array, y: &Array) -> Array {
    (x.matmul(&p.w) + &p.b - y).powi(2).mean(None, false)
}

#[jit(donate = params)]
fn sgd_step(params: Params, x: &Array, y: &Array, lr: f32) -> (Params, Array) {
    let (value, grads) = value_and_grad(|p: Params| loss(&p, x, y))(params.clone());
    (tree_map2(&params, &grads, |p, g| p - g * lr), value)
}

#[test]
fn the_readme_example_fits_a_line() {
    let x = Array::from_vec(vec![0.0f32, 1.0, 2.0, 3.0], &[4, 1]);
    let y = Array::from_vec(vec![1.0f32, 3.0, 5.0, 7.0], &[4, 1]);
    let mut params = Params {
        w: Array::zeros(&[1, 1], DType::F32),
        b: Array::zeros(&[1], DType::F32),
    };
    let mut last = f32::INFINITY;
    for _ in 0..500 {
        let (p, l) = sgd_step(params, &x, &y, 0.05);
        params = p;
        last = l.item::<f32>();
    }
    assert!(last < 1e-4, "loss {last}");
    assert!(
        (params.w.item::<f32>() - 2.0).abs() < 1e-2 && (params.b.item::<f32>() - 1.0).abs() < 1e-2
    );
    assert_eq!(sgd_step::jit_site().cache_misses(), 1);
}
