"""StableHLO files run through jaxlib 0.10.2's own runtime: the mirror of benches/train_step.rs's
`JAXRS_TRAIN_STEP_PROGRAMS`, which runs the same files through jaxrs's plugin.

Run: python benches/peer/run_programs_jax.py a.mlir,b.mlir [STEPS]   (needs jax==0.10.2)

With both, each side's program runs on each side's runtime, which tells a difference of
programs from a difference of runtimes (XLA builds). The files come from
`train_step_jax.py --child ROW dump DIR` (JAX's) and `JAXRS_TRAIN_STEP_CHILD=ROW:dump` (jaxrs's).
A program over several devices runs on that many CPU devices: a cross-replica one
(`mhlo.num_replicas`, jaxrs's pmap) or an SPMD one (`mhlo.num_partitions` with Shardy
shardings, JAX's pmap); every argument of such a program must be split along its first
dimension, one slice per device (as a pmap's are). Arguments are zeros; donated ones (the
leading `jax.buffer_donor` / `tf.aliasing_output` arguments) are fed the matching leading
results of the step before, and one scalar (the last result) is read per step, as the training
loops do. The files' rounds alternate, so a change in the machine's load falls on all of them.
Prints `PATH: compile C ms, run R ms` per file (R: best of 3 rounds of STEPS steps).
"""
import os
import re
import sys
import time


def module_count(text, name):
    found = re.search(name + r" = (\d+)", text[: text.index("\n")])
    return int(found.group(1)) if found else 1


def arguments(text):
    """(per-device shape, numpy dtype name, donated) of each argument of `main`."""
    signature = text[text.index("@main(") + len("@main("): text.index(") -> ")]
    out = []
    for arg in signature.split("%arg")[1:]:
        dims = re.search(r"tensor<([^>]*)>", arg).group(1).split("x")
        dtype = {"f32": "float32", "bf16": "bfloat16", "i32": "int32", "ui32": "uint32"}[dims[-1]]
        shape = [int(d) for d in dims[:-1]]
        split = re.search(r"sdy.sharding<@mesh, \[([^\]]*)\]", arg)
        if split:
            first, *rest = split.group(1).split(",")
            assert '"' in first and not any('"' in r for r in rest), f"argument split as {split}"
            shape[0] //= module_count(text, "mhlo.num_partitions")
        donated = "jax.buffer_donor" in arg or "tf.aliasing_output" in arg
        out.append((shape, dtype, donated))
    return out


def main():
    paths = sys.argv[1].split(",")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    texts = [open(p).read() for p in paths]
    counts = [module_count(t, "mhlo.num_partitions") * module_count(t, "mhlo.num_replicas")
              for t in texts]
    os.environ["JAX_PLATFORMS"] = "cpu"
    if max(counts) > 1:
        os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={max(counts)}"
    import jax
    import numpy as np
    from jax.extend import backend
    from jax._src.lib import xla_client as xc
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    client = backend.get_backend()
    programs = []
    for path, text, n in zip(paths, texts, counts):
        devices = client.devices()[:n]
        options = xc.CompileOptions()
        build = options.executable_build_options
        partitions = module_count(text, "mhlo.num_partitions")
        build.num_partitions = partitions
        build.num_replicas = module_count(text, "mhlo.num_replicas")
        if partitions > 1:
            build.use_spmd_partitioning = True
            build.use_shardy_partitioner = True
        ids = np.arange(n).reshape((1, n) if partitions > 1 else (n, 1))
        build.device_assignment = xc.DeviceAssignment.create(ids)
        # As jaxrs's compile options and JAX's jit set it.
        options.env_option_overrides = [("xla_cpu_enable_fast_min_max", False)]
        started = time.perf_counter()
        exe = client.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
        compile_ms = (time.perf_counter() - started) * 1e3
        split = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec("d"))
        args, donated = [], 0
        for shape, dtype, donor in arguments(text):
            donated += donor
            if n == 1:
                args.append(jax.device_put(np.zeros(shape, dtype), devices[0]))
                continue
            assert shape, "a program over several devices takes each argument split"
            pieces = [jax.device_put(np.zeros(shape, dtype), d) for d in devices]
            args.append(jax.make_array_from_single_device_arrays(
                [shape[0] * n] + shape[1:], split, pieces))
        programs.append({"path": path, "exe": exe, "args": args, "donated": donated,
                         "compile_ms": compile_ms, "split": split, "n": n})

    def step(p):
        results = p["exe"].execute_sharded(p["args"]).disassemble_into_single_device_arrays()
        np.asarray(results[-1][0])
        for i in range(p["donated"]):
            if p["n"] == 1:
                p["args"][i] = results[i][0]
            else:
                p["args"][i] = jax.make_array_from_single_device_arrays(
                    p["args"][i].shape, p["split"], results[i])

    for p in programs:
        step(p)
        step(p)
    best = [float("inf")] * len(programs)
    for _ in range(3):
        for k, p in enumerate(programs):
            started = time.perf_counter()
            for _ in range(steps):
                step(p)
            best[k] = min(best[k], (time.perf_counter() - started) / steps * 1e3)
    for p, ms in zip(programs, best):
        print(f"{p['path']}: compile {p['compile_ms']:.1f} ms, run {ms:.3f} ms")


if __name__ == "__main__":
    main()
