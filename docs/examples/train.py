"""A small JAX program for the docs' examples: a loop whose carries trade
places, so XLA's copy insertion orders its copies with control edges.

    XLA_FLAGS="--xla_dump_to=xla_dump --xla_dump_hlo_pass_re=copy-insertion" python train.py
"""

import jax
import jax.numpy as jnp


def step(a, b):
    def body(state):
        i, a, b = state
        return i + 1, b, a + b

    return jax.lax.while_loop(lambda state: state[0] < 5, body, (jnp.int32(0), a, b))


def example_inputs():
    """The arguments `hlo2penguin corpus add CORPUS train.py:step` exports `step` with."""
    return jnp.ones(4), jnp.arange(4.0)


if __name__ == "__main__":
    print(jax.jit(step)(jnp.ones(4), jnp.ones(4))[1])
