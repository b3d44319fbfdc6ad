"""Row-first state trees: nested dicts whose leaves are arrays with one row per env (cloned simulation
states, :meth:`simdist.capabilities.StateCloning.snapshot_states`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch


def take_rows(tree: Any, idx: np.ndarray) -> Any:
    """Rows ``idx`` of every leaf (repeats allowed: one state cloned several times)."""
    if isinstance(tree, dict):
        return {k: take_rows(v, idx) for k, v in tree.items()}
    return tree[idx]


def concat_rows(trees: Sequence[Any]) -> Any:
    """One tree holding the rows of ``trees`` in order (all of the same structure; numpy or torch leaves)."""
    first = trees[0]
    if isinstance(first, dict):
        return {k: concat_rows([t[k] for t in trees]) for k in first}
    if isinstance(first, torch.Tensor):
        return torch.cat(list(trees))
    return np.concatenate(trees)


def row_batches(n: int, size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(idx, rows)`` for N items ``size`` at a time: the items' indices and the batch rows they go to
    (``0..len(idx)-1``), as when N cloned states are restored into an env of ``size`` rows."""
    for lo in range(0, n, size):
        idx = np.arange(lo, min(lo + size, n))
        yield idx, np.arange(len(idx))
