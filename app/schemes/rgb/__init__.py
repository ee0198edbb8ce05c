"""The RGB scheme's app side: import rules and RGB file formats (io), detail view (views), answer generation
(llm, and its command `concord generate` in commands), reading its stored records (store). Its pure library:
calibration/schemes/rgb/."""
from app.schemes.manifest import Command, Contribution, ImportOption, Manifest

MANIFEST = Manifest(
    name="rgb",
    scheme="calibration.schemes.rgb.scheme:SCHEME",
    contributions={
        "io": Contribution("app.schemes.rgb.io", {"read_file"}, options=(ImportOption(
            "model", "the model of an RGB prediction file whose name does not say it (RGB's data and prediction .json "
            "files are recognised as they are)", refused="only an RGB prediction file takes a model"),)),
        "views": Contribution("app.schemes.rgb.views"),
        "llm": Contribution("app.schemes.rgb.llm"),
        "commands": Contribution("app.schemes.rgb.commands"),
        "store": Contribution("app.schemes.rgb.store", {"load_records"}),
    },
    commands=(Command("generate", "generate RGB responses with an OpenAI-compatible model (passages as RGB assembles them)"),),
    accepts="RGB records and RGB's data and prediction files (.json)",
)
