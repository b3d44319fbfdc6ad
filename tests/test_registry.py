"""Registry: register/create/list, duplicate and unknown names, entry-point plugins."""

from __future__ import annotations

import sys
import textwrap

import pytest

import simdist
from simdist import registry


def test_builtin_kinds_and_names() -> None:
    table = simdist.list_components()
    for kind in ("encoder", "dynamics", "reward_head", "value_head", "policy_head", "planner", "freeze_policy"):
        assert kind in table
    assert {"mlp", "heightmap_cnn", "quadruped", "timm_image"} <= set(table["encoder"])
    assert {"transformer", "mlp"} <= set(table["dynamics"])
    assert {"transformer", "mlp"} <= set(table["reward_head"]) & set(table["value_head"])
    assert "transformer" in table["policy_head"]
    assert {"all", "dynamics_only"} <= set(table["freeze_policy"])
    assert simdist.list_components("dynamics", "trans*") == ["transformer"]


def test_create_passes_kwargs() -> None:
    dyn = simdist.create("dynamics", "mlp", latent_dim=8, action_dim=3, hidden=[16])
    assert sum(p.numel() for p in dyn.parameters()) == (11 * 16 + 16) + (16 * 8 + 8)


def test_duplicate_name_raises() -> None:
    @simdist.register("encoder", "test-dup-encoder")
    class A:  # noqa: B903
        pass

    with pytest.raises(registry.RegistryError, match="already registered"):
        @simdist.register("encoder", "test-dup-encoder")
        class B:
            pass


def test_unknown_name_lists_known() -> None:
    with pytest.raises(registry.RegistryError, match="known dynamics names: .*transformer"):
        simdist.create("dynamics", "no-such-dynamics")
    with pytest.raises(registry.RegistryError, match="unknown component kind"):
        simdist.register("gizmo", "x")


def test_entry_point_plugin(tmp_path, monkeypatch) -> None:
    """An installed distribution declaring group ``simdist.components`` adds components on a miss."""
    pkg = tmp_path / "simdist_demo_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from torch import nn
        import simdist

        @simdist.register("reward_head", "demo-plugin-head")
        class DemoHead(nn.Module):
            def __init__(self, latent_dim: int):
                super().__init__()
                self.linear = nn.Linear(latent_dim, 1)
    """))
    dist = tmp_path / "simdist_demo_plugin-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: simdist-demo-plugin\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[simdist.components]\ndemo = simdist_demo_plugin\n")
    (dist / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    head = simdist.create("reward_head", "demo-plugin-head", latent_dim=5)
    assert head.linear.in_features == 5
    assert "demo-plugin-head" in simdist.list_components("reward_head")
    sys.modules.pop("simdist_demo_plugin", None)
    registry._REGISTRY["reward_head"].pop("demo-plugin-head", None)


def test_import_is_lazy() -> None:
    import subprocess

    code = "import sys, simdist; print('torch' in sys.modules, 'lightning' in sys.modules, 'mujoco' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]


def test_model_lookups_do_not_import_mujoco() -> None:
    """Building a world model and a planner imports only what those kinds need (no MuJoCo, no envs)."""
    import subprocess
    import sys

    code = ("import sys, simdist\n"
            "wm = simdist.WorldModel.from_preset('toy')\n"
            "simdist.create('planner', 'mppi', world_model=wm)\n"
            "assert 'mujoco' not in sys.modules and 'simdist.envs' not in sys.modules, 'imported the envs'\n"
            "assert 'toy-reach' in simdist.registry.list_components('env')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_agent_type_is_the_registered_name() -> None:
    """``agent_type`` (what config.json records) is read from the registration, so the two cannot disagree; an
    unregistered subclass saves as the registered agent it derives from."""
    from simdist import Agent, list_components
    from simdist.registry import get

    for name in list_components("agent"):
        assert get("agent", name).agent_type == name
    simdist_agent = get("agent", "simdist")

    class Unregistered(simdist_agent):  # type: ignore[misc, valid-type]
        pass

    assert Unregistered.agent_type == "simdist" and Agent.agent_type == ""
