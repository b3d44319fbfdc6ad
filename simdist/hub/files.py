"""What a saved world model folder (and Hub repo) holds: file names, Hub patterns and card metadata constants.

This module imports nothing from simdist, so the zoo (and anything else) can name the files without pulling
in the Hub loader.
"""

from __future__ import annotations

import os

__all__ = [
    "CONFIG_NAME", "WEIGHTS_NAME", "MODEL_FILES", "CARD_NAME", "TRAIN_CONFIG_NAME", "PLANNER_NAME", "ALLOW_PATTERNS",
    "BASE_TAGS", "LIBRARY_NAME", "PIPELINE_TAG", "DEFAULT_LICENSE", "HUB_PREFIX", "LOCAL_PREFIX", "StrPath",
    "PAPER_BIBTEX", "OFFICIAL_CODE_URL",
]

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
CARD_NAME = "README.md"
TRAIN_CONFIG_NAME = "train_config.yaml"
PLANNER_NAME = "planner.json"
#: the files a model export writes (and replaces with ``--overwrite``); anything else in its folder is kept
MODEL_FILES = (CONFIG_NAME, WEIGHTS_NAME, CARD_NAME, TRAIN_CONFIG_NAME, PLANNER_NAME)
#: Files fetched from (and pushed to) a Hub repo.
ALLOW_PATTERNS = [CONFIG_NAME, WEIGHTS_NAME, CARD_NAME, "*.yaml", "*.json"]
BASE_TAGS = ("simdist", "world-model", "model-based-rl", "robotics")
LIBRARY_NAME = "simdist"
PIPELINE_TAG = "robotics"
DEFAULT_LICENSE = "apache-2.0"
#: The SimDist paper, cited on every model card (and in README.md and CITATION.cff).
PAPER_BIBTEX = """@article{2026simdist,
  title={Simulation Distillation: Pretraining World Models in Simulation for Rapid Real-World Adaptation},
  author={Levy, Jacob and Westenbroek, Tyler and Huang, Kevin and Palafox, Fernando and Yin, Patrick and
          Omidshafiei, Shayegan and Kim, Dong-Ki and Gupta, Abhishek and Fridovich-Keil, David},
  journal={arXiv preprint arXiv:2603.15759},
  year={2026},
  url={https://arxiv.org/abs/2603.15759}
}"""
#: The paper's official implementation (MIT licence), credited on every card.
OFFICIAL_CODE_URL = "https://github.com/CLeARoboticsLab/simdist"
#: Name prefixes: ``hf-hub:org/name[@rev]`` and ``local-dir:<path>``.
HUB_PREFIX = "hf-hub:"
LOCAL_PREFIX = "local-dir:"

StrPath = str | os.PathLike  # a path given as str or Path
