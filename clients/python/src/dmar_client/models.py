"""dmar's response types, as its OpenAPI document (/openapi.json) declares them.

Every model keeps fields the server adds beyond these (extra="allow"), so a
newer server's fields reach the caller unchanged; tests hold the declared
fields equal to the document's properties.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class Weights(_Model):
    semantic: float = 0.0
    structural: float = 0.0


class GraphStep(_Model):
    from_: str = Field("", alias="from")
    pid: str = ""
    label: str = ""
    to: str = ""
    backward: bool = False
    relevance: float = 0.0


class GraphPath(_Model):
    path: str = ""
    steps: List[GraphStep] = []
    relevance: float = 0.0
    score: float = 0.0
    popularity: float = 0.0


class NamedPath(_Model):
    """A knowledge-graph path from a query entity to one of a document's entities."""

    from_: str = Field("", alias="from")
    from_label: str = ""
    from_kind: str = ""
    to: str = ""
    to_label: str = ""
    path: str = ""
    text: str = ""
    steps: List[GraphStep] = []
    relevance: float = 0.0


class Breakdown(_Model):
    """Why a document scored as it did."""

    semantic: float = 0.0
    structural: float = 0.0
    z_semantic: float = 0.0
    z_structural: float = 0.0
    gate: Weights = Weights()
    stage: str = ""
    search_score: float = 0.0
    explain: str = ""
    in_first_stage: bool = False
    anchor: bool = False
    source: str = ""
    graph: Optional[GraphPath] = None
    paths: List[NamedPath] = []


class Doc(_Model):
    """A retrieved document: rank 1 is the best."""

    id: str
    title: str = ""
    text: str = ""
    rank: int = 0
    score: float = 0.0
    breakdown: Breakdown = Breakdown()
    entities: List[str] = []


class Node(_Model):
    qid: str
    label: str = ""
    hop: int = 0
    hub: bool = False


class Edge(_Model):
    from_: str = Field(alias="from")
    to: str
    pid: str
    label: str = ""


class Subgraph(_Model):
    root: str
    nodes: List[Node] = []
    edges: List[Edge] = []
    truncated: bool = False


class Phi(_Model):
    qid: str
    label: str = ""
    phi: float = 0.0


class Anchor(Doc):
    snippet: str = ""
    phi: List[Phi] = []
    phi_exact: bool = False
    subgraphs: List[Subgraph] = []


class QueryEntity(_Model):
    qid: str
    label: str = ""
    surface: str = ""
    start: int = 0
    end: int = 0
    confidence: float = 0.0


class Fallback(_Model):
    name: str
    reason: str = ""


class Statement(_Model):
    cypher: str
    params: Dict[str, Any] = {}


class RetrieveResponse(_Model):
    query: str
    results: List[Doc] = []
    anchors: List[Anchor] = []
    query_entities: List[QueryEntity] = []
    query_subgraphs: List[Subgraph] = []
    reformulated_query: str = ""
    reformulator: str = ""
    fallbacks: List[Fallback] = []
    timings_ms: Dict[str, float] = {}
    options: Dict[str, Any] = {}
    neo4j: Optional[Statement] = None
    neo4j_paths: Optional[Statement] = None
    retrieval_id: str = ""


class LinkResponse(_Model):
    mentions: List[QueryEntity] = []


class LinkedEntity(_Model):
    qid: str
    label: str = ""


class StoredDocument(_Model):
    id: str
    title: str = ""
    text: str = ""
    metadata: Optional[Dict[str, Any]] = None
    entities: List[LinkedEntity] = []


class RejectedDocument(_Model):
    index: int
    id: str = ""
    field: str = ""
    code: str = ""
    reason: str = ""


class PutDocumentsResponse(_Model):
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    rejected: List[RejectedDocument] = []


class DeleteDocumentsResponse(_Model):
    deleted: int = 0


class AnswerResponse(_Model):
    answer: str
    citations: List[str] = []
    dropped_citations: List[str] = []
    sources: List[str] = []
    model: str = ""
    timings_ms: Dict[str, float] = {}
    retrieval: Optional[RetrieveResponse] = None


class AnswerDelta(_Model):
    text: str


class ErrorDetail(_Model):
    code: str
    message: str = ""
    field: str = ""


#: The OpenAPI schema each model is held equal to (tests/test_models.py).
SPEC_SCHEMAS = {
    "Weights": Weights, "GraphStep": GraphStep, "GraphPath": GraphPath, "NamedPath": NamedPath,
    "Breakdown": Breakdown, "Doc": Doc, "Node": Node, "Edge": Edge, "Subgraph": Subgraph, "Phi": Phi,
    "Anchor": Anchor, "QueryEntity": QueryEntity, "Fallback": Fallback, "Statement": Statement,
    "RetrieveResponse": RetrieveResponse, "LinkResponse": LinkResponse, "LinkedEntity": LinkedEntity,
    "StoredDocument": StoredDocument, "RejectedDocument": RejectedDocument,
    "PutDocumentsResponse": PutDocumentsResponse, "DeleteDocumentsResponse": DeleteDocumentsResponse,
    "AnswerResponse": AnswerResponse, "AnswerDelta": AnswerDelta, "ErrorDetail": ErrorDetail,
}
