//! Non-array fields of a tree are static metadata (issue 11, item 2), as equinox's non-array
//! fields and flax's `pytree_node=False`: part of the structure and of jit's cache key, read
//! as plain Rust values inside traced functions, left alone by grad and vmap. A top-level
//! scalar parameter of `#[jit]` stays traced.

use jaxrs::checkpoint::{self, Metadata};
use jaxrs::optim::{self, GradientTransformation};
use jaxrs::prelude::*;
use jaxrs::{tree_leaves, tree_paths, StaticValue, TreeDef};

#[derive(Tree, Clone, Debug)]
struct Cfg {
    w: Array,
    scale: f32,
    name: String,
    sizes: Vec<i64>,
}

fn cfg(scale: f32) -> Cfg {
    Cfg {
        w: Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]),
        scale,
        name: "double".into(),
        sizes: vec![2, 2],
    }
}

/// Two CPU devices, for the pmap test: whichever test runs first creates the client, so
/// every test asks for the same count.
fn two_devices() {
    jaxrs::set_cpu_device_count(2).expect("2 CPU devices");
}

fn close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[test]
fn static_fields_are_structure_not_leaves() {
    two_devices();
    let c = cfg(0.5);
    assert_eq!(tree_leaves(&c).len(), 1);
    assert_eq!(tree_paths(&c), ["w"]);
    assert_eq!(
        c.structure().to_string(),
        r#"Cfg { w: *, scale: 0.5, name: "double", sizes: vec![2, 2] }"#
    );
    let TreeDef::Struct { fields, .. } = c.structure() else {
        panic!("a struct")
    };
    assert_eq!(fields[1].1, TreeDef::Static(StaticValue::F32(0.5)));
    assert_eq!(
        fields[2].1,
        TreeDef::Static(StaticValue::String("double".into()))
    );
    // tree_map rebuilds the static fields from the structure.
    let doubled = tree_map(&c, |w| w * 2.0);
    assert_eq!(doubled.w.to_vec::<f32>(), vec![2.0, 4.0, 6.0, 8.0]);
    assert_eq!(
        (doubled.scale, doubled.name.as_str(), doubled.sizes),
        (0.5, "double", vec![2, 2])
    );
    // Floats compare by bits: 0.0 and -0.0 are different keys, NaN equals itself.
    assert_ne!(StaticValue::F32(0.0), StaticValue::F32(-0.0));
    assert_eq!(StaticValue::F64(f64::NAN), StaticValue::F64(f64::NAN));
    assert_ne!(StaticValue::I32(1), StaticValue::I64(1));
}

#[jit]
fn apply(cfg: &Cfg, x: &Array) -> Array {
    // Plain Rust values: they steer Rust control flow and give shapes.
    let scale: f32 = cfg.scale;
    let y = if scale > 1.0 {
        x * &cfg.w * scale
    } else {
        x * &cfg.w - scale
    };
    let y = if cfg.name == "double" { &y * 2.0 } else { y };
    y.reshape(&cfg.sizes)
}

#[test]
fn jit_reads_static_fields_as_rust_values_and_retraces_when_one_changes() {
    two_devices();
    let site = apply::jit_site();
    let x = Array::from_vec(vec![1.0f32, 1.0, 2.0, 2.0], &[4]);
    let y = apply(&cfg(0.5), &x);
    assert_eq!(y.shape(), &[2, 2]);
    close(&y.to_vec::<f32>(), &[1.0, 3.0, 11.0, 15.0]);
    assert_eq!(site.cache_misses(), 1);
    // The same static values hit the cache.
    apply(&cfg(0.5), &x);
    assert_eq!(site.cache_misses(), 1);

    // A new value retraces, takes the other branch, and the explanation names the field.
    let y = apply(&cfg(2.0), &x);
    close(&y.to_vec::<f32>(), &[4.0, 8.0, 24.0, 32.0]);
    assert_eq!(site.cache_misses(), 2);
    let why = site.last_miss_explanation().unwrap();
    assert!(
        why.contains("the static field cfg.scale changed from 0.5 to 2.0"),
        "{why}"
    );
    // Both specialisations stay cached.
    apply(&cfg(0.5), &x);
    assert_eq!(site.cache_misses(), 2);

    let c = Cfg {
        name: "single".into(),
        ..cfg(0.5)
    };
    close(&apply(&c, &x).to_vec::<f32>(), &[0.5, 1.5, 5.5, 7.5]);
    let why = site.last_miss_explanation().unwrap();
    assert!(
        why.contains(r#"the static field cfg.name changed from "double" to "single""#),
        "{why}"
    );
    let c = Cfg {
        sizes: vec![4, 1],
        ..cfg(0.5)
    };
    assert_eq!(apply(&c, &x).shape(), &[4, 1]);
    let why = site.last_miss_explanation().unwrap();
    assert!(
        why.contains("the static value cfg.sizes[0] changed from 2 to 4")
            && why.contains("the static value cfg.sizes[1] changed from 2 to 1"),
        "{why}"
    );
}

#[jit]
fn poly(x: &Array, coeffs: Vec<f32>) -> Array {
    // Horner's rule, unrolled over the Rust coefficients.
    let mut y = Array::zeros_like(x);
    for &c in coeffs.iter().rev() {
        y = &y * x + c;
    }
    y
}

#[jit]
fn affine_pair(x: &Array, p: (f32, i32)) -> Array {
    let (a, b) = p;
    x * a + b as f32
}

#[test]
fn vec_and_tuple_of_scalars_are_static_jit_arguments() {
    two_devices();
    let x = Array::from_vec(vec![0.0f32, 1.0, 2.0], &[3]);
    close(
        &poly(&x, vec![1.0, 2.0, 3.0]).to_vec::<f32>(),
        &[1.0, 6.0, 17.0],
    );
    close(
        &poly(&x, vec![1.0, 2.0, 3.0]).to_vec::<f32>(),
        &[1.0, 6.0, 17.0],
    );
    assert_eq!(poly::jit_site().cache_misses(), 1);
    close(
        &poly(&x, vec![1.0, 2.0, 4.0]).to_vec::<f32>(),
        &[1.0, 7.0, 21.0],
    );
    assert_eq!(poly::jit_site().cache_misses(), 2);
    let why = poly::jit_site().last_miss_explanation().unwrap();
    assert!(
        why.contains("the static value coeffs[2] changed from 3.0 to 4.0"),
        "{why}"
    );
    // Another length: a new structure.
    close(&poly(&x, vec![1.0]).to_vec::<f32>(), &[1.0, 1.0, 1.0]);
    let why = poly::jit_site().last_miss_explanation().unwrap();
    assert!(why.contains("the structure of coeffs changed"), "{why}");

    close(&affine_pair(&x, (2.0, 3)).to_vec::<f32>(), &[3.0, 5.0, 7.0]);
    close(
        &affine_pair(&x, (2.0, -1)).to_vec::<f32>(),
        &[-1.0, 1.0, 3.0],
    );
    let why = affine_pair::jit_site().last_miss_explanation().unwrap();
    assert!(
        why.contains("the static value p[1] changed from 3 to -1"),
        "{why}"
    );

    // The closure form: the tuple's scalar is static as well.
    let f = jit(|(x, k): (Array, f32)| x * k);
    close(&f.call((x.clone(), 2.0)).to_vec::<f32>(), &[0.0, 2.0, 4.0]);
    close(&f.call((x, 3.0)).to_vec::<f32>(), &[0.0, 3.0, 6.0]);
    assert_eq!(f.site().cache_misses(), 2);
}

#[jit]
fn sgd_step(w: &Array, lr: f32) -> Array {
    w - w * lr
}

#[test]
fn a_top_level_scalar_parameter_stays_traced() {
    two_devices();
    let w = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    close(&sgd_step(&w, 0.5).to_vec::<f32>(), &[0.5, 1.0]);
    close(&sgd_step(&w, 0.25).to_vec::<f32>(), &[0.75, 1.5]);
    assert_eq!(sgd_step::jit_site().cache_misses(), 1);
}

fn loss(c: &Cfg, x: &Array) -> Array {
    (x * &c.w * c.scale).powi(2).sum(None, false)
}

#[test]
fn grad_gives_static_fields_no_cotangent_and_keeps_their_values() {
    two_devices();
    let x = Array::from_vec(vec![1.0f32, -1.0, 0.5, 2.0], &[4]);
    let c = cfg(3.0);
    let g = grad(|c: Cfg| loss(&c, &x))(c.clone());
    // d/dw sum((x w s)^2) = 2 x^2 w s^2.
    let want: Vec<f32> = [1.0f32, -1.0, 0.5, 2.0]
        .iter()
        .zip([1.0f32, 2.0, 3.0, 4.0])
        .map(|(x, w)| 2.0 * x * x * w * 9.0)
        .collect();
    close(&g.w.to_vec::<f32>(), &want);
    assert_eq!(
        (g.scale, g.name.as_str(), &g.sizes[..]),
        (3.0, "double", &[2i64, 2][..])
    );

    // Through a jitted loss, and with value_and_grad.
    let (value, g) = value_and_grad(|c: Cfg| apply(&c, &x).sum(None, false))(cfg(3.0));
    // apply: 2 * x * w * 3 summed.
    close(&[value.item::<f32>()], &[6.0 * (1.0 - 2.0 + 1.5 + 8.0)]);
    close(&g.w.to_vec::<f32>(), &[6.0, -6.0, 3.0, 12.0]);
    assert_eq!(g.scale, 3.0);

    // An optimizer step over the struct keeps the static fields too.
    let opt = optim::sgd(0.1);
    let state = opt.init(&c);
    let grads = grad(|c: Cfg| loss(&c, &x))(c.clone());
    let (updates, _) = opt.update(grads, state, Some(&c));
    let next = optim::apply_updates(&c, &updates);
    close(
        &next.w.to_vec::<f32>(),
        &c.w.to_vec::<f32>()
            .iter()
            .zip(&want)
            .map(|(w, g)| w - 0.1 * g)
            .collect::<Vec<_>>(),
    );
    assert_eq!((next.scale, next.name.as_str()), (3.0, "double"));
}

#[vmap(in_axes = (0, None))]
fn apply_each(c: &Cfg, x: &Array) -> Array {
    (x * &c.w).sum(None, false) * c.scale
}

#[test]
fn vmap_batches_the_arrays_and_leaves_static_fields_alone() {
    two_devices();
    // Three examples batched on `w`; `scale` is one Rust value for all of them.
    let batch = Cfg {
        w: Array::from_vec((0..12).map(|v| v as f32).collect(), &[3, 4]),
        scale: 2.0,
        name: "x".into(),
        sizes: vec![],
    };
    let x = Array::from_vec(vec![1.0f32, 1.0, 1.0, 1.0], &[4]);
    let want = [12.0f32, 44.0, 76.0];
    close(&apply_each(&batch, &x).to_vec::<f32>(), &want);

    // The closure form: an axis for the whole struct maps its leaves only, and an axis given
    // for a static value itself is ignored (it has no leaf to map).
    let f = vmap(
        |(c, x, k): (Cfg, Array, f32)| (x * &c.w).sum(None, false) * c.scale * k,
        (0, None, 0),
        0,
    );
    close(
        &f((batch.clone(), x.clone(), 0.5)).to_vec::<f32>(),
        &[6.0, 22.0, 38.0],
    );

    // Returned static fields come back as they were; the arrays gain the batch axis.
    let g = vmap(|c: Cfg| tree_map(&c, |w| w * 2.0), 0, 0);
    let out = g(batch);
    assert_eq!(out.w.shape(), &[3, 4]);
    assert_eq!((out.scale, out.name.as_str()), (2.0, "x"));
}

#[test]
fn scan_and_remat_carry_static_fields_through() {
    two_devices();
    let c = cfg(0.5);
    let xs = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let (carry, ys) = scan(
        |c: Cfg, x: Array| {
            let w = &c.w + &x * c.scale;
            let y = w.sum(None, false);
            (Cfg { w, ..c }, y)
        },
        c,
        xs,
    );
    close(&carry.w.to_vec::<f32>(), &[4.0, 5.0, 6.0, 7.0]);
    close(&ys.to_vec::<f32>(), &[12.0, 16.0, 22.0]);
    assert_eq!((carry.scale, carry.name.as_str()), (0.5, "double"));

    let x = Array::from_vec(vec![1.0f32, -1.0, 0.5, 2.0], &[4]);
    let f = remat(|c: Cfg| loss(&c, &x));
    let g = grad(|c: Cfg| f.call(c))(cfg(3.0));
    let want = grad(|c: Cfg| loss(&c, &x))(cfg(3.0));
    close(&g.w.to_vec::<f32>(), &want.w.to_vec::<f32>());
    assert_eq!(g.scale, 3.0);
}

#[test]
fn a_checkpoint_holds_the_arrays_and_loading_takes_static_fields_from_the_template() {
    two_devices();
    let saved = Cfg {
        w: Array::from_vec(vec![9.0f32, 8.0, 7.0, 6.0], &[4]),
        ..cfg(0.5)
    };
    let bytes = checkpoint::to_bytes(&saved, &Metadata::default()).unwrap();
    let template = Cfg {
        name: "from the template".into(),
        ..cfg(0.25)
    };
    let (back, _) = checkpoint::from_bytes(&bytes, &template).unwrap();
    assert_eq!(back.w.to_vec::<f32>(), vec![9.0, 8.0, 7.0, 6.0]);
    assert_eq!(
        (back.scale, back.name.as_str()),
        (0.25, "from the template")
    );
}

#[test]
fn pmap_splits_the_arrays_and_gives_every_device_the_static_fields() {
    two_devices();
    let batch = Cfg {
        w: Array::from_vec((0..8).map(|v| v as f32).collect(), &[2, 4]),
        ..cfg(3.0)
    };
    let f = pmap(|c: Cfg| {
        let total = c.w.sum(None, false) * c.scale;
        if c.name == "double" {
            total * 2.0
        } else {
            total
        }
    });
    let out: Array = f.call(batch);
    close(&out.to_vec::<f32>(), &[36.0, 132.0]);
}
