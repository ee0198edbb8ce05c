"""The TRACe scheme's app side: import rules (io), agreement's reads (store), detail view (views), LLM annotation
run (llm). Its pure library:
calibration/schemes/trace/."""
from app.schemes.manifest import Contribution, Manifest

MANIFEST = Manifest(
    name="trace",
    scheme="calibration.schemes.trace.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.trace.io", {"sample_id", "default_dataset", "export_extra"}),
        "store": Contribution("app.schemes.trace.store", {"load_records", "item_records", "evaluation_records"}),
        "views": Contribution("app.schemes.trace.views"),
        "llm": Contribution("app.schemes.trace.llm"),
    },
    accepts="TRACe records (RAGBench rows)",
)
