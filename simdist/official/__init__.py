"""Importing the SimDist authors' released Flax world model (orbax checkpoint + ``model_config.yaml``).

* :mod:`~simdist.official.reader` reads the checkpoint's arrays (needs the optional ``tensorstore``:
  ``pip install simdist[official]``) and its config;
* :mod:`~simdist.official.mapping` turns the official parameter tree into a :class:`~simdist.WorldModel`
  state dict, refusing (naming the tensor or config key) anything it does not map;
* :mod:`~simdist.official.convert` writes a model folder (``simdist convert official``).
"""

from simdist.official.mapping import OfficialCheckpoint, config_from_official, state_dict_from_official

__all__ = ["OfficialCheckpoint", "config_from_official", "state_dict_from_official"]
