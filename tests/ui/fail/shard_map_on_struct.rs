#[jaxrs::shard_map(in_specs = P!["dp"], out_specs = P!["dp"])]
struct Model;

fn main() {}
