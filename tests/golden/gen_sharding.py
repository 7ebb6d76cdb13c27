"""Shard layouts JAX gives on 8 CPU devices, for tests/sharding.rs.

Run: python tests/golden/gen_sharding.py   (rewrites tests/golden/sharding.json)

For each case (mesh shape and axis names, array shape, partition spec) it records, in the
mesh's device order, each shard's device id, index ranges ([start, stop] per dimension) and
replica id, as `jax.device_put(x, NamedSharding(mesh, spec)).addressable_shards` gives them,
plus the shard shape. The mesh's devices are jax.devices() in order, reshaped row-major.
"""

import json
import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")

CASES = [
    # name, mesh shape, axis names, array shape, spec (a list: None, "ax" or ["ax", "ax"])
    ("dp", [2, 4], ["dp", "mp"], [8, 4], ["dp"]),
    ("none_mp", [2, 4], ["dp", "mp"], [4, 8], [None, "mp"]),
    ("dpmp_none", [2, 4], ["dp", "mp"], [16, 2], [["dp", "mp"], None]),
    ("mpdp", [2, 4], ["dp", "mp"], [8], [["mp", "dp"]]),
    ("dp_mp", [2, 4], ["dp", "mp"], [4, 8], ["dp", "mp"]),
    ("mp_dp", [2, 4], ["dp", "mp"], [8, 6], ["mp", "dp"]),
    ("replicated", [2, 4], ["dp", "mp"], [3, 2], []),
    ("rank3_none_dp", [2, 4], ["dp", "mp"], [2, 4, 3], [None, "dp"]),
    ("mesh1d", [8], ["d"], [16, 3], ["d"]),
    ("mesh3d", [2, 2, 2], ["a", "b", "c"], [4, 4], [["c", "a"], "b"]),
]


def spec_of(entries):
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def main():
    devices = jax.devices()
    assert len(devices) == 8, devices
    out = []
    for name, mesh_shape, axes, shape, spec in CASES:
        n = int(np.prod(mesh_shape))
        mesh = Mesh(np.array(devices[:n]).reshape(mesh_shape), tuple(axes))
        sharding = NamedSharding(mesh, spec_of(spec))
        x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        xs = jax.device_put(x, sharding)
        by_device = {s.device.id: s for s in xs.addressable_shards}
        shards = []
        for d in mesh.devices.flat:
            s = by_device[d.id]
            index = [[sl.start or 0, shape[i] if sl.stop is None else sl.stop]
                     for i, sl in enumerate(s.index)]
            assert np.array_equal(np.asarray(s.data), x[s.index])
            shards.append({"device": d.id, "index": index, "replica_id": s.replica_id})
        out.append({
            "name": name,
            "mesh_shape": mesh_shape,
            "axis_names": axes,
            "shape": shape,
            "spec": spec,
            "shard_shape": list(sharding.shard_shape(tuple(shape))),
            "shards": shards,
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sharding.json")
    with open(path, "w") as f:
        # One case per line: small diffs when a case changes.
        f.write('{"jax_version": "%s", "cases": [\n' % jax.__version__)
        f.write(",\n".join(json.dumps(c) for c in out))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
