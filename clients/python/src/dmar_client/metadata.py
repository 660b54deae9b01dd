"""The metadata the retrievers give each document: what dmar said about it."""

from __future__ import annotations

from typing import Any, Dict

from .models import Doc, RetrieveResponse


def doc_metadata(doc: Doc, response: RetrieveResponse) -> Dict[str, Any]:
    """dmar's view of one result as plain JSON values: its id, title, rank and
    score, its relevance, the entities it mentions, the knowledge-graph paths
    to it (text and full), and the whole score breakdown as the server sent
    it (fields a newer server adds included), with the question's linked
    entities.

    score is dmar's fused score: the ranking is by it, but it is unbounded
    and not comparable across queries. relevance is the semantic cosine of
    the question and the document (breakdown.semantic, -1 to 1): bounded,
    and on one scale for every query, so a fixed cutoff means the same
    thing each time."""
    breakdown = doc.breakdown.model_dump(mode="json", by_alias=True)
    paths = breakdown.pop("paths", [])
    md: Dict[str, Any] = {
        "id": doc.id,
        "title": doc.title,
        "rank": doc.rank,
        "score": doc.score,
        "relevance": doc.breakdown.semantic,
        "entities": list(doc.entities),
        "paths": [p["text"] for p in paths],
        "path_details": paths,
        "breakdown": breakdown,
        "query_entities": [{"qid": e.qid, "label": e.label} for e in response.query_entities],
        "source": "dmar",
    }
    for key, value in (doc.model_extra or {}).items():
        md.setdefault(key, value)
    return md
