use jaxrs::prelude::*;

struct Layer {
    w: Array,
}

impl Layer {
    #[remat]
    fn forward(&self, x: &Array) -> Array {
        x.matmul(&self.w).tanh()
    }
}

fn main() {
    let _ = Layer::forward;
}
