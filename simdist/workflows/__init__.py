"""What runs models and agents on tasks: evaluation results, closed-loop rollouts and their worker processes,
the adaptation loop (``simdist adapt``), recording demonstrations and the demo pipeline (``simdist demo``)."""
