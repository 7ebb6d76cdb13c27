use jaxrs::prelude::*;

fn eight() -> Vec<jaxrs::Device> {
    jaxrs::set_cpu_device_count(8).expect("8 CPU devices");
    jaxrs::devices()
}

#[test]
fn smoke() {
    eight();
    let f = jaxrs::pmap(|(x, s): (Array, Array)| x.sum(None, false) * &s)
        .axis_name("d")
        .in_axes((0, None));
    let x = Array::arange(0.0, 16.0, 1.0, DType::F32).reshape(&[8, 2]);
    let y: Array = f.call((x.clone(), Array::scalar(10.0f32)));
    println!("{:?} {}", y.to_vec::<f32>(), y.sharding().unwrap());
    let y2: Array = f.call((x, Array::scalar(1.0f32)));
    println!("{:?} {}", y2.to_vec::<f32>(), f.site().cache_misses());
}
