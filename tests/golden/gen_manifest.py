#!/usr/bin/env python3
"""JAX 0.10.2's public names per namespace, for the manifest (`API.md`, `tests/manifest.rs`).

Usage (from the repository root):

    python tests/golden/gen_manifest.py    # rewrites tests/golden/jax_names.json

A name is public when it is in `dir(module)`, does not start with `_` and is not a submodule.
`jax.scipy.stats` is mostly submodules (`norm`, `beta`, ...), so their public names are listed
under it as `norm.logpdf` (the row `jax.scipy.stats.norm.logpdf`).

Each name has a kind:

- `function`: anything callable that is not a class (functions, `jax.custom_jvp` objects,
  ufuncs, functools.partial objects);
- `class`: a class that is not a dtype class, or a type alias (`optax.Updates`);
- `dtype`: a scalar type (`jnp.float32`, `jnp.bool_`, `jnp.dtype`, ...), which the issue's
  count leaves out;
- `primitive`: one of `jax.lax`'s `*_p` objects (`lax.add_p`), JAX's IR vocabulary for
  writers of transformation rules, which the count leaves out (the issue's table counts
  `jax.lax` without them; jaxrs's primitives are internal);
- `constant`: anything else (`jnp.pi`, `jnp.newaxis`, `jax.config`, ...);
- `alias:NAME`: the same object as NAME in the same namespace (`jnp.acos` is `jnp.arccos`),
  which the count leaves out too. Of a group of identical objects, the one whose `__name__`
  is its name is the original; without one, the first in sorted order.

Deterministic: sorted names, no timestamps; reruns give byte-identical files.
"""

import importlib
import inspect
import json
import os
import sys
import types

os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.extend  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

JAX_VERSION = "0.10.2"
OPTAX_VERSION = "0.2.8"
if jax.__version__ != JAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"expected jax {JAX_VERSION}, found {jax.__version__} (--any-jax-version to override)")
if optax.__version__ != OPTAX_VERSION and "--any-jax-version" not in sys.argv:
    sys.exit(f"expected optax {OPTAX_VERSION}, found {optax.__version__}")

jax.config.update("jax_enable_x64", True)

NAMESPACES = [
    "jax",
    "jax.numpy",
    "jax.lax",
    "jax.nn",
    "jax.nn.initializers",
    "jax.random",
    "jax.tree",
    "jax.tree_util",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.scipy.linalg",
    "jax.scipy.special",
    "jax.scipy.stats",
    "jax.sharding",
    "optax",
]

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_names.json")


def is_dtype_class(obj):
    """jnp's scalar types (`_ScalarMeta` instances), numpy scalar types and `np.dtype`."""
    if type(obj).__name__ == "_ScalarMeta":
        return True
    if inspect.isclass(obj) and (issubclass(obj, np.generic) or obj is np.dtype):
        return True
    return False


def public(module):
    """(name, object) pairs of the module's public, non-module names."""
    out = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if inspect.ismodule(obj):
            continue
        out.append((name, obj))
    return out


def base_kind(obj):
    if isinstance(obj, jax.extend.core.Primitive):
        return "primitive"
    if is_dtype_class(obj):
        return "dtype"
    if inspect.isclass(obj) or type(obj).__module__ == "typing" or isinstance(
            obj, (types.UnionType, types.GenericAlias)):
        # Type aliases (`lax.PrecisionLike`, `optax.Params`) are type names, as classes are.
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def kinds(pairs):
    """The kind of each name, aliases resolved among functions and classes."""
    groups = {}
    for name, obj in pairs:
        if base_kind(obj) in ("function", "class"):
            groups.setdefault(id(obj), []).append(name)
    by_name = dict(pairs)
    original = {}
    for names in groups.values():
        if len(names) < 2:
            continue
        obj = by_name[names[0]]
        own = [n for n in names if getattr(obj, "__name__", None) == n]
        first = own[0] if own else sorted(names)[0]
        for n in names:
            if n != first:
                original[n] = first
    out = {}
    for name, obj in pairs:
        out[name] = f"alias:{original[name]}" if name in original else base_kind(obj)
    return out


def names_of(ns):
    """name -> kind for the namespace, sorted by name."""
    module = importlib.import_module(ns)
    out = kinds(public(module))
    if ns == "jax.scipy.stats":
        # The distributions are submodules; their functions are the namespace's vocabulary.
        for sub in sorted(dir(module)):
            obj = getattr(module, sub)
            if sub.startswith("_") or not inspect.ismodule(obj):
                continue
            if not obj.__name__.startswith("jax.scipy.stats."):
                continue
            for name, kind in kinds(public(obj)).items():
                if kind.startswith("alias:"):
                    kind = f"alias:{sub}.{kind[len('alias:'):]}"
                out[f"{sub}.{name}"] = kind
    return dict(sorted(out.items()))


def main():
    namespaces = {}
    for ns in NAMESPACES:
        namespaces[ns] = names_of(ns)
    lines = ["{", f'  "jax_version": "{jax.__version__}",',
             f'  "optax_version": "{optax.__version__}",', '  "namespaces": {']
    for i, ns in enumerate(NAMESPACES):
        entries = namespaces[ns]
        lines.append(f'    "{ns}": {{')
        items = sorted(entries.items())
        for j, (name, kind) in enumerate(items):
            comma = "," if j + 1 < len(items) else ""
            lines.append(f"      {json.dumps(name)}: {json.dumps(kind)}{comma}")
        lines.append("    }" + ("," if i + 1 < len(NAMESPACES) else ""))
    lines += ["  }", "}", ""]
    text = "\n".join(lines)
    json.loads(text)
    with open(OUT, "w") as f:
        f.write(text)
    for ns in NAMESPACES:
        ks = list(namespaces[ns].values())
        count = sum(1 for k in ks if k in ("function", "class", "constant"))
        print(f"{ns}: {len(ks)} names, {count} counted "
              f"({sum(k.startswith('alias:') for k in ks)} aliases, {ks.count('dtype')} dtypes, "
              f"{ks.count('primitive')} primitives)")


if __name__ == "__main__":
    main()
