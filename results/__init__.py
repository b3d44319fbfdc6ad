"""The lab: experiments declared as data (``results/<area>/experiments.py``, collected in :mod:`results.lab`) and run
by one command from the repository root, ``python -m results run EXPERIMENT [STEP]``; their steps are the runners
and analysis modules here, which share ``results.runner``."""
