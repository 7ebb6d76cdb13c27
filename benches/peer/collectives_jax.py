"""JAX's side of benches/collectives.rs: microseconds per cached call on 8 CPU devices.

Run: python benches/peer/collectives_jax.py [calls]   (needs `pip install jax==0.10.2`)
Prints one line per measurement, `name: <µs per call>`; the Rust bench parses them.

- `jax_pmap_call_us`: a cached `jax.pmap(lambda x: x * 2.0 + 1.0)` on an f32[8, 4] whose
  rows already lie one per device (the result of the previous call), awaited each call.
- `jax_pmap_psum_us`: the same with a `psum` over the 8 devices inside.
- `jax_shard_map_call_us`, `jax_shard_map_psum_us`: the same two functions as
  `jax.jit(jax.shard_map(f, mesh=, in_specs=P("d"), out_specs=P("d")))` over a 1-D mesh of
  the 8 devices (JAX's replacement for pmap), on an input already split over the mesh.
"""
import os
import sys
import time

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def best_us(f, x, calls: int) -> float:
    y = f(x)
    y.block_until_ready()  # compile
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            f(y).block_until_ready()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    assert jax.local_device_count() == 8, jax.devices()
    x = jnp.arange(32, dtype=jnp.float32).reshape(8, 4)
    affine = jax.pmap(lambda v: v * 2.0 + 1.0, axis_name="d")
    summed = jax.pmap(lambda v: jax.lax.psum(v, "d") * 1e-3, axis_name="d")
    print(f"jax_pmap_call_us: {best_us(affine, x, calls):.3f}")
    print(f"jax_pmap_psum_us: {best_us(summed, x, calls):.3f}")
    mesh = jax.make_mesh((8,), ("d",))
    spec = jax.sharding.PartitionSpec("d")

    def with_shard_map(f):
        return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=spec, out_specs=spec))

    sm_affine = with_shard_map(lambda v: v * 2.0 + 1.0)
    sm_summed = with_shard_map(lambda v: jax.lax.psum(v, "d") * 1e-3)
    xs = sm_affine(jax.device_put(x, jax.sharding.NamedSharding(mesh, spec)))
    print(f"jax_shard_map_call_us: {best_us(sm_affine, xs, calls):.3f}")
    print(f"jax_shard_map_psum_us: {best_us(sm_summed, xs, calls):.3f}")
    print(f"jax_version: {jax.__version__}")


if __name__ == "__main__":
    main()
