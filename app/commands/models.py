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
    from calibration.similarity.onnx_export import OnnxExportError

    model_dir = resolve_sentence_transformer(args.model)
    if not Path(model_dir).is_dir():
        raise UsageError(f"--model {args.model!r}: not the bundled model's name ({BUNDLED_MINILM}) or a local "
                         "model directory")
    name = BUNDLED_MINILM if args.model in BUNDLED_ALIASES else args.model
    try:
        return _prepare(model_dir, name, args.int8)
    except OnnxExportError as exc:  # not a sentence-transformers model, torch missing, vectors that differ
        raise UsageError(str(exc)) from None


def _prepare(model_dir: str, name: str, int8: bool) -> int:
    """Export what is missing of the fp32 (and with `int8` the int8) file, saying what was there and what was made."""
    from calibration.similarity.onnx_backend import exported_file
    from calibration.similarity.onnx_export import FP32, INT8, export_dir, read_meta

    directory = export_dir(model_dir, name)
    wanted = {"fp32": directory / FP32, **({"int8": directory / INT8} if int8 else {})}
    missing = [kind for kind, path in wanted.items() if not path.is_file()]
    for kind, path in wanted.items():
        if kind not in missing:
            print(f"{name} ({kind}): already prepared: {path}")
    if not missing:
        return 0
    print(f"{name} ({', '.join(missing)}): exporting to ONNX (once per machine, about half a minute)...", flush=True)
    t0 = time.perf_counter()
    # one export makes the fp32 file too when the int8 one is asked for (onnx_export reuses the traced graph)
    exported_file(model_dir, int8="int8" in missing, name=name)
    meta = read_meta(directory)
    for kind in missing:
        cosine = meta.get(f"{kind}_min_cosine")
        check = f", min cosine to sentence-transformers {cosine:.6f}" if isinstance(cosine, float) else ""
        print(f"{name} ({kind}): exported in {time.perf_counter() - t0:.1f} s{check}: {wanted[kind]}")
    return 0
