"""`concord models prepare`: export the embedding model to ONNX into the cache now (`make install` runs it), so the
first `calibrate` or embedding in the app on a new machine does not wait half a minute for the one-time export."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

EXAMPLES = """examples:
  concord models prepare
  concord models prepare --int8
  CONCORD_CACHE=/tmp/cache concord models prepare"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("models", help="embedding models: `concord models prepare` exports one to ONNX now",
                              description="Work with the embedding models Concord runs.", epilog=EXAMPLES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="models_command", metavar="ACTION")
    sub.required = True
    prep = sub.add_parser(
        "prepare",
        help="export a model to ONNX into the cache (once per machine; `make install` does it)",
        description="Export the embedding model to ONNX, check its vectors against sentence-transformers and keep "
        "the file in the cache ($CONCORD_CACHE, else $XDG_CACHE_HOME/concord, else ~/.cache/concord), exactly as "
        "the first embedding would. Nothing is done when the file is already there.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    prep.add_argument("--model", default="all-MiniLM-L6-v2",
                      help="the bundled model's name (default) or a local sentence-transformers model directory")
    prep.add_argument("--int8", action="store_true", help="also make the int8-quantised file (`onnx-int8:` specs)")
    prep.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.errors import UsageError
    from calibration.similarity.bundled import BUNDLED_ALIASES, BUNDLED_MINILM, resolve_sentence_transformer
    from calibration.similarity.onnx_backend import exported_file
    from calibration.similarity.onnx_export import FP32, INT8, OnnxExportError, export_dir, read_meta

    model_dir = resolve_sentence_transformer(args.model)
    if not Path(model_dir).is_dir():
        raise UsageError(f"--model {args.model!r}: not the bundled model's name ({BUNDLED_MINILM}) or a local "
                         "model directory")
    name = BUNDLED_MINILM if args.model in BUNDLED_ALIASES else args.model
    try:
        for int8 in ((False, True) if args.int8 else (False,)):
            target = export_dir(model_dir, name) / (INT8 if int8 else FP32)
            kind = "int8" if int8 else "fp32"
            if target.is_file():
                print(f"{name} ({kind}): already prepared: {target}")
                continue
            print(f"{name} ({kind}): exporting to ONNX (once per machine, about half a minute)...", flush=True)
            t0 = time.perf_counter()
            path = exported_file(model_dir, int8=int8, name=name)
            cosine = read_meta(path.parent).get(f"{kind}_min_cosine")
            check = f", min cosine to sentence-transformers {cosine:.6f}" if isinstance(cosine, float) else ""
            print(f"{name} ({kind}): exported in {time.perf_counter() - t0:.1f} s{check}: {path}")
    except OnnxExportError as exc:
        raise UsageError(str(exc)) from None
    return 0
