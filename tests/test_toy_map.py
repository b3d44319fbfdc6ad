"""The toy map (results/toy/map): its grid's profiles load through the toy's profile schema, the demo's
``--pretrain-only`` stops after pretraining, and a cell's summary compares returns by their intervals."""

from __future__ import annotations

import json

import pytest

from results.toy.map.grid import CELLS, cell_named
from results.toy.map.run import profile_yaml
from results.toy.map.summary import versus
from simdist.components.tasks.toy_reach.demo import TEST, run_toy_pipeline
from simdist.components.tasks.toy_reach.profiles import load_profile


def test_every_cell_is_a_valid_toy_profile_and_the_grid_spans_the_issue(tmp_path) -> None:
    names = [c.name for c in CELLS]
    assert len(names) == len(set(names)) >= 24
    for cell in CELLS:
        path = tmp_path / f"{cell.name}.yaml"
        path.write_text(profile_yaml(cell))
        profile = load_profile(str(path))
        assert (profile.latency, profile.gain, profile.mass_scale, profile.friction, profile.tilt) == \
            (cell.latency, cell.gain, cell.mass_scale, cell.friction, cell.tilt)
    assert {c.latency for c in CELLS} == {0, 1, 2, 4}
    assert {c.gain for c in CELLS} == {0.5, 0.7, 1.0, 2.0, 4.0}
    assert {c.mass_scale for c in CELLS} == {None, 2.0, 3.0}
    assert {c.tilt for c in CELLS} == {0.0, 0.05, -0.05}
    assert len({c.friction for c in CELLS}) == 2
    lag = cell_named("lag")
    assert CELLS[0] is lag and load_profile("lag").latency == lag.latency and load_profile("lag").gain == lag.gain
    with pytest.raises(KeyError, match="no cell 'L9'"):
        cell_named("L9")


def test_versus_needs_the_intervals_apart() -> None:
    a = {"mean": 1.0, "low": 0.5, "high": 1.5}
    assert versus(a, {"mean": 2.0, "low": 1.6, "high": 2.4}) == "higher"
    assert versus(a, {"mean": 2.0, "low": 1.4, "high": 2.4}) == "no difference"
    assert versus(a, {"mean": 0.0, "low": -0.4, "high": 0.4}) == "lower"


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_pretrain_only_stops_after_the_model_and_is_refused_with_pretrained(tmp_path, capsys) -> None:
    from simdist.cli import main

    r = run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, pretrain_only=True)
    assert (tmp_path / "a" / "toy-sim" / "config.json").is_file()
    assert r["pretrained"] == str(tmp_path / "a" / "toy-sim")
    assert not (tmp_path / "a" / "results.json").exists() and not (tmp_path / "a" / "real-data").exists()
    assert json.loads((tmp_path / "a" / "timing.json").read_text())["pretrain_cpu_seconds"] > 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--task", "toy-reach", "--pretrain-only", "--pretrained", str(tmp_path / "a" / "toy-sim"),
              "--out", str(tmp_path / "b")])
    assert exit_.value.code == 2 and "--pretrain-only" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_reach_is_each_shadows_distance_from_the_driver_over_the_drivers_scale() -> None:
    import numpy as np

    from results.toy.map.mechanism import reach

    a = np.ones((5, 2))
    gaps = reach({"driver": a, "same": a.copy(), "other": -a})
    assert gaps["same"] == 0.0 and gaps["other"] == pytest.approx(2.0) and gaps["driver_rms"] == 1.0


def _row(cell: str, seed: int, zs: float, ad: float, ex: float) -> dict:
    from results.toy.map.summary import versus

    def e(m: float) -> dict:
        return {"mean": m, "low": m - 0.5, "high": m + 0.5, "n": 32}

    ret = {"sim": e(15.0), "zero_shot": e(zs), "adapted": e(ad), "expert": e(ex)}
    beats = versus(ret["zero_shot"], ret["expert"]) == "higher"
    return {"cell": cell, "seed": seed, "factors": {"latency": 4}, "returns": ret, "best_expert": "expert",
            "expert_beats_zero_shot": beats, "adapted_vs_zero_shot": versus(ret["zero_shot"], ret["adapted"]),
            "gap_closed": (ad - zs) / (ex - zs) if beats else None,
            "heldout_consistency": {"pretrained": 2.0, "adapted": 0.1},
            "ranking": {k: {"spearman": e(0.0)} for k in ("zero_shot", "adapted")}}


def test_the_table_counts_the_targets_on_the_cells_where_the_expert_leads() -> None:
    from results.toy.map.table import targets

    rows = [_row("lag", 0, 8.0, 14.0, 16.0), _row("lag", 1, 11.0, 11.2, 16.0), _row("nominal", 0, 15.0, 15.0, 15.2)]
    text = "\n".join(targets(rows))
    assert "best expert beats zero-shot with the intervals apart: 2;" in text
    assert "on 1 of them (50%" in text
    assert "median gap closed on those cells: 39%" in text  # median of 75 % and 4 %
    assert "1 profiles on both seeds" in text


def test_the_levers_refuse_bad_names_and_run_each_lever_on_the_map_cells_model(tmp_path, capsys) -> None:
    """``python -m results.toy.map levers``: an unknown lever or cell, or a map folder without its pretrained model,
    is refused in one line; a dry run names, per lever and cell, the map's model (or the lever's own pretraining)
    and the lever's options."""
    from results.toy.map.__main__ import main

    out = tmp_path / "map"
    assert main(["levers", "--levers", "value,wings", "--out", str(out)]) == 2
    assert "--levers: 'wings' is not a lever" in capsys.readouterr().err
    assert main(["levers", "--cells", "L9", "--out", str(out)]) == 2
    assert "--cells: no cell 'L9'" in capsys.readouterr().err
    assert main(["levers", "--levers", "value", "--cells", "lag", "--out", str(out)]) == 2
    assert "no pretrained map model for seed 0" in capsys.readouterr().err
    (out / "pretrain-s0" / "toy-sim").mkdir(parents=True)
    (out / "pretrain-s0" / "toy-sim" / "config.json").write_text("{}")
    assert main(["levers", "--levers", "value,horizon16", "--cells", "lag", "--out", str(out), "--dry"]) == 0
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("+")]
    assert any("--pretrained " + str(out / "pretrain-s0" / "toy-sim") in line and "--freeze dynamics,value" in line
               for line in printed)
    assert any("--pretrain-only" in line and "horizon=16" in line for line in printed)  # the lever's own model
    assert not list(out.glob("levers/*/*/results.json"))
