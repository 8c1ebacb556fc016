"""The similarity results on disk: pairs.json for tools, report.html for a person.

Everything shown comes from students (ids, code), so the page is rendered by jinja2 with
autoescaping: student text is only ever data, never markup. Nothing here changes a grade.
"""

import json
from dataclasses import asdict
from functools import cache
from pathlib import Path

import jinja2

from autograder.checks.templating import page_environment
from autograder.grading.pipeline.similarity.compare import Pair, Region
from autograder.grading.pipeline.similarity.extract import Document, Skipped
from autograder.grading.pipeline.similarity.settings import Settings

PAIRS_NAME = "pairs.json"
PAGE_NAME = "report.html"


def region_record(region: Region) -> dict[str, object]:
    """A region as JSON: its cell and lines (offsets are internal to the comparison)."""
    return {"cell": region.cell, "lines": [region.first_line, region.last_line]}


def pair_record(pair: Pair, settings: Settings) -> dict[str, object]:
    """A pair as JSON: who, how similar, where, and whether it is flagged."""
    return {
        "a": pair.a,
        "b": pair.b,
        "kind": pair.kind,
        "score": round(pair.score, 4),
        "share_a": round(pair.share_a, 4),
        "share_b": round(pair.share_b, 4),
        "overlap": pair.overlap,
        "structure": round(pair.structure, 4),
        "shared_shapes": pair.shared_shapes,
        "in_reference": round(pair.in_reference, 4),
        # False past --detail: the score counts shared fingerprints, no regions were located
        "located": bool(pair.overlap),
        "flagged": pair.flagged(settings),
        "cells": sorted({r.cell for r in pair.regions_a} | {r.cell for r in pair.regions_b}),
        "regions_a": [region_record(r) for r in pair.regions_a],
        "regions_b": [region_record(r) for r in pair.regions_b],
    }


def segments(text: str, regions: tuple[Region, ...]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, shared) runs, for highlighting the shared code."""
    pieces, position = [], 0
    for region in sorted(regions, key=lambda r: r.start):
        start = max(region.start, position)
        if start > position:
            pieces.append((text[position:start], False))
        if region.end > start:
            pieces.append((text[start : region.end], True))
        position = max(position, region.end)
    pieces.append((text[position:], False))
    return [(piece, shared) for piece, shared in pieces if piece]


@cache
def environment() -> jinja2.Environment:
    """Templates with autoescaping on: student ids and code are escaped everywhere."""
    return page_environment("autograder.grading.pipeline.similarity")


def write_results(
    out_dir: Path,
    assignment: str,
    pairs: list[Pair],
    documents: dict[str, Document],
    skipped: list[Skipped],
    settings: Settings,
) -> tuple[Path, Path]:
    """Write ``pairs.json`` and ``report.html`` into ``out_dir``; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    records = [pair_record(pair, settings) for pair in pairs]
    payload = {
        "assignment": assignment,
        "settings": asdict(settings),
        "compared": sorted(a for a, d in documents.items() if d.origin == "cohort"),
        "skipped": [{"student": s.author, "reason": s.reason} for s in skipped],
        "pairs": records,
    }
    json_path = out_dir / PAIRS_NAME
    json_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    shown = [
        {
            "record": record,
            "left": segments(documents[pair.a].text, pair.regions_a),
            "right": segments(documents[pair.b].text, pair.regions_b),
        }
        for pair, record in zip(pairs[: settings.top], records, strict=False)
    ]
    page = (
        environment()
        .get_template("similarity.html")
        .render(
            assignment=assignment,
            settings=settings,
            flagged=[r for r in records if r["flagged"]],
            shown=shown,
            skipped=payload["skipped"],
            compared=len(payload["compared"]),
        )
    )
    html_path = out_dir / PAGE_NAME
    html_path.write_text(page, encoding="utf-8")
    return json_path, html_path
