"""The model zoo: index parsing, offline loading of bundled models and the ``simdist zoo`` CLI (no network)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import torch
from conftest import fill_stats, populate_cache, tiny_config
from huggingface_hub import constants

import simdist
from simdist import get, zoo
from simdist.cli import main as cli
from simdist.model.world_model import WorldModel
from simdist.registry import list_components

REPO = "simdist/tiny-test"
ENTRY = {"name": "tiny", "repo_id": REPO, "task": "tiny test task", "architecture": "tiny",
         "recipe": "recipes/toy/pretrain.yaml", "status": "available", "folder": "models/tiny"}


def write_index(root: Path, *entries: dict[str, Any], schema_version: int = 1) -> Path:
    path = root / zoo.INDEX_NAME
    path.write_text(json.dumps({"schema_version": schema_version, "models": list(entries)}))  # JSON is YAML
    return path


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Offline mode (any Hub request raises) and an empty HF cache under tmp_path; returns the cache."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # huggingface_hub read the variables at import
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture
def zoo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offline: Path) -> Path:
    """A zoo (``SIMDIST_ZOO``) bundling a tiny model as ``simdist/tiny-test`` in ``models/tiny``."""
    root = tmp_path / "zoo"
    root.mkdir()
    write_index(root, ENTRY, {**ENTRY, "name": "later", "repo_id": "simdist/later", "status": "planned",
                              "folder": "models/later", "base_model": REPO, "profile": "foam"})
    monkeypatch.setenv(zoo.ENV_VAR, str(root))
    return root


@pytest.fixture
def tiny(zoo_dir: Path) -> WorldModel:
    torch.manual_seed(0)
    model = WorldModel(tiny_config())
    fill_stats(model)
    model.save_pretrained(zoo_dir / "models" / "tiny", model_card_kwargs={"repo_id": REPO},
                          metrics={"success": 0.75})
    return model


def assert_same_weights(a: WorldModel, b: WorldModel) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb) and all(torch.equal(sa[k], sb[k]) for k in sa)


# ------------------------------------------------------------------------------------------ index
def test_index_and_bundled_folder(tiny: WorldModel, zoo_dir: Path) -> None:
    assert zoo.zoo_root() == zoo_dir
    entries = zoo.load_index()
    assert [e.name for e in entries] == ["tiny", "later"]
    assert zoo.find("tiny") == zoo.find(REPO) == entries[0]
    assert entries[1].base_model == REPO and entries[1].profile == "foam" and entries[1].finetune_recipe is None
    assert zoo.find("nope") is None
    assert zoo.bundled_folder(REPO) == zoo_dir / "models" / "tiny"
    assert zoo.bundled_folder("simdist/later") is None  # listed, folder missing: not bundled
    (zoo_dir / "models" / "tiny" / "model.safetensors").unlink()
    assert zoo.bundled_folder(REPO) is None


def test_missing_zoo_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(zoo.ENV_VAR, str(tmp_path / "nowhere"))
    assert zoo.zoo_root() is None and zoo.load_index() == [] and zoo.bundled_folder(REPO) is None
    monkeypatch.setenv(zoo.ENV_VAR, str(tmp_path))  # a folder without models.yaml
    assert zoo.load_index() == []


@pytest.mark.parametrize("entries, problem", [
    ([{k: v for k, v in ENTRY.items() if k != "recipe"}], r"models\[0\] \('tiny'\): missing key\(s\) recipe"),
    ([{**ENTRY, "status": "done"}], "unknown status 'done'"),
    ([{**ENTRY, "floder": "x"}], r"unknown key\(s\) floder"),
    ([ENTRY, {**ENTRY, "repo_id": "simdist/other"}], "duplicate name 'tiny'"),
    ([ENTRY, {**ENTRY, "name": "other"}], f"duplicate repo_id '{REPO}'"),
    ([{**ENTRY, "repo_id": "not a repo"}], "is not a Hub repo id"),
    ([{**ENTRY, "folder": "../elsewhere"}], "must be relative"),
    (["tiny"], "must be a mapping"),
])
def test_malformed_index(tmp_path: Path, entries: list[Any], problem: str) -> None:
    path = write_index(tmp_path, *entries)
    with pytest.raises(ValueError, match=problem) as err:
        zoo.load_index(tmp_path)
    assert str(path) in str(err.value)


def test_wrong_schema_version(tmp_path: Path) -> None:
    write_index(tmp_path, ENTRY, schema_version=2)
    with pytest.raises(ValueError, match="schema_version: 1"):
        zoo.load_index(tmp_path)


def test_real_index(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(zoo.ENV_VAR, raising=False)
    repo = Path(simdist.__file__).resolve().parents[1]
    assert zoo.zoo_root() == repo / "hub"
    entries = zoo.load_index()
    repo_ids = {e.repo_id for e in entries}
    assert {"go2-slope", "go2-foam", "go2-slope-ptfe", "go2-foam-adapted"} <= {e.name for e in entries}
    profiles = {p for task in list_components("task") for p in get("task", task).profiles()}
    for entry in entries:
        for recipe in filter(None, (entry.recipe, entry.finetune_recipe)):
            assert (repo / recipe).is_file(), (entry.name, recipe)
        assert entry.folder is not None
        assert entry.base_model is None or entry.base_model in repo_ids
        assert entry.profile is None or entry.profile in profiles, (entry.name, entry.profile)


def test_zoo_files_package_is_the_hub_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed data package ``simdist.zoo_files`` maps onto the top-level ``hub/`` folder."""
    monkeypatch.delenv(zoo.ENV_VAR, raising=False)
    repo = Path(simdist.__file__).resolve().parents[1]
    installed = zoo._installed_root()
    if installed is None:
        pytest.skip("simdist.zoo_files is not installed (an editable install older than the package): "
                    "reinstall with `pip install -e .`")
    assert installed.resolve() == (repo / "hub").resolve()


# ------------------------------------------------------------------------------------------ expert sets
def test_shipped_expert_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from simdist.experts import MANIFEST, load_expert_set

    monkeypatch.delenv(zoo.ENV_VAR, raising=False)
    assert zoo.EXPERT_MANIFEST == MANIFEST
    folder = zoo.expert_set("go2")
    assert folder == zoo.zoo_root() / "experts" / "go2" and "go2" in zoo.expert_sets()
    assert zoo.resolve_experts("go2") == folder
    experts = load_expert_set(zoo.resolve_experts("go2"))
    assert experts.expert.iteration == experts.manifest["expert"]["iteration"] and experts.suboptimal


def test_expert_sets_by_name_or_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "zoo"
    (root / "experts" / "arm").mkdir(parents=True)
    (root / "experts" / "arm" / "manifest.json").write_text("{}")
    (root / "experts" / "half-written").mkdir()  # no manifest: not a set
    monkeypatch.setenv(zoo.ENV_VAR, str(root))
    assert zoo.expert_sets() == {"arm": root / "experts" / "arm"}
    assert zoo.expert_set("arm") == zoo.resolve_experts("arm") == root / "experts" / "arm"
    with pytest.raises(FileNotFoundError, match=r"no expert set 'go2' in the zoo at .*\(bundled sets: arm\)"):
        zoo.expert_set("go2")
    own = tmp_path / "mine"
    own.mkdir()
    assert zoo.resolve_experts(own) == own and zoo.resolve_experts(str(own)) == own
    monkeypatch.chdir(tmp_path)
    assert zoo.resolve_experts("mine") == Path("mine")  # an existing folder wins over a name
    for missing in ("./nowhere", "runs/ppo/export", tmp_path / "nowhere"):
        with pytest.raises(FileNotFoundError, match=r"no expert set folder .*usable by name: arm"):
            zoo.resolve_experts(missing)
    monkeypatch.setenv(zoo.ENV_VAR, str(tmp_path / "no-zoo"))
    assert zoo.expert_sets() == {}
    with pytest.raises(FileNotFoundError, match="bundled sets: none"):
        zoo.resolve_experts("arm")


# ------------------------------------------------------------------------------------------ offline loading
def test_from_pretrained_falls_back_to_bundled(tiny: WorldModel, offline: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="simdist.hub"):
        loaded = WorldModel.from_pretrained(REPO)
    assert_same_weights(tiny, loaded)
    assert "bundled copy of simdist/tiny-test" in caplog.text
    assert_same_weights(tiny, WorldModel.from_pretrained(f"hf-hub:{REPO}@main", local_files_only=True))


def test_hf_cache_wins_over_bundled(tiny: WorldModel, offline: Path) -> None:
    other = WorldModel(tiny_config())
    populate_cache(offline, REPO, other.save_pretrained(offline.parent / "cached"))
    assert_same_weights(other, WorldModel.from_pretrained(REPO))


def test_no_fallback_without_bundled_copy(tiny: WorldModel, zoo_dir: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"simdist/not-in-zoo.*hf download"):
        WorldModel.from_pretrained("simdist/not-in-zoo")
    with pytest.raises(FileNotFoundError, match="simdist/later"):  # listed but not bundled
        WorldModel.from_pretrained("simdist/later")
    with pytest.raises(FileNotFoundError, match="v1"):  # a pinned revision is never replaced
        WorldModel.from_pretrained(REPO, revision="v1")


def test_malformed_index_keeps_download_error(tiny: WorldModel, zoo_dir: Path) -> None:
    write_index(zoo_dir, ENTRY, ENTRY)
    with pytest.raises(FileNotFoundError, match="hf download simdist/tiny-test"):
        WorldModel.from_pretrained(REPO)


# ------------------------------------------------------------------------------------------ CLI
def test_cli_list(tiny: WorldModel, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["zoo", "list", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["tiny"]["bundled"] is True and rows["tiny"]["repo_id"] == REPO
    assert rows["tiny"]["parameters"] == tiny.count_parameters()["total"]
    assert rows["tiny"]["size_mb"] > 0
    assert rows["later"]["bundled"] is False and rows["later"]["parameters"] is None
    assert rows["later"]["base_model"] == REPO

    assert cli(["zoo", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["name", "type", "repo", "id"]
    assert lines[1].split()[:5] == ["tiny", "simdist", REPO, "available", "yes"]
    assert f"{tiny.count_parameters()['total']:,}" in lines[1]


def test_cli_show(tiny: WorldModel, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["zoo", "show", REPO]) == 0
    out = capsys.readouterr().out
    assert "name:            tiny" in out and "## Evaluation" in out and "| success | 0.75 |" in out
    assert "## Usage" not in out
    with pytest.raises(SystemExit):
        cli(["zoo", "show", "nope"])
    assert "not in the zoo (models: tiny, later)" in capsys.readouterr().err


def test_cli_publish_dry_run(tiny: WorldModel, zoo_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["zoo", "publish", "tiny"]) == 0
    out = capsys.readouterr().out
    assert f"https://huggingface.co/{REPO}" in out and "--push" in out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert listed == ["README.md", "config.json", "model.safetensors"]
    assert cli(["zoo", "publish", "tiny", "--repo-id", "someone/tiny"]) == 0
    assert "https://huggingface.co/someone/tiny" in capsys.readouterr().out

    with pytest.raises(SystemExit):
        cli(["zoo", "publish", "later"])
    err = capsys.readouterr().err
    assert "later is not bundled" in err and "simdist fit --config recipes/toy/pretrain.yaml" in err
    assert str(zoo_dir / "models" / "later") in err


@pytest.mark.parametrize("repo_id", ["simdist/go2-slope", "simdist/go2-foam"])
def test_shipped_go2_models_load_offline(offline: Path, monkeypatch: pytest.MonkeyPatch, repo_id: str) -> None:
    """The zoo's Go2 task models load by Hub id on an offline machine with an empty HF cache."""
    monkeypatch.delenv("SIMDIST_ZOO", raising=False)
    model = WorldModel.from_pretrained(repo_id)
    assert model.count_parameters()["total"] == 667_758
    assert bool(model.normalizer.fitted)
    card = (zoo.bundled_folder(repo_id) / "README.md").read_text()
    assert "library_name: simdist" in card and "simdist fit --config recipes/go2-slope/pretrain.yaml" in card


def test_adapted_models_plan_as_their_base(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundled adapted SimDist model acts with its base's planner.json (the planner its adaptation run acted
    with), not the default MPPI."""
    from simdist import load_agent

    monkeypatch.delenv(zoo.ENV_VAR, raising=False)
    entries = zoo.load_index()
    adapted = [e for e in entries if e.base_model and e.status == "available"]
    assert adapted
    for entry in adapted:
        base = next(e for e in entries if e.repo_id == entry.base_model)
        own, theirs = (load_agent(zoo.bundled_folder(e.repo_id)).config.to_planner_dict() for e in (entry, base))
        assert own == theirs, entry.name


BUNDLED = sorted(p for p in (Path(__file__).resolve().parents[1] / "hub" / "models").iterdir()
                 if (p / "config.json").is_file())


@pytest.mark.parametrize("folder", BUNDLED, ids=lambda p: p.name)
def test_bundled_models_save_byte_identical(folder: Path, tmp_path: Path) -> None:
    """Each bundled zoo model, loaded as its agent (the SimDist agent: world model and planner.json) and as a world
    model, saves the same config.json, model.safetensors and planner.json bytes it was published with."""
    from simdist import load_agent

    agent = load_agent(folder).save_pretrained(tmp_path / "agent")
    model = WorldModel.from_pretrained(folder).save_pretrained(tmp_path / "model")
    names = [n for n in ("config.json", "model.safetensors", "planner.json") if (folder / n).is_file()]
    for name in names:
        assert (agent / name).read_bytes() == (folder / name).read_bytes(), name
    for name in ("config.json", "model.safetensors"):
        assert (model / name).read_bytes() == (folder / name).read_bytes(), name


@pytest.mark.parametrize("name", ["ur5e-peg", "ur5e-table-leg"])
def test_shipped_ur5e_models_plan_near_their_policy_offline(offline: Path, monkeypatch: pytest.MonkeyPatch,
                                                            name: str) -> None:
    """simdist/ur5e-peg and simdist/ur5e-table-leg load by Hub id offline and act with their planner.json (MPPI
    ranking with the policy as its prior, docs/ur5e-simdist.md 7.9): on the first ticks of real UR5e physics their
    arm actions stay near the head's, where the paper's MPPI on the same model moves far from them."""
    from simdist import build_controller, make_task

    monkeypatch.delenv("SIMDIST_ZOO", raising=False)
    task = make_task(name, profile="sim")
    policy = build_controller(f"simdist/{name}", planner="policy", task=task)
    gaps = {}
    for label, preset in (("prior", None), ("paper", "manipulation")):
        agent = build_controller(f"simdist/{name}", task=task, preset=preset, seed=0)
        env = task.evaluation_env(2, 0)
        hist = agent.new_history(2)
        obs = env.reset(seed=0)
        hist.reset(obs, command=hist.command_of(obs))
        gap = []
        for _ in range(3):
            a, p = agent.act(hist), policy.act(hist)
            gap.append(float((a[:, :6] - p[:, :6]).abs().mean()))
            step = env.step(a.numpy())
            hist.push(step.obs, a, command=hist.command_of(step.obs))
        env.close()
        gaps[label] = sum(gap) / len(gap)
    assert gaps["prior"] < 0.1 < gaps["paper"], gaps
