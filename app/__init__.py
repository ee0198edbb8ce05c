"""Concord: calibrate LLM evaluation metrics against human judgement."""
