"""Planning diagnostics of a world model: action information (does the prediction use the future actions?),
its validation callback, and plan ranking against true returns (``simdist diagnose``, ``simdist mechanism``)."""
