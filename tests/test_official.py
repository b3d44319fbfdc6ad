"""The official SimDist Go2 model in simdist: the converted zoo weights reproduce the official Flax outputs
(fixture made once with JAX by tests/fixtures/make_official_go2_outputs.py), load offline by their zoo id, and the
converter maps (and refuses) official parameter trees; the orbax reading runs where tensorstore is installed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from simdist import WorldModel, load_agent
from simdist.cli import main
from simdist.errors import InputError
from simdist.official.mapping import config_from_official, state_dict_from_official

FIXTURE = Path(__file__).parent / "fixtures" / "official_go2_outputs.npz"
ZOO_ID = "simdist/go2-official"
TOL = 1e-5


@pytest.fixture(scope="module")
def official() -> WorldModel:
    return WorldModel.from_pretrained(ZOO_ID, local_files_only=True).eval()


@pytest.fixture(scope="module")
def fixture() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as data:
        return {k: data[k] for k in data.files}


def official_outputs(model: WorldModel, fx: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """latents, rewards, values, policy actions of ``model`` on the fixture's inputs (official conventions)."""
    t = {k.removeprefix("input_"): torch.from_numpy(v) for k, v in fx.items() if k.startswith("input_")}
    with torch.no_grad():
        enc = model.encode({"proprio": t["proprio_obs_hist"], "extero": t["extero_obs"][:, None].expand(-1, 26, -1)},
                           t["acts_hist"])
        imag = model.imagine(enc, t["fut_acts"], t["fut_cmds"])
        actions = model.policy_actions(enc, t["fut_cmds"])
    return {"latents": imag.latents.numpy(), "rewards": imag.rewards.numpy(), "values": imag.values.numpy(),
            "actions": actions.numpy()}


def test_zoo_weights_reproduce_the_official_flax_outputs(official, fixture):
    out = official_outputs(official, fixture)
    for key, value in out.items():
        ref = fixture[f"output_{key}"]
        assert value.shape == ref.shape, key
        err = np.abs(value - ref).max()
        assert err < TOL, f"{key}: max error {err:.2e}"


def test_fixture_is_not_trivial(fixture):
    # the outputs vary across the 8 inputs, so matching them is a real check
    for key in ("latents", "rewards", "values", "actions"):
        assert fixture[f"output_{key}"].std(axis=0).mean() > 1e-3, key


def test_zoo_entry_loads_offline_as_an_agent_with_the_official_planner(tmp_path, official):
    agent = load_agent(ZOO_ID, local_files_only=True)
    assert agent.world_model.config.value_offset == 1
    assert agent.world_model.count_parameters(trainable_only=True)["total"] == 667_758
    from simdist.zoo import bundled_folder

    folder = bundled_folder(ZOO_ID)
    planner = json.loads((folder / "planner.json").read_text())
    expected = {"num_samples": 450, "mixture_coef": 0.05, "iterations": 8, "num_elites": 64, "temperature": 0.25,
                "init_std": 2.0, "min_std": 0.05, "discount": 0.99}
    assert {k: planner[k] for k in expected} == expected
    card = (folder / "README.md").read_text()
    for text in ("MIT", "Permission is hereby granted", "367004", "Levy", "CLeARoboticsLab/simdist"):
        assert text in card, text


def test_round_trip_save_and_load_gives_the_same_outputs(tmp_path, official, fixture):
    official.save_pretrained(tmp_path / "copy")
    again = WorldModel.from_pretrained(tmp_path / "copy").eval()
    a, b = official_outputs(official, fixture), official_outputs(again, fixture)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


# ------------------------------------------------------------------------------------------ the mapping


def official_config() -> dict:
    """The parts of the released model_config.yaml the converter reads."""
    attn = {"heads": 8, "layers": 2, "mask": "causal", "mlp_hidden_size_factor": 4}
    head = {"attention": {"heads": 4, "layers": 1, "mask": None, "mlp_hidden_size_factor": 4},
            "decoder": {"layers": 0, "mlp_hidden_size_factor": 2}}
    return {
        "model": {
            "type": "quadruped_world_model", "latent_dim": 64,
            "dataset": {"history_length": 25, "prediction_length": 25},
            "dropout": {"attention": 0.05, "mlp": 0.2},
            "dynamics": {"attention": attn},
            "embedding": {"future_acts_layers": 0, "future_cmds_layers": 0, "reward_layers": 0, "value_layers": 0,
                          "mlp_hidden_size_factor": 2},
            "encoder": {"action_layers": 0, "latent_layers": 2, "mlp_hidden_size_factor": 2, "proprio_obs_layers": 2,
                        "extero_obs": {"height_cnn": {"features": [8, 16, 32], "kernel_size": 3,
                                                      "projection_hidden_dims": [192, 128], "strides": [2, 2, 2]}}},
            "policy": {"attention": {**attn, "layers": 4}, "decoder": {"layers": 0, "mlp_hidden_size_factor": 2}},
            "reward": head, "value": head,
        },
        "scaler_params_struct": {"actions": 12, "commands": 3, "extero_obs": 315, "proprio_obs": 35, "rewards": 1,
                                 "values": 1},
        "system": {"name": "go2", "extero_obs": {"types": [{"dim": [21, 15], "name": "height_scan"}]}},
        "run_name": "test",
    }


def to_official(model: WorldModel) -> dict[str, np.ndarray]:
    """The official (Flax) parameter tree of ``model``, written out independently of the converter from the
    layouts the official code uses: Linear (in, out), attention (in, heads, head_dim) / (heads, head_dim, out),
    conv HWIO, LayerNorm scale, MLP layers/i + output_layer, scaler mean/std."""
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    tree: dict[str, np.ndarray] = {}

    def linear(dst: str, src: str) -> None:
        tree[f"{dst}/kernel"], tree[f"{dst}/bias"] = sd[f"{src}.weight"].T, sd[f"{src}.bias"]

    def mlp(dst: str, src: str, hidden: int) -> None:
        for i in range(hidden):
            linear(f"{dst}/layers/{i}", f"{src}.{2 * i}")
        linear(f"{dst}/output_layer", f"{src}.{2 * hidden}")

    def attention(dst: str, src: str, heads: int) -> None:
        for o, s in (("query", "q"), ("key", "k"), ("value", "v")):
            w = sd[f"{src}.{s}.weight"]
            tree[f"{dst}/{o}/kernel"] = w.T.reshape(w.shape[1], heads, -1)
            tree[f"{dst}/{o}/bias"] = sd[f"{src}.{s}.bias"].reshape(heads, -1)
        w = sd[f"{src}.out.weight"]
        tree[f"{dst}/out/kernel"] = w.T.reshape(heads, -1, w.shape[0])
        tree[f"{dst}/out/bias"] = sd[f"{src}.out.bias"]

    def norm(dst: str, src: str) -> None:
        tree[f"{dst}/scale"], tree[f"{dst}/bias"] = sd[f"{src}.weight"], sd[f"{src}.bias"]

    def block(dst: str, src: str, heads: int, decoder: bool) -> None:
        if decoder:
            attention(f"{dst}/attention_1", f"{src}.self_attn", heads)
            attention(f"{dst}/attention_2", f"{src}.cross_attn", heads)
        else:
            attention(f"{dst}/attention", f"{src}.attn", heads)
        for j in range(1, 4 if decoder else 3):
            norm(f"{dst}/layernorm_{j}", f"{src}.norm{j}")
        mlp(f"{dst}/dense_proj", f"{src}.mlp", 1)

    e = "encoder"
    mlp(f"{e}/proprio_obs_proj", "encoder.proprio_proj", 2)
    mlp(f"{e}/latent_mlp", "encoder.latent_mlp", 2)
    mlp(f"{e}/hm_enc/hm_proj", "encoder.heightmap.proj", 2)
    linear(f"{e}/act_proj/output_layer", "encoder.act_proj")
    for i, name in enumerate(["layers/0", "layers/1", "output_layer"]):
        tree[f"{e}/hm_enc/hm_cnn/cnn/{name}/kernel"] = sd[f"encoder.heightmap.convs.{i}.weight"].transpose(2, 3, 1, 0)
        tree[f"{e}/hm_enc/hm_cnn/cnn/{name}/bias"] = sd[f"encoder.heightmap.convs.{i}.bias"]
    tree[f"{e}/hm_enc/h_l_conv_enc"], tree[f"{e}/hm_enc/h_w_conv_enc"] = (sd["encoder.heightmap.pos_h"],
                                                                          sd["encoder.heightmap.pos_w"])
    tree[f"{e}/temporal_enc"], tree[f"{e}/type_enc"] = sd["encoder.temporal_enc"], sd["encoder.type_enc"]
    for off, ours in (("fut_acts_embed", "action_embedding"), ("fut_cmds_embed", "command_embedding"),
                      ("reward_emb", "reward.embed"), ("value_emb", "value.embed")):
        linear(f"{off}/enc/output_layer", f"{ours}.proj")
        tree[f"{off}/pos_emb"] = sd[f"{ours}.pos"]
    for i in range(2):
        block(f"dynamics/layers/{i}", f"dynamics.decoder.layers.{i}", 8, True)
    for i in range(4):
        block(f"policy/layers/{i}", f"policy.decoder.layers.{i}", 8, True)
    for head in ("reward", "value"):
        block(f"{head}/layers/0", f"{head}.encoder.layers.0", 4, False)
        linear(f"{head}_dec/output_layer", f"{head}.decoder")
    linear("policy_dec/output_layer", "policy.out")
    for off, ours in (("proprio_obs", "obs__proprio"), ("extero_obs", "obs__extero"), ("actions", "actions"),
                      ("commands", "commands"), ("rewards", "rewards"), ("values", "values")):
        for part in ("mean", "std"):
            tree[f"scaler/scaler_params/{off}/{part}"] = sd[f"normalizer.{ours}_{part}"]
    tree["dynamics/layers/0/attention_1/rngs/default/count"] = np.zeros((), np.uint32)  # ignored RNG state
    return tree


def test_the_mapping_fills_every_parameter_of_the_go2_preset(official):
    tree = to_official(official)
    assert sum(v.size for k, v in tree.items() if not k.startswith(("scaler", "dynamics/layers/0/attention_1/rngs"))) \
        == 667_758
    config = config_from_official(official_config())
    target = WorldModel(config)
    state = state_dict_from_official(tree, config, target.state_dict(), "quadruped_world_model")
    target.load_state_dict(state, strict=True)
    for key, value in official.state_dict().items():
        torch.testing.assert_close(state[key], value, rtol=0, atol=0, msg=key)
    assert config.value_offset == 1


def test_the_mapping_refuses_naming_the_tensor(official):
    config = config_from_official(official_config())
    expected = WorldModel(config).state_dict()
    tree = to_official(official)
    missing = dict(tree)
    del missing["policy/layers/3/layernorm_2/scale"]
    with pytest.raises(InputError, match=r"policy\.decoder\.layers\.3\.norm2\.weight"):
        state_dict_from_official(missing, config, expected, "quadruped_world_model")
    wrong = dict(tree, **{"value_emb/pos_emb": np.zeros((24, 64), np.float32)})
    with pytest.raises(InputError, match=r"'value_emb/pos_emb' has shape \(24, 64\)"):
        state_dict_from_official(wrong, config, expected, "quadruped_world_model")
    extra = dict(tree, **{"encoder/new_thing/kernel": np.zeros((3, 3), np.float32)})
    with pytest.raises(InputError, match=r"'encoder/new_thing/kernel'"):
        state_dict_from_official(extra, config, expected, "quadruped_world_model")


@pytest.mark.parametrize("path, value", [("model.dynamics.attention.mask", None),
                                          ("model.encoder.action_layers", 1),
                                          ("model.encoder.extero_obs.height_cnn.kernel_size", 5),
                                          ("model.type", "other_world_model")])
def test_the_config_mapping_refuses_unsupported_settings_naming_the_key(path, value):
    cfg = official_config()
    node = cfg
    *parents, last = path.split(".")
    for p in parents:
        node = node[p]
    node[last] = value
    with pytest.raises(InputError, match=path.replace(".", r"\.")):
        config_from_official(cfg)


# ------------------------------------------------------------------------------------------ reading orbax
def write_official_checkpoint(tree: dict[str, np.ndarray], run: Path, step: int, config: dict) -> Path:
    """An orbax-layout checkpoint written with tensorstore: <run>/model_config.yaml, <run>/<step>/default/
    (_METADATA listing the tree, one zarr array per leaf in an OCDBT store)."""
    import tensorstore as ts
    import yaml

    item = run / str(step) / "default"
    item.mkdir(parents=True)
    (run / "model_config.yaml").write_text(yaml.safe_dump(config))
    base = {"driver": "ocdbt", "base": item.as_uri() + "/"}
    context = ts.Context()
    meta, writes = {}, []
    for path, value in tree.items():
        keys = path.split("/")
        arr = ts.open({"driver": "zarr", "kvstore": {**base, "path": ".".join(keys) + "/"}},
                      create=True, dtype=value.dtype.name, shape=value.shape, context=context).result()
        writes.append(arr.write(value))
        meta[str(tuple(keys))] = {"key_metadata": [{"key": k, "key_type": 2} for k in keys],
                                  "value_metadata": {"value_type": "jax.Array", "write_shape": list(value.shape)}}
    for w in writes:
        w.result()
    (item / "_METADATA").write_text(json.dumps({"tree_metadata": meta, "use_zarr3": False}))
    return run


def test_convert_command_reads_an_orbax_checkpoint(tmp_path, official, fixture):
    pytest.importorskip("tensorstore", reason="reading orbax checkpoints needs the optional extra simdist[official]")
    run = write_official_checkpoint(to_official(official), tmp_path / "run", 367004, official_config())
    out = tmp_path / "converted"
    assert main(["convert", "official", "--checkpoint", str(run), "--out", str(out), "--repo-id", ZOO_ID]) == 0
    converted = WorldModel.from_pretrained(out).eval()
    a, b = official_outputs(official, fixture), official_outputs(converted, fixture)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert json.loads((out / "planner.json").read_text())["num_samples"] == 450


def test_convert_command_refuses_bad_input_in_one_line(tmp_path, capsys):
    assert main(["convert", "official", "--checkpoint", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "--checkpoint" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ TorchScript experts
def _mlp(out: int) -> torch.nn.Sequential:
    return torch.nn.Sequential(torch.nn.Linear(7, 16), torch.nn.ELU(), torch.nn.Linear(16, out))


class _Actor(torch.nn.Module):
    """The shape of an rsl-rl TorchScript actor export: ``normalizer`` then the MLP ``actor``."""

    def __init__(self, normalizer: torch.nn.Module | None = None) -> None:
        super().__init__()
        self.normalizer = normalizer or torch.nn.Identity()
        self.actor = _mlp(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.actor(self.normalizer(x))


class _Critic(torch.nn.Module):
    """An rsl-rl TorchScript critic export: ``normalizer`` then the MLP ``net``."""

    def __init__(self) -> None:
        super().__init__()
        self.normalizer = torch.nn.Identity()
        self.net = _mlp(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(self.normalizer(x))


def test_torchscript_experts_become_an_expert_set(tmp_path):
    from simdist.experts import export_torchscript_set, load_expert_set

    torch.manual_seed(0)
    (tmp_path / "policies").mkdir()
    (tmp_path / "critics").mkdir()
    policies = {it: torch.jit.script(_Actor()) for it in (0, 50, 99)}
    for it, module in policies.items():
        module.save(str(tmp_path / "policies" / f"policy_{it}.pt"))
    critic = torch.jit.script(_Critic())
    critic.save(str(tmp_path / "critics" / "critic_99.pt"))
    assert main(["convert", "official-experts", "--checkpoint", str(tmp_path), "--out", str(tmp_path / "set"),
                 "--suboptimal"]) == 0
    loaded = load_expert_set(tmp_path / "set")
    obs = np.random.default_rng(0).normal(size=(5, 7)).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(loaded.expert({"privileged_official": obs}), policies[99](torch.from_numpy(obs)),
                                   atol=1e-6)
        np.testing.assert_allclose(loaded.critic({"privileged_official": obs}), critic(torch.from_numpy(obs))[:, 0],
                                   atol=1e-6)
    assert [p.iteration for p in loaded.suboptimal] == [0, 50]
    assert "Permission is hereby granted" in (tmp_path / "set" / "README.md").read_text()
    torch.jit.script(_Actor(torch.nn.LayerNorm(7))).save(str(tmp_path / "policy_7.pt"))
    with pytest.raises(ValueError, match="normaliser is LayerNorm"):
        export_torchscript_set([tmp_path / "policy_7.pt"], tmp_path / "critics" / "critic_99.pt", tmp_path / "x")
