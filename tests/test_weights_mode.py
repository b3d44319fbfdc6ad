"""A saved model folder's files all take the user's umask: ``model.safetensors`` (which safetensors writes through a
private 0600 temporary) has the mode of ``config.json`` and the model card."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import torch

from simdist.model.world_model import WorldModel


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_every_file_of_a_saved_model_has_the_umask_mode(umask: int, mode: int, tmp_path: Path) -> None:
    torch.manual_seed(0)
    wm = WorldModel.from_preset("toy")
    old = os.umask(umask)
    try:
        wm.save_pretrained(tmp_path / "model")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "model").iterdir()}
    assert {"config.json", "model.safetensors", "README.md"} <= set(modes)
    assert set(modes.values()) == {mode}, modes
