"""The rubric scheme's app side: import rules (io), its tables (store), detail view (views), the bucket assigner
(llm, llm_assigner, llm_prompts) and `concord traits` (commands). Its pure library: calibration/schemes/rubric/."""
