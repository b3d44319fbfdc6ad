"""One demo pipeline (:mod:`simdist.demo_pipeline`): the toy's demo through it writes, for the same seed and
settings, the very ``results.json`` the toy's hand-built pipeline wrote before the move; every task takes the same
options; the plot draws each bar's 95 % interval.

``tests/data/toy_demo_golden/{a,b,c}.json`` were written by the toy demo of main before the move (commit
e8d0851, ``run_toy_pipeline`` at the ``TEST`` scale, one torch thread): ``a`` the whole loop on ``lag`` with the
default settings (seed 0), ``b`` from ``a``'s pretrained model on ``real`` with exploration noise, an anchor and
half simulation data in finetuning (seed 1), ``c`` every model and data lever, an ensemble with the disagreement
penalty and both diagnostics (seed 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simdist.components.tasks.toy_reach.demo import TEST, ToyOptions, run_toy_pipeline

GOLDEN = Path(__file__).parent / "data" / "toy_demo_golden"
LEVERS = ToyOptions(dynamics_context=2, dynamics_hidden=(32, 32), history=6, perturb_sigma=1.5, perturb_steps=8,
                    perturbed_repeat=2, history_dropout=0.2, consistency_decay=0.8, ensemble=2, disagreement=0.5,
                    ranking=True, ranking_states=4)


#: where the recording ran (``b`` names the folder of ``a``'s pretrained model)
RECORDED_IN = "/work/data-demo/golden"


def _same(out: Path, name: str) -> None:
    expected = (GOLDEN / f"{name}.json").read_text().replace(RECORDED_IN, str(out.parent))
    assert (out / "results.json").read_text() == expected


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_toy_demo_writes_the_results_of_before_the_move(tmp_path: Path) -> None:
    run_toy_pipeline(tmp_path / "a", TEST, seed=0, progress=False, real="lag")
    _same(tmp_path / "a", "a")
    run_toy_pipeline(tmp_path / "b", TEST, seed=1, progress=False, real="real", pretrained=tmp_path / "a" / "toy-sim",
                     options=ToyOptions(explore=0.5, anchor=0.1, sim_mix=0.5))
    _same(tmp_path / "b", "b")
    # the loop's own files beside the demo's; the adapted model where the toy's scripts read it
    for name in ("state.json", "curve.json", "progress.png", "results.md", "toy-real/config.json"):
        assert (tmp_path / "b" / name).is_file(), name


@pytest.mark.slow
@pytest.mark.usefixtures("single_thread")
def test_toy_demo_with_every_lever_writes_the_results_of_before_the_move(tmp_path: Path) -> None:
    run_toy_pipeline(tmp_path / "c", TEST, seed=2, progress=False, real="lag", options=LEVERS)
    _same(tmp_path / "c", "c")
