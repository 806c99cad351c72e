"""``aqmlab report``: the reproduced experiments as one HTML page and one Markdown file.

For every experiment directory under the results root (``<root>/<fidelity>/<id>/``, as
``aqmlab reproduce`` writes them; ``<root>/emulator/<fidelity>/<id>/`` for a reproduction
on the emulator) the report gives its source and setup, its figure, the paper's values
beside ours with the deviation and whether it is within tolerance, where we expect to
differ and why, and the experiment's own table. An experiment reproduced on both engines
at one fidelity is one section: the paper's value, the simulation's and the emulator's
in one table, and both figures.

``report.html`` is self-contained (figures inlined as data URIs, no script, no
external resource); ``report.md`` refers to the figures copied next to it.
"""

from __future__ import annotations

import base64
import html
import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .errors import UserError


@dataclass
class Entry:
    meta: dict[str, Any]
    comparisons: list[dict[str, Any]]
    timing: dict[str, Any]
    table: pl.DataFrame
    figure: Path

    @property
    def engine(self) -> str:
        """``"sim"`` or ``"emulator"``: what computed its runs."""
        return str(self.meta.get("engine", "sim"))

    @property
    def anchor(self) -> str:
        prefix = "" if self.engine == "sim" else f"{self.engine}-"
        return f"{prefix}{self.meta['fidelity']}-{self.meta['id']}".replace(".", "-")

    @property
    def passed(self) -> int:
        return sum(1 for c in self.comparisons if c["ok"])


def collect(root: str | Path) -> list[Entry]:
    """Every reproduced experiment under ``root``, on either engine: paper fidelity
    first, then by id, the simulation before the emulator."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"no such directory: {root} (run `aqmlab reproduce ID` first)", "--results")
    entries = []
    for meta_path in sorted([*root.glob("*/*/experiment.json"), *root.glob("emulator/*/*/experiment.json")]):
        d = meta_path.parent
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            comparisons = json.loads((d / "comparison.json").read_text(encoding="utf-8"))
            timing_path = d / "timing.json"
            timing = json.loads(timing_path.read_text(encoding="utf-8")) if timing_path.exists() else {}
            table = pl.read_parquet(d / "table.parquet")
        except (OSError, ValueError) as e:
            raise UserError(f"{d}: not a complete experiment directory ({e})", "--results") from None
        entries.append(Entry(meta, comparisons, timing, table, d / "figure.png"))
    if not entries:
        raise UserError(f"no reproduced experiments under {root} (run `aqmlab reproduce ID` first)", "--results")
    order = {"paper": 0, "quick": 1}
    entries.sort(key=lambda e: (order.get(e.meta["fidelity"], 2), e.meta["id"], e.engine != "sim"))
    return entries


ENGINE_NAMES = {"sim": "simulation", "emulator": "emulator"}


def sections(entries: list[Entry]) -> list[list[Entry]]:
    """The entries of one experiment at one fidelity together (the simulation first)."""
    out: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        out.setdefault((e.meta["fidelity"], e.meta["id"]), []).append(e)
    return list(out.values())


def runs_line(e: Entry) -> str:
    """How many runs, and how many of them this reproduction computed (the rest came
    from the store, so its wall time says little about the experiment's cost)."""
    t = e.timing
    if not t:
        return "runs: not recorded"
    computed, stored = t.get("runs_computed", 0), t.get("runs_from_store", 0)
    return f"{computed + stored} runs, {computed} computed by the last reproduction in {t.get('wall_time_s', 0):.0f} s, {stored} read from the store"


def fmt(x: Any) -> str:
    """A number as a reader wants it: 4 significant digits, integers whole, None as a dash."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
            return f"{x:.3e}"
        return f"{x:.4g}"
    return str(x)


def judged(c: dict[str, Any]) -> str:
    from .experiments.core import Comparison

    return Comparison(**c).judged()


def _deviation(c: dict[str, Any]) -> str:
    d = c["deviation"]
    if d is None:
        return "–"
    if c["compare"] != "factor" and abs(d) < 1e-9:  # float noise of a mean of 1.0s
        d = 0.0
    return f"×{d:.3g}" if c["compare"] == "factor" else f"{d:+.3g}"


COMPARISON_COLUMNS = ["quantity", "paper", "ours", "deviation", "test", "within", "the paper says", "source", "note"]


#: The paper beside both engines: each engine's value and verdict.
SIDE_BY_SIDE_COLUMNS = ["quantity", "paper", "simulation", "within", "emulator", "within", "test", "the paper says",
                        "source", "note"]


def side_by_side_rows(sim: list[dict[str, Any]], emulated: list[dict[str, Any]]) -> list[list[str]]:
    """One row per comparison key (SIDE_BY_SIDE_COLUMNS): the paper's value, the
    simulation's and the emulator's, each with its verdict; a dash where an engine has
    no such comparison."""
    by_key = {"sim": {c["key"]: c for c in sim}, "emulator": {c["key"]: c for c in emulated}}
    rows = []
    for key in dict.fromkeys([c["key"] for c in sim] + [c["key"] for c in emulated]):
        s, m = by_key["sim"].get(key), by_key["emulator"].get(key)
        c = s or m
        assert c is not None
        cells = []
        for x in (s, m):
            cells += [fmt(x["ours"]), "yes" if x["ok"] else "NO"] if x else ["–", "–"]
        rows.append([c["quantity"], fmt(c["paper"]), *cells, judged(c), c["paper_text"], c["source"], c["note"]])
    return rows


def comparison_rows(comparisons: list[dict[str, Any]]) -> list[list[str]]:
    """The paper beside ours, one row of strings per comparison (COMPARISON_COLUMNS)."""
    rows = []
    for c in comparisons:
        rows.append(
            [
                c["quantity"], fmt(c["paper"]), fmt(c["ours"]), _deviation(c), judged(c), "yes" if c["ok"] else "NO",
                c["paper_text"], c["source"], c["note"],
            ]
        )
    return rows


# ---------------------------------------------------------------------------
# Seed 003's acceptance references (digest 003 section 6)

ACCEPTANCE_COLUMNS = ["reference", "the thesis", "checked by", "verdict"]


def _checked_by(checks: list[tuple[Entry, dict[str, Any]]]) -> str:
    """Per experiment: how many of its checks of the reference hold, and the ones that do not."""
    parts = []
    for eid in dict.fromkeys(e.meta["id"] for e, _ in checks):
        mine = [(e, c) for e, c in checks if e.meta["id"] == eid]
        first = mine[0][0]
        fidelity = first.meta["fidelity"] + ("" if first.engine == "sim" else f", {ENGINE_NAMES[first.engine]}")
        failing = [f"{c['quantity']}: {fmt(c['ours'])} against {fmt(c['paper'])} ({judged(c)})"
                   for _, c in mine if not c["ok"]]
        held = sum(1 for _, c in mine if c["ok"])
        parts.append(f"{eid} ({fidelity}): {held} of {len(mine)} within tolerance"
                     + (f"; not: {'; '.join(failing)}" if failing else ""))
    return ". ".join(parts)


def acceptance_rows(entries: list[Entry]) -> list[list[str]]:
    """Seed 003's R1-R22, each with the comparisons tagged with it (paper fidelity where an
    experiment has both) and a verdict; empty when no seed 003 experiment is in the results."""
    from .experiments.appenzeller import ACCEPTANCE

    seed = [e for e in entries if e.meta["id"].startswith("appenzeller.")]
    if not seed:
        return []
    best = {}  # id -> its entry at the highest fidelity present (entries come paper first)
    for e in seed:
        best.setdefault(e.meta["id"], e)
    rows = []
    for tag, (statement, why) in ACCEPTANCE.items():
        checks = [(e, c) for e in best.values() for c in e.comparisons if tag in (c.get("acceptance") or "").split(", ")]
        held = sum(1 for _, c in checks if c["ok"])
        if not checks:
            verdict = "not reproduced: " + (why or "no experiment in these results checks it")
        elif held == len(checks):
            verdict = "holds" + (f" ({why})" if why else "")
        else:
            verdict = f"differs: {held} of {len(checks)} checks within tolerance" + (f". {why}" if why else "")
        rows.append([tag, statement, _checked_by(checks) if checks else "–", verdict])
    return rows


# ---------------------------------------------------------------------------
# HTML

_CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.verdict.ok { color: #176117; font-weight: bold; } td.verdict.fail { color: #a11; font-weight: bold; }
img { max-width: 100%; border: 1px solid #ddd; }
.meta { color: #555; font-size: 0.9em; }
details { margin: 1em 0; }
"""


_NUMBERS = ("paper", "ours", "deviation", *ENGINE_NAMES.values())
_VERDICTS = {"yes": "verdict ok", "NO": "verdict fail"}


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for r in rows:
        cells = []
        for h, v in zip(header, r):
            kind = _VERDICTS.get(v, "verdict") if h == "within" else "num" if h in _NUMBERS else ""
            cells.append(f'<td class="{kind}">{html.escape(v)}</td>' if kind else f"<td>{html.escape(v)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


#: Rows of an experiment's table shown in the report; a longer table (a time series) is
#: in its table.parquet, and the report says how many rows it left out.
MAX_TABLE_ROWS = 60


def _cell(v: object) -> str:
    """A table cell; a list (a series kept in one cell) as its length, left in table.parquet."""
    return f"{len(v)} values in table.parquet" if isinstance(v, (list, tuple)) else fmt(v)


def _data_table(t: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    rows = [[_cell(v) for v in row] for row in t.head(MAX_TABLE_ROWS).iter_rows()]
    if t.height > MAX_TABLE_ROWS:
        rows.append([f"... {t.height - MAX_TABLE_ROWS} more rows in table.parquet"] + [""] * (t.width - 1))
    return list(t.columns), rows


def _tolerance_line(section: list[Entry]) -> str:
    """Within tolerance, per engine: ``12 of 14`` or ``simulation 12 of 14, emulator 9 of 14``."""
    if len(section) == 1 and section[0].engine == "sim":
        e = section[0]
        return f"{e.passed} of {len(e.comparisons)}"
    return ", ".join(f"{ENGINE_NAMES[e.engine]} {e.passed} of {len(e.comparisons)}" for e in section)


def _comparison_table(section: list[Entry]) -> tuple[list[str], list[list[str]]]:
    """The paper beside ours: beside both engines where the section has both."""
    if len(section) == 2:
        return SIDE_BY_SIDE_COLUMNS, side_by_side_rows(section[0].comparisons, section[1].comparisons)
    return COMPARISON_COLUMNS, comparison_rows(section[0].comparisons)


def _engines(section: list[Entry]) -> str:
    return " and ".join(ENGINE_NAMES[e.engine] for e in section)


def _html_section(section: list[Entry]) -> list[str]:
    first = section[0]
    m = first.meta
    parts = [
        f'<h2 id="{first.anchor}">{html.escape(m["id"])}: {html.escape(m["title"])}</h2>',
        f'<p class="meta">Source: {html.escape(m["source"])}. Fidelity: <b>{html.escape(m["fidelity"])}</b>; '
        f"{html.escape(_engines(section))}; aqmlab {html.escape(str(m.get('aqmlab_version', '?')))}.</p>",
    ]
    parts += [f'<p class="meta">{html.escape(ENGINE_NAMES[e.engine])}: {html.escape(runs_line(e))}.</p>'
              for e in section]
    parts.append(f"<p>{html.escape(m['summary'])}</p>")
    for e in section:
        png = base64.b64encode(e.figure.read_bytes()).decode("ascii")
        caption = f" ({ENGINE_NAMES[e.engine]})" if len(section) > 1 or e.engine != "sim" else ""
        parts += ([f"<h3>The figure{html.escape(caption)}</h3>"] if caption else []) + [
            f'<img src="data:image/png;base64,{png}" alt="figure of {html.escape(m["id"])}{html.escape(caption)}">']
    header, rows = _comparison_table(section)
    parts += ["<h3>The paper beside ours</h3>", _html_table(header, rows)]
    if m.get("differences"):
        parts.append(f"<p><b>Differences.</b> {html.escape(m['differences'])}</p>")
    for e in section:
        header, rows = _data_table(e.table)
        label = f" ({ENGINE_NAMES[e.engine]})" if len(section) > 1 else ""
        parts += [
            f"<details><summary>The experiment's table{html.escape(label)} ({len(rows)} rows)</summary>",
            _html_table(header, rows),
            "</details>",
        ]
    return parts


def render_html(entries: list[Entry], title: str = "aqmlab: reproduced experiments") -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<table><tr><th>experiment</th><th>fidelity</th><th>engine</th><th>within tolerance</th></tr>",
    ]
    for section in sections(entries):
        e = section[0]
        parts.append(
            f'<tr><td><a href="#{e.anchor}">{html.escape(e.meta["id"])}</a></td>'
            f"<td>{html.escape(e.meta['fidelity'])}</td><td>{html.escape(_engines(section))}</td>"
            f"<td>{html.escape(_tolerance_line(section))}</td></tr>"
        )
    parts.append("</table>")
    acceptance = acceptance_rows(entries)
    if acceptance:
        parts += ["<h2>Seed 003: acceptance references R1-R22 (digest 003 section 6)</h2>",
                  _html_table(ACCEPTANCE_COLUMNS, acceptance)]
    for section in sections(entries):
        parts += _html_section(section)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# Markdown


def _md_cell(v: str) -> str:
    return v.replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def render_markdown(entries: list[Entry], figures: dict[str, str], title: str = "aqmlab: reproduced experiments") -> str:
    parts = [f"# {title}", "", _md_table(
        ["experiment", "fidelity", "engine", "within tolerance"],
        [[x[0].meta["id"], x[0].meta["fidelity"], _engines(x), _tolerance_line(x)] for x in sections(entries)],
    )]
    acceptance = acceptance_rows(entries)
    if acceptance:
        parts += ["", "## Seed 003: acceptance references R1-R22 (digest 003 section 6)", "",
                  _md_table(ACCEPTANCE_COLUMNS, acceptance)]
    for section in sections(entries):
        m = section[0].meta
        parts += ["", f"## {m['id']}: {m['title']} ({m['fidelity']}, {_engines(section)})", "", f"Source: {m['source']}."]
        parts += ["", *(f"{ENGINE_NAMES[e.engine].capitalize()}: {runs_line(e)}." for e in section), "", m["summary"]]
        for e in section:
            caption = f" ({ENGINE_NAMES[e.engine]})" if len(section) > 1 or e.engine != "sim" else ""
            parts += ["", f"![{m['id']}{caption}]({figures[e.anchor]})"]
        parts += ["", _md_table(*_comparison_table(section))]
        if m.get("differences"):
            parts += ["", f"**Differences.** {m['differences']}"]
        for e in section:
            header, rows = _data_table(e.table)
            label = f" ({ENGINE_NAMES[e.engine]})" if len(section) > 1 else ""
            parts += ["", f"<details><summary>The experiment's table{label}</summary>", "", _md_table(header, rows), "",
                      "</details>"]
    return "\n".join(parts) + "\n"


def write_report(results: str | Path = Path("results") / "reproduce", out: str | Path = Path("results") / "report") -> Path:
    """Write ``report.html``, ``report.md`` and ``figures/`` to ``out``; returns the HTML path."""
    entries = collect(results)
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    figures = {}
    for e in entries:
        name = f"figures/{e.anchor}.png"
        shutil.copyfile(e.figure, out / name)
        figures[e.anchor] = name
    (out / "report.md").write_text(render_markdown(entries, figures), encoding="utf-8")
    page = out / "report.html"
    page.write_text(render_html(entries), encoding="utf-8")
    return page
