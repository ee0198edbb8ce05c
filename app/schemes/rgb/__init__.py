"""The RGB scheme's app side: import rules and RGB file formats (io), detail view (views), answer generation
(llm, and its command `concord generate` in commands). Its pure library: calibration/schemes/rgb/."""
