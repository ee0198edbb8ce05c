"""Several annotators in an exported split (issue #15): every annotator's labels of the exported samples, which
one resolved (and under which policy), and the inter-annotator agreement figures over those samples, for the
manifest and the data card (app/io/export_manifest.py)."""
from __future__ import annotations

from typing import Any

from app.store import Project

N_BOOT = 500  # bootstrap draws for the split's agreement intervals (an export should stay quick)


def exported_ids(sel: Any) -> set[str]:
    return set(sel.sample_ids)


def inter_annotator(project: Project, sel: Any) -> dict[str, Any]:
    """{resolution, annotators, labels: [{sample, unit, kind, annotator, value, resolved}], agreement} — labels and
    agreement only when some exported target has two or more annotators."""
    from app.services.agreement import agreement

    ids = exported_ids(sel)
    rows = [r for r in project.decisions.label_rows(_kinds(project), every_annotator=True) if r["sample_id"] in ids]
    per_target: dict[tuple[str, str, str], int] = {}
    for r in rows:
        key = (r["sample_id"], r["unit"], r["kind"])
        per_target[key] = per_target.get(key, 0) + 1
    out: dict[str, Any] = {"resolution": f"adjudicated, else {project.decisions.resolution_policy()}"
                                         + (", else newest" if project.decisions.resolution_policy() == "majority" else ""),
                           "annotators": sorted({r["annotator"] for r in rows}),
                           "targets_with_several_annotators": sum(1 for n in per_target.values() if n > 1)}
    if not out["targets_with_several_annotators"]:
        return out
    out["labels"] = [{"sample": r["sample_id"], "unit": r["unit"], "kind": r["kind"], "annotator": r["annotator"],
                      "value": r["value"], "resolved": bool(r["resolved"])} for r in rows]
    fig = agreement(project, samples=ids, n_boot=N_BOOT)
    out["agreement"] = {"overall": fig["overall"], "pairs": fig["pairs"], "n_boot": N_BOOT}
    return out


def _kinds(project: Project) -> list[str]:
    return [k for k in project.decisions.label_kinds_present() if k not in ("status", "note")]


def card_lines(info: dict[str, Any] | None) -> list[str]:
    """Data card lines: who labeled, how labels resolve, the agreement figures."""
    if not info:
        return []

    def ci(x: Any) -> str:
        if not isinstance(x, dict) or x.get("estimate") is None:
            return "–"
        lo, hi = x.get("low"), x.get("high")
        return f"{x['estimate']:.3f}" + ("" if lo is None or hi is None else f" [{lo:.3f}, {hi:.3f}]")

    lines = ["## Annotators", "",
             f"- annotators: {', '.join(info['annotators']) or 'none'}",
             f"- a label decided by several annotators resolves as: {info['resolution']}",
             f"- targets with two or more annotators: {info['targets_with_several_annotators']}"]
    ag = info.get("agreement")
    if ag:
        ov = ag["overall"]
        lines += [f"- Fleiss' kappa {ci(ov.get('kappa'))}, Krippendorff's alpha {ci(ov.get('alpha'))}, "
                  f"span F1 {ci(ov.get('span_f1'))} (95% bootstrap intervals over samples, {ag['n_boot']} draws)",
                  "- every annotator's labels are in manifest.json (`inter_annotator.labels`)"]
    return lines + [""]
