use jaxrs::prelude::*;

struct Model {
    w: Array,
}

impl Model {
    #[jit]
    fn forward(&self, x: &Array) -> Array {
        let _ = x;
        self.w.clone()
    }
}

fn main() {}
