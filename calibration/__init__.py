"""GUI-free calibration library: metrics, similarity, search. Never imports Qt, sqlite or openai."""
