"""The judge scheme's app side: FaithBench's released batch files (io), its guideline's label levels (guideline),
reading its stored records back (store), and every annotator's own labels for its evaluate and calibrate (`inputs`: the `any` and `majority` references).
Its pure library: calibration/schemes/judge/."""
from app.schemes.manifest import Contribution, ImportOption, Manifest

MANIFEST = Manifest(
    name="judge",
    scheme="calibration.schemes.judge.scheme:SCHEME",
    contributions={"io": Contribution("app.schemes.judge.io", {"read_file", "labelstudio"}, options=(ImportOption(
                       "count_all", "for a FaithBench batch file: an annotator's span labeled Questionable or Benign "
                       "also makes the summary hallucinated (default: Unwanted only)",
                       refused="only a FaithBench batch file takes it", metavar=None),)),
                   "guideline": Contribution("app.schemes.judge.guideline", {"affected"}),
                   "store": Contribution("app.schemes.judge.store", {"load_records", "item_records"})},
    accepts="judge records, and FaithBench's released batch_N.json files with their annotators' labels",
    inputs=frozenset(("annotator_labels",)),
)
