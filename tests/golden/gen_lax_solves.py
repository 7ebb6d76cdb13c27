"""Writes lax_solves.json: lax.custom_root and lax.custom_linear_solve, each case's outputs
being the solution and JAX's gradient of a scalar loss of it with respect to the parameters
(see jaxcases.py for the case format). Run with /work/venv/bin/python.

The solvers are written identically on the Rust side (tests/lax_solves.rs): Newton's method
with a central difference for the roots, conjugate gradients and Cramer's rule for the linear
systems. jaxrs takes the parameters explicitly (f(params, x)); JAX's closures capture them."""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxcases import Cases

c = Cases("lax_solves")


def newton(g, y0):
    y = y0
    for _ in range(30):
        d = (g(y + 1e-4) - g(y - 1e-4)) / 2e-4
        y = y - g(y) / d
    return y


def diag_solve(g, y):
    return y / g(jnp.ones_like(y))


ROOTS = {
    # y with y^2 = x^3.
    "sqrt_cubed": lambda p, y: y * y - p * p * p,
    # y with y^3 + y = p, elementwise.
    "cubic": lambda p, y: y * y * y + y - p,
    # y with a y = b.
    "ratio": lambda p, y: p[0] * y - p[1],
}


def root_case(name, params, y0):
    f = ROOTS[name]

    def solution(p, y0):
        return lax.custom_root(lambda y: f(p, y), y0, newton, diag_solve)

    def loss_and_grad(*args):
        p, y0 = (tuple(args[:-1]) if len(args) > 2 else args[0]), args[-1]
        y = solution(p, y0)
        g = jax.grad(lambda p: jnp.sum(jnp.sin(solution(p, y0))))(p)
        return (y, *g) if isinstance(g, tuple) else (y, g)

    c.add("lax.custom_root", loss_and_grad, list(params) + [y0], params={"f": name}, grad=False,
          vmap=False)


root_case("sqrt_cubed", [np.float64(3.0).reshape(())], np.ones((), np.float64))
root_case("sqrt_cubed", [np.float64(0.7).reshape(())], np.ones((), np.float64))
root_case("cubic", [c.normal((4,), "float64")], np.zeros((4,), np.float64))
root_case("ratio", [c.uniform((3,), 1.0, 2.0, "float64"), c.normal((3,), "float64")],
          np.zeros((3,), np.float64))


def cg(matvec, b):
    x = jnp.zeros_like(b)
    r = b - matvec(x)
    p = r
    for _ in range(8):
        rr = jnp.vdot(r, r)
        ap = matvec(p)
        alpha = rr / jnp.where(rr == 0, 1.0, jnp.vdot(p, ap))
        x = x + alpha * p
        r_new = r - alpha * ap
        beta = jnp.vdot(r_new, r_new) / jnp.where(rr == 0, 1.0, rr)
        p = r_new + beta * p
        r = r_new
    return x


def cramer2(matvec, b):
    c0 = matvec(jnp.array([1.0, 0.0]))
    c1 = matvec(jnp.array([0.0, 1.0]))
    det = c0[0] * c1[1] - c1[0] * c0[1]
    return jnp.stack([(b[0] * c1[1] - c1[0] * b[1]) / det, (c0[0] * b[1] - b[0] * c0[1]) / det])


def linear_case(a, b, symmetric):
    solver = cg if symmetric else cramer2

    def solution(a, b):
        return lax.custom_linear_solve(lambda v: a @ v, b, solver,
                                       transpose_solve=None if symmetric else solver,
                                       symmetric=symmetric)

    def loss_and_grad(a, b):
        x = solution(a, b)
        ga, gb = jax.grad(lambda a, b: jnp.sum(jnp.sin(solution(a, b))), argnums=(0, 1))(a, b)
        return x, ga, gb

    c.add("lax.custom_linear_solve", loss_and_grad, [a, b], params={"symmetric": symmetric},
          grad=False, vmap=False)


m = c.normal((3, 3), "float64")
linear_case(m @ m.T + 3 * np.eye(3), c.normal((3,), "float64"), True)
linear_case(c.normal((2, 2), "float64") + 2 * np.eye(2), c.normal((2,), "float64"), False)
c.save()
