"""OpenAI-compatible assigners (bucket assigner, ...) with a response cache. Side effects live here, not in calibration."""
