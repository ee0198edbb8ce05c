"""The ADDM scheme's app side: import rules (io), detail view (views). Its pure library: calibration/schemes/addm/."""
