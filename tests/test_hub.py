"""Hub I/O, all offline on the real huggingface_hub code paths (CONVENTIONS (d))."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import FakeHfApi, fill_stats, populate_cache, read_snapshot, tiny_config
from huggingface_hub import ModelCard, constants, scan_cache_dir
from huggingface_hub.hf_api import HfApi as RealHfApi
from safetensors.torch import load_file, save_file

import simdist
import simdist.hub as hub
import simdist.hub.folder
import simdist.hub.push
from simdist.hub import CheckpointError, CheckpointWarning
from simdist.model.base_card import base_licence
from simdist.model.world_model import WorldModel
from simdist.zoo.publish import push_folder

REPO = "simdist-test/tiny"


# ------------------------------------------------------------------------------------------ helpers
def assert_same_model(a: WorldModel, b: WorldModel) -> None:
    """Weights and buffers bit-equal (same dtypes), and equal outputs on the same inputs."""
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for key in sa:
        assert sa[key].dtype == sb[key].dtype, key
        assert torch.equal(sa[key].cpu(), sb[key].cpu()), key
    assert a.config.to_dict() == b.config.to_dict()
    cfg = a.config
    gen = torch.Generator().manual_seed(1)
    obs = {k: torch.randn(2, cfg.history + 1, *shape, generator=gen) for k, shape in cfg.obs_spec.items()}
    acts = torch.randn(2, cfg.history, cfg.action_dim, generator=gen)
    plan = torch.randn(2, 5, cfg.horizon, cfg.action_dim, generator=gen)
    cmd = torch.randn(2, cfg.command_dim, generator=gen) if cfg.command_dim else None
    a.eval()
    b.eval()
    with torch.no_grad():
        ia = a.imagine(a.encode(obs, acts), plan, cmd)
        ib = b.imagine(b.encode(obs, acts), plan, cmd)
    for field in ("latents", "rewards", "values"):
        assert torch.equal(getattr(ia, field), getattr(ib, field)), field


@pytest.fixture
def fake_hub(hf_cache: Path, monkeypatch: pytest.MonkeyPatch) -> type[FakeHfApi]:
    """A fresh :class:`FakeHfApi` subclass writing into ``hf_cache``, patched in where uploads are made."""
    fake = type("FakeHfApi", (FakeHfApi,), {"calls": []})
    monkeypatch.setattr(simdist.hub.push, "HfApi", fake)
    return fake


@pytest.fixture
def saved(tiny_world_model: WorldModel, tmp_path: Path) -> Path:
    return tiny_world_model.save_pretrained(tmp_path / "tiny")


@pytest.fixture(params=["HF_HUB_OFFLINE=1", "local_files_only"])
def offline_kwargs(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
) -> Iterator[dict[str, Any]]:
    """Both ways of staying off the network; for ``local_files_only`` offline mode is off and any Hub
    API call fails the test."""
    if request.param == "HF_HUB_OFFLINE=1":
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
        yield {}
    else:
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)

        def no_network(*args: Any, **kwargs: Any) -> None:
            raise AssertionError("local_files_only=True must not call the Hub")

        monkeypatch.setattr(RealHfApi, "repo_info", no_network)
        monkeypatch.setattr(RealHfApi, "list_repo_tree", no_network)
        yield {"local_files_only": True}


def tamper(folder: Path, edit: Any) -> None:
    path = folder / hub.WEIGHTS_NAME
    state = load_file(str(path))
    edit(state)
    save_file(state, str(path))


# ------------------------------------------------------------------------------------------ local folders
def test_local_round_trip(tiny_world_model: WorldModel, saved: Path) -> None:
    assert sorted(p.name for p in saved.iterdir()) == ["README.md", "config.json", "model.safetensors"]
    assert [p.name for p in saved.parent.iterdir()] == ["tiny"]  # no temp folders left behind
    text = (saved / "config.json").read_text()
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["simdist_version"] == simdist.__version__
    assert data["schema_version"] == 1 and data["encoder"] == {"name": "mlp", "kwargs": {"hidden": [32]}}
    assert "normalizer.obs__state_mean" in load_file(str(saved / "model.safetensors"))
    again = tiny_world_model.save_pretrained(saved.parent / "again")  # rebuilding gives the same bytes
    assert (again / "model.safetensors").read_bytes() == (saved / "model.safetensors").read_bytes()
    shutil.rmtree(again)

    for name in (saved, str(saved), f"local-dir:{saved}"):
        loaded = WorldModel.from_pretrained(name)
        assert not loaded.training
        assert bool(loaded.normalizer.fitted)
        assert loaded.normalizer.stats() == tiny_world_model.normalizer.stats()
        assert_same_model(tiny_world_model, loaded)


def test_obs_group_order_survives(tmp_path: Path) -> None:
    """Encoders concatenate groups in obs_spec order, so config.json must not reorder them."""
    torch.manual_seed(0)
    model = WorldModel(tiny_config(obs_spec={"zeta": [3], "alpha": [3]}))
    loaded = WorldModel.from_pretrained(model.save_pretrained(tmp_path / "m"))
    assert list(loaded.config.obs_spec) == ["zeta", "alpha"]
    assert_same_model(model, loaded)


def test_map_location(saved: Path) -> None:
    model = WorldModel.from_pretrained(saved, map_location="meta")
    assert {t.device.type for t in model.state_dict().values()} == {"meta"}


def test_optional_files(tiny_world_model: WorldModel, tmp_path: Path) -> None:
    folder = tiny_world_model.save_pretrained(
        tmp_path / "m", train_config={"trainer": {"max_steps": 10}, "model": {"lr": 1e-3}},
        extra_files={"planner.json": {"num_samples": 256, "horizon": 3}, "notes.txt": "opaque text\n"},
    )
    assert "max_steps: 10" in (folder / "train_config.yaml").read_text()
    assert (folder / "planner.json").read_text() == '{\n  "horizon": 3,\n  "num_samples": 256\n}\n'
    assert (folder / "notes.txt").read_text() == "opaque text\n"
    assert "planner.json" in (folder / "README.md").read_text()  # the card says how to use the settings
    with pytest.raises(ValueError, match="pass a Path"):
        tiny_world_model.save_pretrained(tmp_path / "n", train_config="train.yaml")
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['planner'\\]"):
        tiny_world_model.save_pretrained(tmp_path / "n", planner={"num_samples": 1})


def test_deprecated_save_arguments(tiny_world_model: WorldModel, tmp_path: Path) -> None:
    """``planner_config=`` / ``agent_type=`` (now the SimDist agent's business) still write the same folder, with a
    DeprecationWarning; so does ``simdist.hub.read_config``."""
    with pytest.warns(DeprecationWarning, match="extra_files"):
        old = tiny_world_model.save_pretrained(tmp_path / "old", planner_config={"num_samples": 8},
                                               agent_type="simdist")
    new = tiny_world_model.save_pretrained(tmp_path / "new", extra_files={"planner.json": {"num_samples": 8}})
    for name in ("config.json", "model.safetensors", "planner.json"):
        assert (old / name).read_bytes() == (new / name).read_bytes(), name
    with pytest.warns(DeprecationWarning, match="from_file"):
        assert hub.read_config(new / "config.json") == tiny_world_model.config


def test_hub_writes_config_dicts_and_state_dicts(tmp_path: Path) -> None:
    """The hub alone, with no model class: a config dict, a module's state dict and extra files in; the same dict
    and tensors out, and a config.json without the agent type unless the caller puts one in."""
    module = torch.nn.Linear(3, 2)
    folder = hub.write_folder(tmp_path / "plain", {"b": [2, 1], "a": {"z": 1, "y": 2}}, module,
                              {"extra.json": {"k": 1}, "skipped.txt": None})
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "extra.json", "model.safetensors"]
    from simdist.hub.load import open_folder, read_weights

    path, source, config = open_folder(folder)
    assert path == folder and config == {"a": {"z": 1, "y": 2}, "b": [2, 1], "simdist_version": simdist.__version__}
    assert list(config["a"]) == ["z", "y"]  # nested order kept
    state = read_weights(folder / "model.safetensors")
    assert all(torch.equal(state[k], v) for k, v in module.state_dict().items())


def test_save_replaces_atomically(tiny_world_model: WorldModel, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tiny_world_model.save_pretrained(tmp_path / "m")
    other = WorldModel(tiny_config())
    other.save_pretrained(target)  # a previous export is replaced
    assert_same_model(other, WorldModel.from_pretrained(target))

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(simdist.hub.folder, "save_file", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        tiny_world_model.save_pretrained(target)
    assert_same_model(other, WorldModel.from_pretrained(target))  # untouched by the failed save
    assert [p.name for p in tmp_path.iterdir()] == ["m"]

    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "todo.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="refusing"):
        tiny_world_model.save_pretrained(precious)
    assert (precious / "todo.txt").read_text() == "keep me"


def test_bad_names() -> None:
    with pytest.raises(ValueError, match="neither an existing folder nor a valid Hub repo id"):
        WorldModel.from_pretrained("not a/repo id")
    with pytest.raises(ValueError, match="from_preset"):
        WorldModel.from_pretrained("go2")
    with pytest.raises(FileNotFoundError, match="no such model folder"):
        WorldModel.from_pretrained("./runs/missing/export")
    with pytest.raises(FileNotFoundError, match="no such model folder"):
        WorldModel.from_pretrained("local-dir:/does/not/exist")
    with pytest.raises(ValueError, match="revision"):
        WorldModel.from_pretrained(f"hf-hub:{REPO}@v1", revision="v2")


def test_missing_file_in_folder(saved: Path) -> None:
    (saved / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match=r"model\.safetensors") as err:
        WorldModel.from_pretrained(saved)
    assert str(saved) in str(err.value)


# ------------------------------------------------------------------------------------------ corrupted weights
def test_missing_key_raises(saved: Path) -> None:
    tamper(saved, lambda s: s.pop("dynamics.net.0.weight"))
    with pytest.raises(CheckpointError, match="missing keys") as err:
        WorldModel.from_pretrained(saved)
    assert "dynamics: net.0.weight" in str(err.value)


def test_unexpected_key_raises(saved: Path) -> None:
    tamper(saved, lambda s: s.update({"reward.extra.bias": torch.zeros(3)}))
    with pytest.raises(CheckpointError, match="unexpected keys") as err:
        WorldModel.from_pretrained(saved)
    assert "reward: extra.bias" in str(err.value)


def test_shape_mismatch_raises(saved: Path) -> None:
    tamper(saved, lambda s: s.update({"value.net.0.bias": torch.zeros(7)}))
    with pytest.raises(CheckpointError, match=r"value\.net\.0\.bias: file \(7,\) vs model \(32,\)"):
        WorldModel.from_pretrained(saved)


@pytest.mark.parametrize("keep", [0, 20, -5])
def test_truncated_file_raises(saved: Path, keep: int) -> None:
    path = saved / "model.safetensors"
    path.write_bytes(path.read_bytes()[:keep])
    with pytest.raises(CheckpointError, match=r"model\.safetensors is corrupted or truncated"):
        WorldModel.from_pretrained(saved)


def test_non_finite_weight_raises(saved: Path) -> None:
    def poison(state: dict[str, torch.Tensor]) -> None:
        state["dynamics.net.0.weight"][0, 0] = float("nan")

    tamper(saved, poison)
    message = (f"model.safetensors of folder '{saved}': tensor 'dynamics.net.0.weight' holds 1 NaN / 0 Inf "
               "values")
    for strict in (True, False):
        with pytest.raises(CheckpointError) as err:
            WorldModel.from_pretrained(saved, strict=strict)
        assert str(err.value) == message


def test_non_finite_normalizer_stats_raise(saved: Path) -> None:
    def poison(state: dict[str, torch.Tensor]) -> None:
        state["normalizer.obs__state_std"][:2] = float("inf")
        state["normalizer.rewards_mean"].fill_(float("-inf"))
        state["value.net.0.bias"][:3] = float("nan")

    tamper(saved, poison)
    with pytest.raises(CheckpointError) as err:
        WorldModel.from_pretrained(saved)
    text = str(err.value)
    assert "tensor 'normalizer.obs__state_std' holds 0 NaN / 2 Inf values" in text
    assert "tensor 'normalizer.rewards_mean' holds 0 NaN / 1 Inf values" in text
    assert "tensor 'value.net.0.bias' holds 3 NaN / 0 Inf values" in text
    with pytest.raises(CheckpointError, match="normalizer.obs__state_std"):
        push_folder(saved, REPO, dry_run=True)  # nothing non-finite is published


def test_non_finite_check_skips_dropped_tensors(tiny_world_model: WorldModel, saved: Path) -> None:
    """With strict=False an unexpected (skipped) tensor may hold anything; what is loaded must be finite."""
    tamper(saved, lambda s: s.update({"reward.extra.bias": torch.full((3,), float("nan"))}))
    with pytest.warns(CheckpointWarning, match="reward: extra.bias"):
        model = WorldModel.from_pretrained(saved, strict=False)
    assert_same_model(tiny_world_model, model)


def test_non_strict_loads_matching_and_warns(tiny_world_model: WorldModel, saved: Path) -> None:
    tamper(saved, lambda s: (s.pop("dynamics.net.0.weight"), s.update({"value.net.0.bias": torch.zeros(7)})))
    with pytest.warns(CheckpointWarning, match="dynamics: net.0.weight"):
        model = WorldModel.from_pretrained(saved, strict=False)
    want = tiny_world_model.state_dict()
    for key, value in model.state_dict().items():
        if key not in ("dynamics.net.0.weight", "value.net.0.bias"):
            assert torch.equal(value, want[key]), key


def test_v0_config_loads(tiny_world_model: WorldModel, saved: Path) -> None:
    data = json.loads((saved / "config.json").read_text())
    data["schema_version"] = 0
    data["history_len"] = data.pop("history")
    data["components"] = {k: data.pop(k) for k in ("encoder", "dynamics", "reward_head", "value_head")}
    del data["policy_head"]
    (saved / "config.json").write_text(json.dumps(data))
    loaded = WorldModel.from_pretrained(saved)
    assert loaded.config.schema_version == 1 and loaded.config.history == 4
    assert_same_model(tiny_world_model, loaded)


def test_go2_preset_round_trip(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = WorldModel.from_preset("go2")
    fill_stats(model)
    loaded = WorldModel.from_pretrained(model.save_pretrained(tmp_path / "go2"))
    assert loaded.count_parameters()["total"] == model.count_parameters()["total"]
    assert_same_model(model, loaded)


# ------------------------------------------------------------------------------------------ HF cache
@pytest.mark.parametrize("how", ["main", "tag", "commit"])
def test_cache_resolution(tiny_world_model: WorldModel, saved: Path, hf_cache: Path,
                          offline_kwargs: dict[str, Any], how: str) -> None:
    commit = populate_cache(hf_cache, REPO, saved)
    populate_cache(hf_cache, REPO, saved, ref="v1.0")
    revision = {"main": None, "tag": "v1.0", "commit": commit}[how]
    loaded = WorldModel.from_pretrained(REPO, revision=revision, **offline_kwargs)
    assert_same_model(tiny_world_model, loaded)
    info = scan_cache_dir(hf_cache)
    assert not info.warnings and [r.repo_id for r in info.repos] == [REPO]


def test_explicit_cache_dir(tiny_world_model: WorldModel, saved: Path, tmp_path: Path) -> None:
    cache = tmp_path / "elsewhere"
    populate_cache(cache, REPO, saved)
    assert_same_model(tiny_world_model, WorldModel.from_pretrained(REPO, cache_dir=cache))


def test_hf_hub_prefix(tiny_world_model: WorldModel, saved: Path, hf_cache: Path,
                       offline_kwargs: dict[str, Any]) -> None:
    populate_cache(hf_cache, REPO, saved, ref="v1.0")
    assert_same_model(tiny_world_model, WorldModel.from_pretrained(f"hf-hub:{REPO}@v1.0", **offline_kwargs))
    with pytest.raises(FileNotFoundError):  # no refs/main
        WorldModel.from_pretrained(f"hf-hub:{REPO}", **offline_kwargs)


def test_missing_repo_raises(saved: Path, hf_cache: Path, offline_kwargs: dict[str, Any]) -> None:
    with pytest.raises(FileNotFoundError, match="simdist-test/does-not-exist"):
        WorldModel.from_pretrained("simdist-test/does-not-exist", **offline_kwargs)
    populate_cache(hf_cache, REPO, saved)
    with pytest.raises(FileNotFoundError, match="v9"):
        WorldModel.from_pretrained(REPO, revision="v9", **offline_kwargs)


def test_missing_file_in_snapshot(saved: Path, hf_cache: Path) -> None:
    (saved / "model.safetensors").unlink()
    populate_cache(hf_cache, REPO, saved)
    with pytest.raises(FileNotFoundError, match=rf"{REPO}.*has no model\.safetensors"):
        WorldModel.from_pretrained(REPO)


# ------------------------------------------------------------------------------------------ publishing
def test_push_to_hub_round_trip(tiny_world_model: WorldModel, fake_hub: Any, hf_cache: Path) -> None:
    url = tiny_world_model.push_to_hub(REPO, commit_message="first", metrics={"return": 1.5})
    commit = (hf_cache / "models--simdist-test--tiny" / "refs" / "main").read_text()
    assert url == f"https://huggingface.co/{REPO}/commit/{commit}"
    assert set(read_snapshot(hf_cache, REPO)) == {"README.md", "config.json", "model.safetensors"}
    methods = [name for name, _ in fake_hub.calls]
    assert methods == ["create_repo", "upload_folder"]  # one commit
    create, upload = (kw for _, kw in fake_hub.calls)
    assert create["exist_ok"] is True and create["private"] is None
    assert upload["commit_message"] == "first" and upload["revision"] is None

    loaded = WorldModel.from_pretrained(REPO)  # real snapshot_download, offline
    assert_same_model(tiny_world_model, loaded)
    card = read_snapshot(hf_cache, REPO)["README.md"].decode()
    assert f'from_pretrained("{REPO}")' in card and "| return | 1.5 |" in card


def test_push_to_branch_and_pr(tiny_world_model: WorldModel, fake_hub: Any) -> None:
    tiny_world_model.push_to_hub(REPO)
    other = WorldModel(tiny_config())
    other.push_to_hub(REPO, revision="schema-v1")
    assert ("create_branch", {"repo_id": REPO, "branch": "schema-v1", "exist_ok": True}) in fake_hub.calls
    assert_same_model(other, WorldModel.from_pretrained(REPO, revision="schema-v1"))
    assert_same_model(tiny_world_model, WorldModel.from_pretrained(REPO))
    pr_url = other.push_to_hub(REPO, create_pr=True)
    assert pr_url == f"https://huggingface.co/{REPO}/discussions/1"
    assert_same_model(tiny_world_model, WorldModel.from_pretrained(REPO))  # main unchanged


def test_push_folder(tiny_world_model: WorldModel, saved: Path, fake_hub: Any) -> None:
    (saved / "last.ckpt").write_bytes(b"resume state, not for the Hub")
    (saved / "train_config.yaml").write_text("trainer: {max_steps: 1}\n")
    files = push_folder(saved, REPO, dry_run=True)
    assert files == ["README.md", "config.json", "model.safetensors", "train_config.yaml"]
    assert fake_hub.calls == []  # a dry run contacts nothing

    push_folder(saved, REPO)
    assert set(read_snapshot(constants.HF_HUB_CACHE, REPO)) == set(files)
    assert_same_model(tiny_world_model, WorldModel.from_pretrained(REPO))

    tamper(saved, lambda s: s.pop("encoder.net.0.bias"))
    with pytest.raises(CheckpointError, match="encoder: net.0.bias"):
        push_folder(saved, REPO, dry_run=True)


# ------------------------------------------------------------------------------------------ model card
def test_model_card_metadata(tmp_path: Path) -> None:
    model = WorldModel(tiny_config(task="reach", robot="arm"))
    folder = model.save_pretrained(
        tmp_path / "ft", base_model=f"hf-hub:{REPO}@v1.0", tags=["finetuned"], metrics={"success": 0.9},
        model_card_kwargs={"datasets": "simdist-test/real-data"},
    )
    data = ModelCard.load(folder / "README.md").data.to_dict()
    assert data["library_name"] == "simdist"
    assert data["pipeline_tag"] == "robotics"
    assert data["license"] == "apache-2.0"
    assert data["base_model"] == REPO
    assert data["datasets"] == ["simdist-test/real-data"]
    for tag in ("simdist", "world-model", "model-based-rl", "robotics", "reach", "arm", "finetuned"):
        assert tag in data["tags"]
    body = (folder / "README.md").read_text()
    counts = model.count_parameters()
    assert f"| `dynamics` | `mlp` | `{{\"hidden\": [32]}}` | {counts['dynamics']:,} |" in body
    assert f"**{counts['total']:,}**" in body and "| success | 0.9 |" in body


def test_model_card_without_base_model(saved: Path) -> None:
    data = ModelCard.load(saved / "README.md").data.to_dict()
    assert "base_model" not in data and data["library_name"] == "simdist"
    with pytest.warns(UserWarning, match="not a Hub repo id"):
        folder = WorldModel(tiny_config()).save_pretrained(saved.parent / "x", base_model=str(saved))
    assert "base_model" not in ModelCard.load(folder / "README.md").data.to_dict()
    assert f"finetuned from the local model `{saved}`" in (folder / "README.md").read_text()


MIT_NOTICE = "The above copyright notice and this permission notice shall be included in all copies."
MIT_CARD = f"""---
license: mit
library_name: simdist
---

# base

Weights under the MIT licence.

### Licence (MIT) of the weights

```
MIT License
# not a heading inside the fence
{MIT_NOTICE}
```

Text after the notice.

## Architecture

Not part of the notice.
"""


def _card(folder: Path) -> tuple[dict[str, Any], str]:
    card = ModelCard.load(folder / "README.md")
    return card.data.to_dict(), card.text


def test_model_card_takes_the_base_licence(tmp_path: Path) -> None:
    """A base card read offline gives the derived card its license and its notice, verbatim; license= wins."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "README.md").write_text(MIT_CARD)
    with pytest.warns(UserWarning, match="not a Hub repo id"):
        derived = WorldModel(tiny_config()).save_pretrained(tmp_path / "ft", base_model=str(base))
        explicit = WorldModel(tiny_config()).save_pretrained(tmp_path / "ex", base_model=str(base),
                                                             model_card_kwargs={"license": "apache-2.0"})
        again = WorldModel(tiny_config()).save_pretrained(tmp_path / "ft2", base_model=str(derived))
    data, text = _card(derived)
    assert data["license"] == "mit"
    section = MIT_CARD[MIT_CARD.index("### Licence"):MIT_CARD.index("Text after")].strip()
    assert "## Licence of the base model's weights" in text and section in text
    assert "Text after" not in text and "Not part of the notice" not in text
    assert _card(explicit)[0]["license"] == "apache-2.0" and MIT_NOTICE in _card(explicit)[1]
    data, text = _card(again)  # a model finetuned from the derived one keeps the licence and the notice
    assert data["license"] == "mit" and MIT_NOTICE in text


def test_model_card_base_without_card_keeps_the_default(saved: Path, hf_cache: Path) -> None:
    (saved / "README.md").unlink()
    with pytest.warns(UserWarning, match="not a Hub repo id"):
        folder = WorldModel(tiny_config()).save_pretrained(saved.parent / "x", base_model=str(saved))
    data, text = _card(folder)
    assert data["license"] == "apache-2.0" and "Licence of the base model" not in text
    assert base_licence(REPO) is None  # not in the cache, not in the zoo


def test_base_licence_from_the_cache_and_the_zoo(tmp_path: Path, hf_cache: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "README.md").write_text(MIT_CARD)
    populate_cache(hf_cache, REPO, tmp_path / "m")
    cached = base_licence(REPO)
    assert cached is not None and cached.license == "mit" and MIT_NOTICE in cached.notice
    bundled = base_licence("simdist/go2-official")  # the zoo's bundled copy, offline
    assert bundled is not None and bundled.license == "mit"
    assert bundled.notice.startswith("### Licence (MIT)") and "Permission is hereby granted" in bundled.notice


# ------------------------------------------------------------------------------------------ package layout
def test_public_names_resolve_to_their_modules() -> None:
    """``from simdist.hub import X`` keeps working: each public name is the object its job module defines."""
    import importlib

    for name in hub.__all__:
        module = importlib.import_module(f"simdist.{hub._MODULE_OF[name]}")
        assert getattr(hub, name) is getattr(module, name), name
    assert set(hub.__all__) <= set(dir(hub))
    with pytest.raises(AttributeError, match="'simdist.hub' has no attribute 'nope'"):
        hub.nope  # noqa: B018


def test_hub_names_no_zoo_and_no_model_card() -> None:
    """The zoo's publisher and the model card are not hub names; their old spellings still work, with a warning."""
    from simdist.model.model_card import render_model_card

    assert "push_folder" not in hub.__all__ and "render_model_card" not in hub.__all__
    with pytest.warns(FutureWarning, match="import it from simdist.zoo.publish"):
        assert hub.push_folder is push_folder
    with pytest.warns(FutureWarning, match="import it from simdist.model.model_card"):
        assert hub.render_model_card is render_model_card
