"""The rubric scheme's app side: import rules (io), its tables (store), detail view (views), the bucket assigner
(llm, llm_assigner, llm_prompts) and `concord traits` (commands). Its pure library: calibration/schemes/rubric/."""
from app.schemes.manifest import Command, Contribution, Manifest

MANIFEST = Manifest(
    name="rubric",
    scheme="calibration.schemes.rubric.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.rubric.io", {
            "project_context", "table_columns", "merge_state", "prepare", "write_prepared", "export", "label_command", "label_keys", "label_unit_key",
            "label_value_key"}),
        "store": Contribution("app.schemes.rubric.store", {"part", "load_records", "evaluation_records"}),
        "views": Contribution("app.schemes.rubric.views"),
        "llm": Contribution("app.schemes.rubric.llm"),
        "commands": Contribution("app.schemes.rubric.commands"),
        "guideline": Contribution("app.schemes.rubric.guideline", {"affected"}),
    },
    commands=(Command("traits", "metric traits: `concord traits import PROJECT FILE` (Karenina JSON)"),),
    accepts="rubric records",
)
