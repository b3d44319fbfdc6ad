"""The model zoo's files, installed as the data package ``simdist.zoo_files`` (see ``simdist.zoo``).

Holds no code: ``models.yaml`` (the index), ``models/<name>/`` (bundled Hub-ready model folders) and
``experts/<name>/`` (PPO expert sets). Training state (``train_state/``) stays out of the installed package.
"""
