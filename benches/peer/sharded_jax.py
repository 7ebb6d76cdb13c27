"""JAX's side of benches/sharded.rs: ms per step of the sharded transformer on 8 CPU devices.

Run: python benches/peer/sharded_jax.py [steps]   (needs `pip install jax==0.10.2 optax`)
Prints `name: value` lines; the Rust bench parses them.

The model, its shardings and its step are tests/golden/gen_transformer_sharded.py's (the JAX
program the Rust test checks examples/transformer_lm.rs's `--mesh dp=2,mp=4` step against),
at the example's default sizes: d_model 128, 4 heads, 2 blocks, context 64, batch 32,
vocabulary 65 (tiny Shakespeare's characters), on a 2 x 4 ("dp", "mp") mesh: FSDP over "dp",
heads and hidden units over "mp", the MLP a shard_map. The parameters, Adam's state and one
batch are laid out on the devices first; the step donates the parameters and the state, and
each step's loss is read back to the host, as the Rust side does.

- `jax_sharded_step_ms`: the best of 5 rounds of `steps` steps (default 20), after a warm-up.
"""
import importlib.util
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "gen_transformer_sharded",
    os.path.join(HERE, "..", "..", "tests", "golden", "gen_transformer_sharded.py"),
)
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

# examples/transformer_lm.rs's Config::default(), and tiny Shakespeare's vocabulary.
CONFIG = {
    "vocab": 65,
    "d_model": 128,
    "heads": 4,
    "layers": 2,
    "context": 64,
    "batch": 32,
    "mlp_ratio": 4,
    "peak_lr": 3e-3,
    "warmup_steps": 50,
    "decay_steps": 600,
    "weight_decay": 0.1,
    "clip_norm": 1.0,
    "steps": 1,
    "seed": 0,
}


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    assert jax.local_device_count() == 8, jax.devices()
    c = CONFIG
    mesh = model.make_mesh()
    params = model.init(jax.random.PRNGKey(c["seed"]), c)
    state = model.optimizer(c).init(params)
    step, ps, ss = model.sharded_step(c, mesh, params, state)
    p, s = jax.device_put(params, ps), jax.device_put(state, ss)
    rows = NamedSharding(mesh, P("dp", None))
    inputs, targets = (jax.device_put(a, rows) for a in model.batch(0, c))
    for _ in range(3):  # compile and warm up
        p, s, loss = step(p, s, inputs, targets)
        float(loss)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(steps):
            p, s, loss = step(p, s, inputs, targets)
            float(loss)
        best = min(best, (time.perf_counter() - t0) / steps * 1e3)
    print(f"jax_sharded_step_ms: {best:.3f}")
    print(f"jax_version: {jax.__version__}")


if __name__ == "__main__":
    main()
