//! The forms #[pmap] accepts compile (and run on one device: every mapped size here is 1).
use jaxrs::prelude::*;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
}

#[pmap]
fn plain(x: &Array) -> Array {
    x * 2.0
}

#[pmap(axis_name = "d", in_axes = (None, 0, None), out_axes = (0, 0))]
fn step(params: &Params, x: &Array, lr: f32) -> (Params, Array) {
    let w = &params.w - x.sum(None, false) * lr;
    let loss = w.sum(None, false);
    (Params { w }, loss)
}

#[pmap(axis_name = "d", donate = params, static = n)]
fn donated(params: Params, n: usize) -> Params {
    Params {
        w: &params.w * n as f32,
    }
}

#[jit]
#[pmap(axis_name = "d")]
fn stacked(x: &Array) -> Array {
    x + 1.0
}

fn main() {
    let x = Array::ones(&[1, 2], DType::F32);
    assert_eq!(plain(&x).shape(), &[1, 2]);
    let p = Params {
        w: Array::ones(&[2], DType::F32),
    };
    let (p, loss) = step(&p, &x, 0.5);
    assert_eq!(loss.shape(), &[1]);
    let p = donated(p, 2);
    assert_eq!(p.w.shape(), &[1, 2]);
    assert_eq!(stacked(&x).to_vec::<f32>(), vec![2.0, 2.0]);
    let _ = step::pmap_site().cache_misses();
}
