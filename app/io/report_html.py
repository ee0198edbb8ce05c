"""`concord report` as one self-contained HTML page: every figure the CLI and the app show for each scheme, with
its interval, the calibration verdict first, and charts drawn by matplotlib (app/io/report_figures.py) embedded as
PNG data URIs, so the file can be mailed or attached to a ticket and opens offline. Data from files is escaped by
Jinja2's autoescape: an id or a quote is text, never markup."""
from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from app.figures import empty_table, fmt_cell, fmt_estimate
from app.io import report_figures as charts
from app.services.ceiling import ceiling_figures
from app.services.report import ProjectReport, SchemePart
from calibration.search.gain import sentence

TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Concord report: {{ r.name }}</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 62rem; margin: 2rem auto;
       padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.4rem; border-bottom: 1px solid #ddd; }
h3 { margin-top: 1.6rem; font-size: 1.05rem; }
.meta, .note { color: #555; font-size: .9rem; }
.verdict { font-weight: 600; padding: .6rem .8rem; border-left: 4px solid #888; background: #f6f6f6; }
.verdict.better { border-color: #22a884; } .verdict.nobetter { border-color: #b5551d; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .88rem; }
th, td { border-bottom: 1px solid #e4e4e4; padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: #fafafa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; height: auto; display: block; margin: .4rem 0 1rem; }
nav a { margin-right: 1rem; } code { background: #f3f3f3; padding: 0 .25rem; }
</style></head><body>
<h1>Concord report: {{ r.name }}</h1>
<p class="meta">{{ r.path }} · project {{ r.project_id }} · made {{ r.made_at }} UTC with
<code>{{ r.command }}</code>. Intervals are 95% bootstrap intervals; "held-out" figures come from folds the search
never saw.</p>
<nav>{% for s in r.schemes %}<a href="#{{ s.anchor }}">{{ s.title }}</a>{% endfor %}</nav>
{% for n in r.notes %}<p class="note">{{ n }}</p>{% endfor %}
<h2>Counts</h2>
<table><tr><th>scheme</th><th>samples</th><th>units</th><th>labeled</th><th>unlabeled</th><th>machine-labeled</th></tr>
{% for s in r.schemes %}<tr><td>{{ s.title }}</td>{% for k in ("samples", "units", "labeled", "unlabeled", "machine_labeled") %}<td class="num">{{ "{:,}".format(s.counts.get(k, 0)) }}</td>{% endfor %}</tr>{% endfor %}
</table>
{% for s in r.schemes %}
<h2 id="{{ s.anchor }}">{{ s.title }}</h2>
<h3>Calibration</h3>
{% if s.run %}
<p class="verdict {{ s.run.css }}">{{ s.run.sentence }}</p>
<p class="meta">Run #{{ s.run.id }} of {{ s.run.created_at }}: objective {{ s.run.objective }}, {{ s.run.configs }} configs,
{{ s.run.folds }} folds grouped by {{ s.run.group_by }}, {{ s.run.n_items }} human decisions.</p>
<table><tr><th>config</th><th>held-out {{ s.run.objective }}</th><th>95% CI</th><th>gain</th><th>gain 95% CI</th></tr>
{% for row in s.run.rows %}<tr>{% for c in row %}<td{% if not loop.first %} class="num"{% endif %}>{{ c }}</td>{% endfor %}</tr>{% endfor %}
</table>
<p class="meta">Chosen parameters: <code>{{ s.run.params }}</code></p>
{% for img in s.run.images %}<img alt="{{ img.alt }}" src="data:image/png;base64,{{ img.data }}">{% endfor %}
{% else %}<p class="note">Not calibrated yet: <code>concord calibrate {{ r.path }} --scheme {{ s.name }}</code> stores a run
that this report then shows.</p>{% endif %}
<h3>Human ceiling</h3>
{% if s.ceiling %}
<table><tr><th>agreement</th><th>estimate [95% CI]</th><th>on</th></tr>
{% for row in s.ceiling %}<tr><td>{{ row[0] }}</td><td class="num">{{ row[1] }}</td><td>{{ row[2] }}</td></tr>{% endfor %}
</table>
{% for img in s.ceiling_images %}<img alt="{{ img.alt }}" src="data:image/png;base64,{{ img.data }}">{% endfor %}
{% else %}<p class="note">No unit is labeled by two or more people yet, so there is no human ceiling.</p>{% endif %}
<h3>Evaluation</h3>
{% for n in s.notes %}<p class="note">{{ n }}</p>{% endfor %}
{% for img in s.images %}<img alt="{{ img.alt }}" src="data:image/png;base64,{{ img.data }}">{% endfor %}
{% for t in s.tables %}<table><caption style="text-align:left;font-weight:600">{{ t.title }}</caption>
<tr>{% for c in t.columns %}<th>{{ c }}</th>{% endfor %}</tr>
{% for row in t.rows %}<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endfor %}
{% endfor %}
</body></html>
"""


def _fmt(x: Any) -> str:
    return "–" if not charts.finite(x) else f"{x:.3f}"


def _img(png: bytes | None, alt: str) -> list[dict[str, str]]:
    return [] if png is None else [{"alt": alt, "data": base64.b64encode(png).decode("ascii")}]


SKIP = frozenset({"human_ceiling", "ceiling", "reliability", "guarantee"})  # drawn on their own


def intervals(data: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, float, float | None, float | None]]:
    """Every figure with an interval in a report's data, in the two forms the schemes' `--json` uses
    ({"estimate", "low", "high"}, or a number `x` beside `x_ci: [low, high]`), labelled by its path."""
    if not isinstance(data, Mapping):
        return
    if "estimate" in data and "low" in data and "high" in data:
        yield " · ".join(path), data["estimate"], data["low"], data["high"]
        return
    for k, v in data.items():
        ci = data.get(f"{k}_ci")
        if charts.finite(v) and isinstance(ci, (list, tuple)) and len(ci) == 2:
            yield " · ".join(path + (str(k),)), v, ci[0], ci[1]
        elif k not in SKIP:
            yield from intervals(v, path + (str(k),))


def headline(data: Any) -> tuple[str, list[tuple[str, float, float | None, float | None]]]:
    """The shallowest figures with intervals (a checker's F1, not its per-category F1s: the tables below have every
    one), labelled without the path they all share, which is returned for the chart's title."""
    rows = list(intervals(data))
    if not rows:
        return "", []
    depth = min(r[0].count(" · ") for r in rows)
    rows = [r for r in rows if r[0].count(" · ") == depth]
    parts = [r[0].split(" · ") for r in rows]
    shared = 0
    while len(rows) > 1 and all(len(p) > shared + 1 and p[shared] == parts[0][shared] for p in parts):
        shared += 1
    return " · ".join(parts[0][:shared]), [(" · ".join(p[shared:]),) + tuple(r[1:]) for p, r in zip(parts, rows)]


def found(data: Any, keys: frozenset[str], path: tuple[str, ...] = ()) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """Lists of rows carrying all of `keys` anywhere in a report's data, with their path: reliability bins
    (mean_predicted, observed_rate) and guarantee curves (coverage, agreement)."""
    if isinstance(data, Mapping):
        for k, v in data.items():
            if isinstance(v, list) and v and all(isinstance(x, Mapping) and keys <= x.keys() for x in v):
                yield " · ".join(path + (str(k),)), v
            else:
                yield from found(v, keys, path + (str(k),))


def _run(part: SchemePart) -> dict[str, Any] | None:
    if part.run is None:
        return None
    res = part.run["result"]
    gain = res.get("gain") or {}
    gains = gain.get("baselines") or {}
    objective = res.get("objective") or part.run.get("objective") or ""
    lo, hi = (res.get("heldout") or {}).get("ci") or [None, None]
    rows = [("calibrated", _fmt(res["heldout"]["score"]), f"[{_fmt(lo)}, {_fmt(hi)}]", "", "")]
    points = [("calibrated", res["heldout"]["score"], lo, hi)]
    gain_points = []
    for name, score in (res.get("baselines") or {}).items():
        blo, bhi = (res.get("baselines_ci") or {}).get(name) or [None, None]
        g = gains.get(name) or {}
        glo, ghi = g.get("ci") or [None, None]
        rows.append((name, _fmt(score), f"[{_fmt(blo)}, {_fmt(bhi)}]", _fmt(g.get("estimate")),
                     f"[{_fmt(glo)}, {_fmt(ghi)}]" if g else ""))
        points.append((name, score, blo, bhi))
        if g:
            gain_points.append((f"calibrated − {name}", g.get("estimate"), glo, ghi))
    images = _img(charts.interval_chart(points, title="Held-out score: calibrated config and presets",
                                        xlabel=f"held-out {objective}"), "held-out scores with intervals")
    images += _img(charts.interval_chart(gain_points, title="Gain over each preset (paired; must clear 0)",
                                         xlabel=f"gain in {objective}", zero_line=True), "gains with intervals")
    curve = (res.get("curve") or {}).get("points") or []
    images += _img(charts.curve_chart([(p.get("n"), p.get("score"), p.get("lo"), p.get("hi")) for p in curve],
                                      title="Learning curve", xlabel="labeled units", ylabel=f"held-out {objective}"),
                   "learning curve")
    better = gain.get("verdict") is not None and bool(gain.get("promoted"))
    return {"id": part.run["id"], "created_at": part.run["created_at"], "objective": objective,
            "sentence": sentence(res.get("gain"), objective), "css": "better" if better else "nobetter",
            "configs": f"{res.get('n_configs', 0):,}", "folds": res.get("folds"),
            "group_by": "sample" if res.get("group_by") == "group" else res.get("group_by"),
            "n_items": f"{res.get('n_items', 0):,}", "rows": rows, "params": (res.get("best") or {}).get("params"),
            "images": images}


def _part(part: SchemePart) -> dict[str, Any]:
    report = part.evaluated.report if part.evaluated is not None else None
    data = report.data if report is not None else {}
    notes = list(report.notes) if report is not None else []
    if part.evaluated is not None and part.evaluated.note:
        notes.append(part.evaluated.note)
    if part.evaluated is not None and not part.evaluated.human_labels:
        notes.append(f"No human labels yet: every figure against people is empty. Label some {part.unit_noun}s "
                     "first (the app, or `concord labels import`).")
    shared, rows = headline(data)
    images = _img(charts.interval_chart(rows, title=f"{part.title}: {shared or 'figures'} with 95% intervals",
                                        xlabel="estimate"), "figures with intervals")
    for where, rows in found(data, frozenset({"mean_predicted", "observed_rate"})):
        where = where.removesuffix(" · reliability")
        images += _img(charts.reliability_chart(where, rows), f"reliability diagram {where}")
    for where, rows in found(data, frozenset({"coverage", "agreement"})):
        images += _img(charts.curve_chart([(r["coverage"], r["agreement"], None, None) for r in rows],
                                          title=f"Coverage and agreement: {where}", xlabel="coverage (share decided)",
                                          ylabel="agreement on decided"), f"coverage curve {where}")
    ceiling = [(n, fmt_estimate(v), on) for n, v, on in ceiling_figures(part.ceiling)] if part.ceiling else None
    ceiling_images = []
    if part.ceiling:
        pts = [(n, v["estimate"], v.get("low"), v.get("high")) if isinstance(v, Mapping) else (n, v, None, None)
               for n, v, _ in ceiling_figures(part.ceiling)]
        ceiling_images = _img(charts.interval_chart(pts, title="Human ceiling: people with each other, the metric "
                                                    "with people", xlabel="agreement"), "human ceiling")
    return {"name": part.name, "title": part.title, "anchor": f"scheme-{part.name}", "counts": part.counts,
            "run": _run(part), "ceiling": ceiling, "ceiling_images": ceiling_images, "notes": notes,
            "images": images, "tables": [{"title": t.title, "columns": t.columns, "rows": [[fmt_cell(c) for c in row] for row in t.rows]}
                                 for t in (report.tables if report is not None else ()) if not empty_table(t.rows)]}


def render(report: ProjectReport, command: str) -> str:
    """The page; `command` is the command line that made it (shown, so a reader can make it again)."""
    from pathlib import Path

    from jinja2 import Environment

    env = Environment(autoescape=True, keep_trailing_newline=True)
    page = {"name": Path(report.path).name, "path": report.path, "project_id": report.project_id,
            "made_at": report.made_at.replace("+00:00", ""), "command": command, "notes": report.notes,
            "schemes": [_part(p) for p in report.schemes]}
    return env.from_string(TEMPLATE).render(r=page)
