"""Make tests/fixtures/official_go2_outputs.npz: the official Flax model's outputs on 8 fixed inputs.

NEEDS JAX and the official code; run it in a separate environment, never from the tests (they only read the
fixture). The official repository is used as a reference implementation here, not copied into simdist:

    python3 -m venv /tmp/jax-env
    /tmp/jax-env/bin/pip install "jax[cpu]==0.6.0" "flax==0.10.4" "orbax-checkpoint==0.11.25" pyyaml
    git clone https://github.com/CLeARoboticsLab/simdist /tmp/official   # commit 8985ca1
    PYTHONPATH=/tmp/official /tmp/jax-env/bin/python results/official/make_fixture.py \
        --checkpoint /tmp/official/checkpoints/models/go2_2026-02-12 --out tests/fixtures/official_go2_outputs.npz

Inputs are drawn from the checkpoint's own scaler statistics (mean + std · N(0, 1), numpy seed 0); the outputs
are ``model.inference`` (deterministic, unscaled rewards, values and actions).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import yaml

BATCH = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, help="the official run folder (model_config.yaml + steps)")
    parser.add_argument("--step", type=int, default=367004)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import flax.nnx as nnx
    import jax.numpy as jnp
    import orbax.checkpoint as ocp

    from simdist.modeling import models  # the official package (PYTHONPATH)

    with open(os.path.join(args.checkpoint, "model_config.yaml")) as f:
        cfg = yaml.safe_load(f)
    dummy = {k: {"mean": jnp.zeros(d, jnp.float32), "std": jnp.ones(d, jnp.float32)}
             for k, d in cfg["scaler_params_struct"].items()}
    model = models.get_model(cfg, dummy, nnx.Rngs(0))
    graphdef, state = nnx.split(model)
    with ocp.CheckpointManager(os.path.abspath(args.checkpoint),
                               options=ocp.CheckpointManagerOptions(read_only=True)) as mngr:
        restored = mngr.restore(args.step, args=ocp.args.StandardRestore(item=state.to_pure_dict()))
    state.replace_by_pure_dict(restored)
    model = nnx.merge(graphdef, state)

    scaler = {k: {p: np.asarray(v) for p, v in d.items()} for k, d in restored["scaler"]["scaler_params"].items()}
    rng = np.random.default_rng(0)
    h, t = cfg["model"]["dataset"]["history_length"], cfg["model"]["dataset"]["prediction_length"]

    def draw(key: str, *shape: int) -> np.ndarray:
        s = scaler[key]
        return (s["mean"] + s["std"] * rng.standard_normal((*shape, s["mean"].shape[-1]))).astype(np.float32)

    inputs = {
        "proprio_obs_hist": draw("proprio_obs", BATCH, h + 1),
        "extero_obs": draw("extero_obs", BATCH),
        "acts_hist": draw("actions", BATCH, h),
        "fut_acts": draw("actions", BATCH, t),
        "fut_cmds": draw("commands", BATCH, t + 1),
    }
    out = model.inference({k: jnp.asarray(v) for k, v in inputs.items()})
    arrays = {f"input_{k}": v for k, v in inputs.items()}
    arrays.update({f"output_{k}": np.asarray(out[k], np.float32) for k in ("latents", "rewards", "values", "actions")})
    arrays["step"] = np.asarray(args.step)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp.npz"
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, args.out)
    for k, v in arrays.items():
        print(k, v.shape)


if __name__ == "__main__":
    main()
