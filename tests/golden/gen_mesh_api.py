"""JAX's current mesh API and its arrays made of pieces on 8 CPU devices, for
tests/mesh_api.rs.

Run: python tests/golden/gen_mesh_api.py   (rewrites tests/golden/mesh_api.json)

Records, with JAX 0.10.2 on 8 CPU devices:
- `make_mesh`: the device ids of `jax.make_mesh(shape, names)` in row-major order, for
  several shapes (or the error for too many devices);
- `make_array_from_callback`: for each sharding, the index ranges ([start, stop] per
  dimension) the callback is called with, in call order, and the array's values;
- `make_array_from_single_device_arrays`: the values when device i holds a piece full of i
  (replicas not compared: each device keeps its own);
- the process and device counts and `get_abstract_mesh` inside and outside `set_mesh`.
"""

import json
import os
import sys
import warnings

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

if jax.__version__ != "0.10.2" and "--any-jax-version" not in sys.argv:
    sys.exit(f"made with JAX 0.10.2, found {jax.__version__} (pass --any-jax-version)")


def spec_of(entries):
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def ranges(index, shape):
    return [[s.start or 0, shape[d] if s.stop is None else s.stop] for d, s in enumerate(index)]


out = {"make_mesh": [], "callback": [], "single_device_arrays": []}
for shape in [[8], [2, 4], [4, 2], [2, 2, 2], [1, 8], [2, 3], [3], [4, 4]]:
    names = ["a", "b", "c"][: len(shape)]
    try:
        mesh = jax.make_mesh(tuple(shape), tuple(names))
        out["make_mesh"].append({"shape": shape, "device_ids": [d.id for d in mesh.devices.flat]})
    except ValueError as e:
        out["make_mesh"].append({"shape": shape, "error": str(e)})

CALLBACK_CASES = [
    # mesh shape, names, array shape, spec
    ([2, 4], ["x", "y"], [4, 8], ["x", "y"]),
    ([2, 4], ["x", "y"], [4, 4], ["x"]),
    ([2, 4], ["x", "y"], [8, 3], [["y", "x"]]),
    ([2, 2, 2], ["a", "b", "c"], [4, 2, 2], [["c", "a"], None, "b"]),
    ([8], ["d"], [5], []),
]
for mesh_shape, names, shape, spec in CALLBACK_CASES:
    mesh = jax.make_mesh(tuple(mesh_shape), tuple(names))
    sharding = NamedSharding(mesh, spec_of(spec))
    whole = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    calls = []

    def callback(index):
        calls.append(ranges(index, shape))
        return whole[index]

    x = jax.make_array_from_callback(tuple(shape), sharding, callback)
    out["callback"].append({
        "mesh_shape": mesh_shape, "axis_names": names, "shape": shape, "spec": spec,
        "calls": calls, "values": np.asarray(x).reshape(-1).tolist(),
    })

    pieces = []
    for i, (device, index) in enumerate(sharding.addressable_devices_indices_map(tuple(shape)).items()):
        piece_shape = [len(range(*s.indices(n))) for s, n in zip(index, shape)]
        pieces.append(jax.device_put(np.full(piece_shape, device.id, np.float32), device))
    y = jax.make_array_from_single_device_arrays(tuple(shape), sharding, pieces)
    out["single_device_arrays"].append({
        "mesh_shape": mesh_shape, "axis_names": names, "shape": shape, "spec": spec,
        "values": np.asarray(y).reshape(-1).tolist(),
    })

mesh = jax.make_mesh((2, 4), ("x", "y"))
outside = jax.sharding.get_abstract_mesh()
with jax.set_mesh(mesh):
    inside = jax.sharding.get_abstract_mesh()
out["counts"] = {
    "process_index": jax.process_index(), "process_count": jax.process_count(),
    "process_indices": list(jax.process_indices()), "device_count": jax.device_count(),
    "local_device_count": jax.local_device_count(),
    "local_device_ids": [d.id for d in jax.local_devices()],
}
with warnings.catch_warnings():
    # JAX's deprecated aliases of the process counts.
    warnings.simplefilter("ignore")
    out["counts"]["host_count"] = jax.host_count()
    out["counts"]["host_id"] = jax.host_id()
    out["counts"]["host_ids"] = list(jax.host_ids())
# jaxrs's make_mesh makes Auto axes; JAX's makes Explicit ones unless told.
auto_mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(auto_mesh):
    inside_auto = jax.sharding.get_abstract_mesh()
made = jax.sharding.AbstractMesh((2,), ("x",), axis_types=(AxisType.Explicit,))
out["abstract_mesh"] = {
    "outside_empty": outside.empty,
    "inside_axis_names": list(inside.axis_names), "inside_axis_sizes": list(inside.axis_sizes),
    # As JAX prints them: from no mesh, from a mesh of devices, and made from axes alone.
    "outside_str": str(outside), "inside_str": str(inside_auto), "made_str": str(made),
    "abstract_device": repr(inside_auto.abstract_device),
    "mesh_str": str(auto_mesh), "one_axis_mesh_str": str(jax.make_mesh((8,), ("d",),
                                                                   axis_types=(AxisType.Auto,))),
}

# jax.default_device: where arrays and computations go (the device id of each result).
devs = jax.devices()
dev_of = lambda a: next(iter(a.devices())).id  # noqa: E731
double = jax.jit(lambda v: v * 2 + 1)
placement = {}
with jax.default_device(devs[2]):
    made = jnp.ones(3)
    placement["made_in_scope"] = dev_of(made)
    placement["op_in_scope"] = dev_of(made * 2)
    placement["jit_in_scope"] = dev_of(double(made))
    placement["values_in_scope"] = np.asarray(double(made)).tolist()
committed = jax.device_put(jnp.arange(3.0), devs[5])
placement["op_on_committed"] = dev_of(committed + 1)
placement["jit_on_committed"] = dev_of(double(committed))
with jax.default_device(devs[2]):
    placement["op_on_committed_in_scope"] = dev_of(committed + 1)
placement["made_outside"] = dev_of(jnp.ones(3))
placement["jit_outside"] = dev_of(double(jnp.ones(3)))
out["default_device"] = placement

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mesh_api.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
print(f"wrote {path}")
