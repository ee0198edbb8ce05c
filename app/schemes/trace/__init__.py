"""The TRACe scheme's app side: import rules (io), detail view (views), LLM annotation run (llm). Its pure library:
calibration/schemes/trace/."""
