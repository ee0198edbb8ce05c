"""The ADDM scheme's app side: import rules (io), detail view (views). Its pure library: calibration/schemes/addm/."""
from app.schemes.manifest import Contribution, Manifest

MANIFEST = Manifest(
    name="addm",
    scheme="calibration.schemes.addm.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.addm.io", {"read_file"}),
        "views": Contribution("app.schemes.addm.views"),
    },
    accepts="ADDM records and ADDM run files (results.json)",
)
