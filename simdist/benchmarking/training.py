"""The ``train`` section of ``simdist bench``: world-model training throughput on this machine.

For each preset at its pretraining batch size (the tasks' ``pretrain_batch``, their recipes' value), full
pretraining steps (``WorldModelLoss`` + backward + Adam) are timed under each training variant, the variants
interleaved step by step so that a shared machine's load hits them alike (the speed-ups are ratios of
medians within one run):

* ``windows``: today's path, every window's ``T`` consistency targets encoded on their own;
* ``chunks``: the same windows drawn as chunks of ``--windows-per-chunk`` consecutive windows
  (:mod:`simdist.data.chunks`), each chunk's future observations encoded once;
* ``+bf16``: under ``torch.autocast`` in bfloat16 (its loss and gradient difference to float32 on one batch,
  without dropout, are reported); ``+compile``: the loss through ``torch.compile`` (compile time apart).

Every row gives windows/s, the model's FLOP per window (forward and backward, counted by
``torch.utils.flop_counter``; ``executed`` for the variant's own path) and the share of the machine's
measured matrix-product rate (a 1024² float32 product on the same threads) it reaches; the speed-ups are
given in wall time and in process CPU time (the latter less sensitive to other work on a shared machine).
Finetuning (the dynamics alone, ``--finetune-batch``) is timed for the first preset under the same variants.
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch

from simdist.benchmarking.measure import PeakMemory, summarize
from simdist.data.chunks import chunk_length, expand_chunks

DEFAULT_VARIANTS = ("windows", "chunks")


def matmul_rate(device: torch.device, size: int = 1024, repeats: int = 5, dtype: torch.dtype = torch.float32
                ) -> float:
    """GFLOP/s of a ``size``² matrix product (median of ``repeats``) on the current torch threads."""
    a = torch.randn(size, size, device=device).to(dtype)
    b = torch.randn(size, size, device=device).to(dtype)
    times = []
    for i in range(repeats + 1):
        _sync(device)
        t0 = time.perf_counter()
        a @ b
        _sync(device)
        if i:  # the first product warms up
            times.append(time.perf_counter() - t0)
    times.sort()
    return 2 * size**3 / times[len(times) // 2] / 1e9


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def random_chunk_batch(wm: Any, windows: int, per_chunk: int, seed: int = 0) -> dict[str, Any]:
    """A random batch of ``windows`` training windows, drawn as chunks of ``per_chunk`` consecutive windows and
    expanded (:func:`~simdist.data.chunks.expand_chunks`); without ``fut_steps`` it is a plain window batch."""
    cfg, dev = wm.config, wm.device
    if windows % per_chunk:
        raise ValueError(f"--windows-per-chunk {per_chunk} must divide the batch size {windows}")
    g = torch.Generator().manual_seed(seed)
    c, n = windows // per_chunk, chunk_length(per_chunk, cfg.history, cfg.horizon)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(c, n, *shape, generator=g)

    chunks = {"obs": {k: r(*s) for k, s in cfg.obs_spec.items()}, "actions": r(cfg.action_dim),
              "commands": r(cfg.command_dim), "rewards": r(), "values": r(), "expert": (r() > -0.5).float()}
    batch = expand_chunks(chunks, per_chunk, cfg.history, cfg.horizon)
    return _to(batch, dev)


def _to(x: Any, device: torch.device) -> Any:
    return {k: _to(v, device) for k, v in x.items()} if isinstance(x, dict) else x.to(device)


def windows_only(batch: dict[str, Any]) -> dict[str, Any]:
    """The batch as today's path reads it (no ``fut_steps``)."""
    return {k: v for k, v in batch.items() if k != "fut_steps"}


def step_flops(wm: Any, loss_fn: Any, batch: dict[str, Any]) -> float:
    """FLOP of one forward and backward pass of ``loss_fn`` on ``batch``."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        loss_fn(wm, batch)["loss"].backward()
    wm.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def parse_variant(name: str) -> tuple[str, set[str]]:
    """``PATH[+bf16][+compile]`` as (path, options); a clear error for anything else."""
    path, *options = name.split("+")
    if path not in ("windows", "chunks") or set(options) - {"bf16", "compile"}:
        raise ValueError(f"unknown training variant {name!r}: a path (windows, chunks) with optional +bf16, "
                         "+compile")
    return path, set(options)


class Variant:
    """One training variant: its own copy of the model and optimiser, and the step it times."""

    def __init__(self, name: str, wm: Any, loss_fn: Any, batch: dict[str, Any], device: torch.device) -> None:
        path, options = parse_variant(name)
        self.name, self.wm, self.loss_fn = name, copy.deepcopy(wm), loss_fn
        self.batch = batch if path == "chunks" else windows_only(batch)
        self.bf16, self.compiled = "bf16" in options, "compile" in options
        self.device = device
        self.opt = torch.optim.Adam([p for p in self.wm.parameters() if p.requires_grad], lr=1e-4)
        self.forward: Callable[[dict[str, Any]], torch.Tensor] = self._loss
        if self.compiled:
            self.forward = torch.compile(self._loss)
        self.compile_s: float | None = None

    def _loss(self, batch: dict[str, Any]) -> torch.Tensor:
        return self.loss_fn(self.wm, batch)["loss"]

    def autocast(self) -> Any:
        return torch.autocast(self.device.type, dtype=torch.bfloat16) if self.bf16 else nullcontext()

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        with self.autocast():
            loss = self.forward(self.batch)
        loss.backward()
        self.opt.step()

    def warm_up(self, steps: int) -> None:
        t0 = time.perf_counter()
        self.step()
        if self.compiled:
            self.compile_s = time.perf_counter() - t0
        for _ in range(steps - 1):
            self.step()


def accuracy(variant: Variant, reference: Variant) -> dict[str, float]:
    """Relative loss and gradient difference of ``variant`` to ``reference`` on their batches, both from the
    reference's current weights, without dropout."""
    losses, grads = [], []
    for v in (variant, reference):
        wm = copy.deepcopy(reference.wm).eval()
        with v.autocast():
            loss = v.loss_fn(wm, v.batch)["loss"]
        loss.backward()
        losses.append(float(loss.detach()))
        grads.append(torch.cat([p.grad.float().flatten() for p in wm.parameters() if p.grad is not None]))
    (a, b), (ga, gb) = losses, grads
    return {"loss_rel_diff": abs(a - b) / max(abs(b), 1e-12),
            "grad_rel_diff": float((ga - gb).norm() / gb.norm().clamp_min(1e-12))}


def bench_preset(preset: str, batch_size: int, args: Any, threads: int | None, device: torch.device,
                 stage: str = "pretrain") -> list[dict[str, Any]]:
    """Interleaved timed steps of every variant of ``args.train_variants`` for ``preset`` at ``batch_size``."""
    from simdist import WorldModel
    from simdist.model.losses import WorldModelLoss
    from simdist.registry import create

    per_chunk = getattr(args, "windows_per_chunk", 16)
    per_chunk = per_chunk if batch_size % per_chunk == 0 else 1
    names = list(getattr(args, "train_variants", DEFAULT_VARIANTS))
    if getattr(args, "compile_modes", None) and not any("compile" in n for n in names):
        names.append(f"{names[-1]}+compile")
    torch.manual_seed(0)
    wm = WorldModel.from_preset(preset).to(device).train()
    policy, loss_fn = ((create("freeze_policy", "all"), WorldModelLoss()) if stage == "pretrain"
                       else (create("freeze_policy", "dynamics_only"), WorldModelLoss.dynamics_only()))
    policy.apply(wm)
    batch = random_chunk_batch(wm, batch_size, per_chunk)
    variants = [Variant(n, wm, loss_fn, batch, device) for n in names]
    flops = {p: step_flops(copy.deepcopy(wm), loss_fn, b) / batch_size
             for p, b in (("windows", windows_only(batch)), ("chunks", batch))}
    for v in variants:
        v.warm_up(2)
    repeats = args.train_steps if batch_size >= 128 else 4 * args.train_steps
    wall: dict[str, list[float]] = {v.name: [] for v in variants}
    cpu: dict[str, list[float]] = {v.name: [] for v in variants}
    with PeakMemory(device) as mem:
        for _ in range(repeats):
            for v in variants:
                _sync(device)
                t0, c0 = time.perf_counter(), time.process_time()
                v.step()
                _sync(device)
                wall[v.name].append(time.perf_counter() - t0)
                cpu[v.name].append(time.process_time() - c0)

    rate = matmul_rate(device)
    base = statistics.median(wall[variants[0].name])
    base_cpu = statistics.median(cpu[variants[0].name])
    rows = []
    for v in variants:
        med = statistics.median(wall[v.name])
        executed = flops["chunks" if v.name.startswith("chunks") else "windows"]
        row = {
            "section": "train", "setting": f"{stage} {preset} b{batch_size} {v.name}", "threads": threads,
            "median_ms": 1e3 * med, "p99_ms": 1e3 * summarize(wall[v.name])["p99"],
            "cpu_ms": 1e3 * statistics.median(cpu[v.name]),
            "n": repeats, "preset": preset, "variant": v.name, "batch": batch_size,
            "windows_per_chunk": per_chunk if v.name.startswith("chunks") else 1,
            "windows_per_s": batch_size / med, "samples_per_s": batch_size / med,
            "speedup_vs_first": base / med, "cpu_speedup_vs_first": base_cpu / statistics.median(cpu[v.name]),
            "mflop_per_window": flops["windows"] / 1e6,
            "mflop_executed_per_window": executed / 1e6, "matmul_gflops": rate,
            "share_of_matmul_rate": executed * batch_size / med / 1e9 / rate,
            "trainable_params": sum(p.numel() for p in v.wm.parameters() if p.requires_grad),
            "compile_s": v.compile_s, "peak_extra_mib_all_variants": mem.extra_mib,
        }
        if v is not variants[0]:
            row.update({f"{k}_vs_first": x for k, x in accuracy(v, variants[0]).items()})
        rows.append(row)
    return rows


def bench_training(preset: str, args: Any, threads: int | None, device: torch.device) -> list[dict[str, Any]]:
    """Pretraining of ``preset`` at ``args.pretrain_batch`` and finetuning (dynamics only) at
    ``args.finetune_batch``, every variant (``args.train_variants``, default windows and chunks)."""
    return (bench_preset(preset, args.pretrain_batch, args, threads, device)
            + bench_preset(preset, args.finetune_batch, args, threads, device, stage="finetune"))


def bench_presets(presets: list[tuple[str, int]], args: Any, threads: int | None, device: torch.device
                  ) -> list[dict[str, Any]]:
    """Pretraining of each (preset, batch), then finetuning of the first preset."""
    rows = []
    for preset, batch in presets:
        rows += bench_preset(preset, batch, args, threads, device)
    if presets and args.finetune_batch:
        rows += bench_preset(presets[0][0], args.finetune_batch, args, threads, device, stage="finetune")
    return rows
