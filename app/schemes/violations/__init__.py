"""The violations scheme's app side: import rules (io), its tables (store, store_configs), match scoring and
services (services) and its view with its pages (views, views_*). Its pure
library: calibration/schemes/violations/."""
from app.schemes.manifest import Contribution, Manifest

MANIFEST = Manifest(
    name="violations",
    scheme="calibration.schemes.violations.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.violations.io", {
            "parse", "record_id", "table_columns", "finish", "merge_state", "prepare", "pack", "write_prepared", "facts", "export",
            "ground_truth_label", "ground_truth_label_keys", "label_command", "label_keys", "label_unit_key",
            "label_value_key", "labelstudio"}),
        "store": Contribution("app.schemes.violations.store", {
            "part", "bulk_tables", "load_records", "evaluation_records", "item_records", "status_counts", "status_text", "rebuild_counts", "param_refs",
            "save_params", "load_params"}),
        "views": Contribution("app.schemes.violations.views"),
        "guideline": Contribution("app.schemes.violations.guideline", {"affected"}),
    },
    accepts="violations records",
)
