"""``simdist bench`` at tiny sizes, its FLOP count, and the chunked / broadcast fast paths it times."""

from __future__ import annotations

import json

import pytest
import torch

import simdist
from simdist import WorldModel
from simdist.benchmarking.measure import random_history, summarize
from simdist.benchmarking.planning import imagine_flops
from simdist.cli import main as cli_main
from simdist.tools import bench

pytestmark = pytest.mark.usefixtures("single_thread")


def test_bench_json_smoke(capsys):
    argv = ["bench", "--preset", "toy", "--threads", "1", "--repeats", "2", "--warmup", "1",
            "--num-samples", "16", "--iterations", "2", "--naive-repeats", "1", "--realtime-repeats", "3",
            "--envs", "1,2",
            "--train-steps", "1", "--pretrain-batch", "4", "--finetune-batch", "2", "--windows-per-chunk", "2",
            "--json"]
    assert cli_main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"machine", "settings", "results"} <= set(report) and report["machine"]["logical_cores"] >= 1
    rows = {(r["section"], r["setting"]): r for r in report["results"]}
    assert {s for s, _ in rows} == set(bench.SECTIONS)
    for r in report["results"]:
        assert r["median_ms"] > 0 and r["p99_ms"] >= r["median_ms"] * 0.999 and r["cpu_ms"] >= 0
    mppi = next(r for r in report["results"] if r["section"] == "mppi")
    assert mppi["gflop_per_tick"] > 0 and mppi["gflops"] > 0
    naive = next(r for r in report["results"] if r["section"] == "naive")
    assert naive["max_abs_plan_diff"] < 1e-4
    assert [r["env_ticks_per_s"] > 0 for r in report["results"] if r["section"] == "envs"] == [True, True]


def test_bench_table(capsys):
    argv = ["--preset", "toy", "--sections", "realtime", "--threads", "1", "--realtime-repeats", "2"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "realtime" in out and "median ms" in out and "load average" in out


def test_summarize_percentiles():
    s = summarize([float(i) for i in range(1, 101)])
    assert s["median"] == 50.5 and s["p99"] == 99.0 and s["n"] == 100 and s["min"] == 1.0
    assert summarize([3.0])["p99"] == 3.0


def test_go2_flop_count_matches_formula():
    torch.manual_seed(0)
    wm = WorldModel.from_preset("go2").eval()
    d, t, n_ctx, a, c, f = 64, 25, 51, 12, 3, 4  # 51 context tokens
    dyn = 2 * t * a * d + 2 * (2 * t * d * d * (6 + 2 * f) + 4 * t * t * d + 4 * t * n_ctx * d)
    enc = 2 * t * d * d * (4 + 2 * f) + 4 * t * t * d + 2 * t * d
    heads = 2 * t * (d + a + c) * d + enc + 2 * t * (d + c) * d + enc
    assert imagine_flops(wm) == pytest.approx(dyn + heads)
    assert 472 * 8 * (dyn + heads) / 1e9 == pytest.approx(47.0, abs=0.1)


def test_chunked_scoring_matches_unchunked():
    torch.manual_seed(0)
    wm = WorldModel.from_preset("toy").eval()
    hist = random_history(wm, 3)
    kw = dict(num_samples=40, iterations=2, num_elites=8)
    whole = simdist.create("planner", "mppi", world_model=wm, score_chunk=10_000, **kw).plan(hist)
    chunked = simdist.create("planner", "mppi", world_model=wm, score_chunk=7, **kw).plan(hist)
    torch.testing.assert_close(chunked.plan, whole.plan, atol=1e-5, rtol=0)
    torch.testing.assert_close(chunked.returns, whole.returns, atol=1e-5, rtol=1e-5)


def test_attention_fast_paths_match_reference():
    """Fused self-attention and folded shared-context cross-attention equal the plain computation."""
    from simdist.model.nn import MultiHeadAttention

    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 4).eval()
    h, dh = 4, 4

    def reference(x, ctx, causal):
        q = mha.split(mha.q(x))
        k, v = mha.split(mha.k(ctx)), mha.split(mha.v(ctx))
        s = q @ k.transpose(-1, -2) / dh**0.5
        if causal:
            s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
        return mha.out((s.softmax(-1) @ v).transpose(-2, -3).flatten(-2))

    x = torch.randn(2, 3, 5, 16)
    ctx = torch.randn(2, 7, 16)
    with torch.no_grad():
        for causal in (False, True):
            torch.testing.assert_close(mha(x, causal=causal), reference(x, x, causal), atol=1e-5, rtol=1e-5)
        k, v = mha.project_kv(ctx)
        kv = (k[:, None], v[:, None])  # (B, 1, h, L, d): one context per env, 3 samples each
        want = reference(x, ctx[:, None].expand(2, 3, 7, 16), False)
        torch.testing.assert_close(mha(x, kv=kv), want, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(mha(x[0], kv=(k[0], v[0])), want[0], atol=1e-5, rtol=1e-5)
        assert mha(x, kv=(k[:1, None], v[:1, None])).shape == (2, 3, 5, 16) and h * dh == 16


def test_train_section_reports_each_variant(capsys):
    argv = ["--preset", "toy", "--sections", "train", "--threads", "1", "--train-presets", "toy:8",
            "--finetune-batch", "4", "--windows-per-chunk", "2", "--train-variants", "windows,chunks",
            "--train-steps", "1", "--json"]
    assert bench.main(argv) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["setting"] for r in rows] == ["pretrain toy b8 windows", "pretrain toy b8 chunks",
                                            "finetune toy b4 windows", "finetune toy b4 chunks"]
    for r in rows:
        assert r["windows_per_s"] > 0 and r["matmul_gflops"] > 0 and 0 < r["share_of_matmul_rate"] < 1
        assert r["mflop_executed_per_window"] <= r["mflop_per_window"]
    for r in rows[1::2]:  # the chunked path: fewer encoder passes, the same loss and gradients
        assert r["windows_per_chunk"] == 2 and r["mflop_executed_per_window"] < r["mflop_per_window"]
        assert r["loss_rel_diff_vs_first"] < 1e-6 and r["grad_rel_diff_vs_first"] < 1e-5


@pytest.mark.parametrize("argv, message", [
    (["--train-variants", "windows,fast"], "unknown training variant"),
    (["--train-presets", "toy"], "not PRESET:BATCH"),
    (["--train-presets", "toy:6", "--windows-per-chunk", "4"], "does not divide"),
])
def test_train_section_rejects_bad_options(argv, message, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--preset", "toy", "--sections", "train", *argv])
    assert message in capsys.readouterr().err


def test_pretrain_presets_are_the_recipes_batches():
    from pathlib import Path

    import yaml

    from simdist.tasks import pretrain_presets

    recipes = Path(__file__).resolve().parents[1] / "recipes"
    presets = dict(pretrain_presets())
    assert {"go2", "ur5e-peg"} <= set(presets)
    for preset, batch in presets.items():
        recipe = yaml.safe_load((recipes / preset / "base.yaml").read_text())
        assert recipe["data"]["batch_size"] == batch, preset


def test_gemm_shapes_and_rate():
    from simdist.benchmarking.floor import gemm_flop, gemm_rate, gemm_shapes

    linear = torch.nn.Linear(8, 16)
    shapes = gemm_shapes(lambda: (linear(torch.randn(2, 5, 8)), torch.bmm(torch.randn(3, 4, 6), torch.randn(3, 6, 2))))
    assert shapes == {(1, 10, 8, 16): 1, (3, 4, 6, 2): 1}
    assert gemm_flop(shapes) == 2 * (10 * 8 * 16 + 3 * 4 * 6 * 2)
    rate = gemm_rate(shapes, threads=1, repeats=1)
    assert rate["gflops"] == rate["intra_op"] > 0 and rate["gflops_per_cpu_s"] > 0


def test_paper_batched_section_rows(capsys):
    argv = ["--preset", "toy", "--sections", "paper-batched", "--threads", "1", "--batched-envs", "1,3",
            "--batched-repeats", "1", "--num-samples", "16", "--iterations", "2", "--json"]
    assert bench.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    rows = report["results"]
    assert [r["setting"] for r in rows] == ["eager x1 envs", "eager x3 envs"]
    assert report["settings"]["paper_batched"]["warm_start"] == "official"
    for r in rows:
        assert r["section"] == "paper-batched" and r["env_ticks_per_s"] > 0 and r["gemm_gflops"] > 0
        assert r["floor_ratio"] == pytest.approx(r["median_ms"] / r["floor_ms"])
        assert r["cpu_floor_ratio"] == pytest.approx(r["cpu_ms"] / r["floor_cpu_ms"])
    assert rows[1]["floor_ms"] > rows[0]["floor_ms"]  # three envs' work


@pytest.mark.parametrize("argv, message", [
    (["--batched-envs", "0,4"], "--batched-envs"), (["--batched-envs", "x"], "--batched-envs"),
    (["--model", "no/such-model-here"], "--model"),
])
def test_paper_batched_rejects_bad_options(argv, message, capsys):
    with pytest.raises(SystemExit) as err:
        bench.main(["--preset", "toy", "--sections", "paper-batched", *argv])
    assert err.value.code == 2 and message in capsys.readouterr().err
