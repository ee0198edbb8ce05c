"""The ADDM scheme's app side: import rules (io), detail view (views), reading its stored records (store). Its pure library: calibration/schemes/addm/."""
from app.schemes.manifest import Contribution, ImportOption, Manifest

MANIFEST = Manifest(
    name="addm",
    scheme="calibration.schemes.addm.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.addm.io", {"read_file"}, options=(ImportOption(
            "method", "for an ADDM run file (results.json, attached to the businesses already imported): the method "
            "to file its results under (default: the file's method|model)",
            refused="only a run file (ADDM results.json) takes a method name"),)),
        "views": Contribution("app.schemes.addm.views"),
        "store": Contribution("app.schemes.addm.store", {"load_records"}),
    },
    accepts="ADDM records and ADDM run files (results.json)",
)
