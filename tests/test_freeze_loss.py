"""Freeze policies and the SimDist loss."""

from __future__ import annotations

import pytest
import torch

from simdist import FreezePolicy, WorldModel, WorldModelLoss
from simdist.model.freeze import FreezePolicyError
from simdist.training import FinetuneModule
from tests.helpers import random_batch, tiny_config


def trainable(wm: WorldModel) -> int:
    return sum(p.numel() for p in wm.parameters() if p.requires_grad)


def test_go2_dynamics_only_leaves_exactly_the_dynamics() -> None:
    wm = WorldModel.from_preset("go2")
    FreezePolicy.parse("dynamics_only").apply(wm)
    assert trainable(wm) == 133_504
    FreezePolicy.parse("all").apply(wm)
    assert trainable(wm) == 667_758


@pytest.mark.parametrize(("spec", "expected"), [
    ("dynamics,value", {"dynamics", "value"}),
    (["dynamics", "encoder"], {"dynamics", "encoder"}),
    ("heads_only", {"reward", "value", "policy"}),
    ("score_heads", {"reward", "value"}),
])
def test_named_sets(spec, expected) -> None:
    wm = WorldModel.from_preset("go2")
    trains = FreezePolicy.parse(spec).apply(wm)
    assert {k for k, v in trains.items() if v} == expected
    counts = wm.count_parameters(trainable_only=True)
    assert counts["total"] == sum(counts[k] for k in expected)


def test_unknown_component_raises() -> None:
    with pytest.raises(KeyError, match="unknown components"):
        FreezePolicy({"dynamcis"}).apply(WorldModel(tiny_config()))


@pytest.mark.parametrize(("spec", "message"), [
    ("dynamics,dynamcis", "'dynamcis' is not a component"),
    (["value", "wings"], "'wings' is not a component"),
    (" , ", "it trains nothing"),
    ([], "it trains nothing"),
])
def test_parse_refuses_what_names_no_component(spec, message) -> None:
    """Text and name lists are checked where they come in, before a model is built."""
    with pytest.raises(FreezePolicyError, match=message):
        FreezePolicy.parse(spec)


def test_frozen_components_stay_in_eval_mode() -> None:
    wm = WorldModel(tiny_config())
    policy = FreezePolicy.parse("dynamics_only")
    policy.apply(wm)
    policy.set_modes(wm, training=True)
    assert wm.dynamics.training
    assert not any(m.training for name, c in wm.components.items() if name != "dynamics" for m in c.modules())


def test_finetune_step_changes_only_dynamics_bit_for_bit() -> None:
    cfg = tiny_config()
    wm = WorldModel(cfg)
    policy = FreezePolicy.parse("dynamics_only")
    policy.apply(wm)
    policy.set_modes(wm, training=True)
    before = {k: v.clone() for k, v in wm.state_dict().items()}
    opt = torch.optim.Adam([p for p in wm.parameters() if p.requires_grad], lr=1e-2)
    for seed in range(3):
        loss = WorldModelLoss.dynamics_only()(wm, random_batch(cfg, seed=seed))["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = wm.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.startswith("dynamics.") for k in changed)
    assert all(torch.equal(before[k], after[k]) for k in before if not k.startswith("dynamics."))


def test_loss_terms_and_expert_prefix_mask() -> None:
    cfg = tiny_config()
    wm = WorldModel(cfg).eval()  # no attention dropout, so two passes agree
    batch = random_batch(cfg)
    terms = WorldModelLoss()(wm, batch)
    assert set(terms) == {"dynamics", "reward", "value", "action", "loss"}
    expected = terms["dynamics"] + terms["reward"] + terms["value"] + 4 * terms["action"]
    torch.testing.assert_close(terms["loss"], expected)
    # Only the leading run of expert steps is cloned: flags [1, 0, 1] keep step 0 alone.
    batch["expert"] = torch.tensor([[1.0, 0.0, 1.0]] * 3)
    pred = wm.predict(batch)
    target = wm.normalizer.normalize("actions", batch["fut_acts"])
    manual = (pred.actions[:, :1] - target[:, :1]).pow(2).sum() / pred.actions.numel()
    torch.testing.assert_close(WorldModelLoss()(wm, batch)["action"], manual)
    batch["expert"] = torch.zeros(3, 3)
    assert WorldModelLoss()(wm, batch)["action"] == 0


def test_decision_aware_term_by_hand_reaches_only_the_dynamics_and_trains_down() -> None:
    """L_dec is the frozen heads on the predicted latents against the same heads on the encoded true ones
    (stop-gradient); under dynamics-only finetuning its gradient reaches the dynamics alone, through the
    heads, and a few steps on it lower it."""
    cfg = tiny_config()
    wm = WorldModel(cfg)
    policy = FreezePolicy.parse("dynamics_only")
    policy.apply(wm)
    wm.eval()  # no dropout, so the passes below agree
    batch = random_batch(cfg, seed=1)
    loss = WorldModelLoss(dynamics=1.0, reward=0, value=0, action=0, decision=0.5)
    terms = loss(wm, batch)
    assert set(terms) == {"dynamics", "decision", "loss"}
    pred = wm.predict(batch)
    true_r, true_v = wm.heads_on_latents(batch, wm.consistency_targets(batch))
    manual = (pred.rewards - true_r).pow(2).mean() + (pred.values - true_v).pow(2).mean()
    torch.testing.assert_close(terms["decision"], manual)
    torch.testing.assert_close(terms["loss"], terms["dynamics"] + 0.5 * terms["decision"])
    policy.set_modes(wm, training=True)
    before = {k: v.clone() for k, v in wm.state_dict().items()}
    opt = torch.optim.Adam([p for p in wm.parameters() if p.requires_grad], lr=3e-3)
    only = WorldModelLoss(dynamics=0.0, reward=0, value=0, action=0, decision=1.0)
    first = only(wm, batch)["decision"].item()
    for _ in range(20):
        out = only(wm, batch)
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
    assert only(wm, batch)["decision"].item() < 0.5 * first
    changed = {k for k, v in wm.state_dict().items() if not torch.equal(before[k], v)}
    assert changed and all(k.startswith("dynamics.") for k in changed)


def test_consistency_targets_are_stop_gradient() -> None:
    cfg = tiny_config()
    wm = WorldModel(cfg)
    loss = WorldModelLoss(1, 0, 0, 0)(wm, random_batch(cfg))
    loss["loss"].backward()
    assert set(loss) == {"dynamics", "loss"}  # zero-weight heads are not even evaluated
    # the encoder gets gradient only through the predicted side (its context), never via the targets
    targets = wm.target_latents(random_batch(cfg)["fut_obs"])
    assert not targets.requires_grad


def test_td_value_targets_by_hand() -> None:
    """Real data has rewards but no value labels: the value-unfreezing ablation bootstraps from them."""
    cfg = tiny_config()
    wm = WorldModel(cfg).eval()
    batch = random_batch(cfg)
    loss = WorldModelLoss(0, 0, 1, 0, value_target="td", gamma=0.5)
    pred = wm.predict(batch)
    norm = wm.normalizer
    v = norm.denormalize("values", pred.values.unsqueeze(-1)).squeeze(-1)  # (B, 3) in env units
    r = batch["rewards"]
    y1 = r[:, 2] + 0.5 * v[:, 2]
    y0 = r[:, 1] + 0.5 * y1
    expected = norm.normalize("values", torch.stack([y0, y1], -1).unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(loss.td_targets(norm, r, pred.values), expected)
    terms = loss(wm, batch)
    torch.testing.assert_close(terms["value"], (pred.values[:, :2] - expected).pow(2).mean())
    batch["values"] = batch["values"] + 100.0  # labels are not read
    torch.testing.assert_close(loss(wm, batch)["value"], terms["value"])
    with pytest.raises(ValueError, match="value_target"):
        WorldModelLoss(value_target="mc")


# ------------------------------------------------------------------------------------------ policies as objects
def test_presets_register_like_other_components() -> None:
    """The presets are ``freeze_policy`` components of the plug-in package, found by name like an encoder; each
    reads back from its own text (``spec``), and so does a set of components."""
    from simdist import get, list_components

    names = list(list_components("freeze_policy"))
    assert {"all", "dynamics_only", "heads_only", "score_heads"} <= set(names)
    for name in names:
        cls = get("freeze_policy", name)
        assert cls.__module__ == "simdist.components.freeze_policies" and issubclass(cls, FreezePolicy)
        assert FreezePolicy.parse(name).spec == name
    for text, trainable in (("dynamics,encoder", {"dynamics", "encoder"}), ("value, dynamics", {"dynamics", "value"}),
                            ("policy", {"policy"})):
        policy = FreezePolicy.parse(text)
        assert policy.trainable == trainable and FreezePolicy.parse(policy.spec).trainable == trainable
    policy = FreezePolicy.parse("dynamics_only")
    assert FreezePolicy.parse(policy) is policy  # an object passes through: nothing is parsed twice
    with pytest.raises(ValueError, match="freeze='everything' is not a freeze policy: unknown freeze_policy"):
        FreezePolicy.parse("everything")
    with pytest.raises(ValueError, match="freeze=3 is not a freeze policy"):
        FreezePolicy.parse(3)  # type: ignore[arg-type]


def test_eval_frozen_copy_leaves_a_shared_policy_alone() -> None:
    shared = FreezePolicy.parse("dynamics_only")
    module = FinetuneModule(model=tiny_config().to_dict(), freeze=shared, eval_frozen=False)
    assert module.freeze_policy is not shared and not module.freeze_policy.eval_frozen
    assert shared.eval_frozen  # the run's policy, which other stages share, is unchanged
    assert FinetuneModule(model=tiny_config().to_dict(), freeze=shared).freeze_policy is shared


def test_finetuning_defaults_live_in_one_place() -> None:
    """``AdaptConfig``, the SimDist agent's ``finetune`` and ``FinetuneModule`` take their defaults from
    ``FinetuneConfig`` (the module: its official long schedule)."""
    import inspect

    from simdist import AdaptConfig, FinetuneConfig, get

    ft, official = FinetuneConfig(), FinetuneConfig.official()
    adapt = AdaptConfig()
    assert adapt.finetune == ft and adapt.freeze == ft.freeze
    assert adapt.finetuning == FinetuneConfig(freeze=adapt.freeze_policy)
    assert adapt.freeze_policy.spec == "dynamics_only"
    params = inspect.signature(get("agent", "simdist").finetune).parameters
    assert {k: params[k].default for k in (*ft.budget(), "freeze")} == {**ft.budget(), "freeze": ft.freeze}
    params = inspect.signature(FinetuneModule.__init__).parameters
    assert {k: params[k].default for k in ("freeze", "lr", "end_lr", "warmup_steps", "decay_steps", "value_target")} \
        == {"freeze": official.freeze, "lr": official.lr, "end_lr": official.final_lr,
            "warmup_steps": official.warmup_steps, "decay_steps": official.schedule_steps,
            "value_target": official.value_target}
    assert (official.final_lr, official.warmup_steps, official.schedule_steps) == (1e-4, 2_000, 400_000)
    assert (ft.final_lr, ft.schedule_steps) == (1e-4, 2_000)  # an adaptation stage: lr / 2 over max(10 w, 2000)
    assert FinetuneConfig(lr=1e-3, warmup_steps=300).schedule_steps == 3_000
    for bad in ({"epochs": 0}, {"lr": -1.0}, {"warmup_steps": 1.5}, {"value_target": "mc"}):
        with pytest.raises(ValueError, match=f"key '{next(iter(bad))}'"):
            FinetuneConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="freeze='everything'"):
        AdaptConfig(freeze="everything")  # refused where the text comes in, before any run
