"""The violations scheme's app side: import rules (io), its tables (store, store_configs), match scoring and
calibration services (services, services_calibration) and its view with its pages (views, views_*). Its pure
library: calibration/schemes/violations/."""
