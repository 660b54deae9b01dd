"""A LlamaIndex retriever over a dmar server.

    from dmar_client.llama_index import DmarRetriever
    retriever = DmarRetriever(base_url="http://127.0.0.1:8080", similarity_top_k=5)
    nodes = retriever.retrieve("Which films did Christopher Nolan direct?")

Each NodeWithScore holds a TextNode (id: dmar's document id); its metadata is
dmar_client.doc_metadata. Only the title and the paths are shown to a
language model; nothing is embedded again.

What a score is: by default (score="fused") dmar's fused score, the one its
ranking is by. It is not bounded (about 6 for the best document of the
default method) and not comparable across queries, so a fixed
SimilarityPostprocessor cutoff means nothing with it; documents that
title_links placed after the one naming them share its score, and the rank
decides. To keep fewer documents, cut by rank: similarity_top_k. To cut by
relevance, use score="relevance": the node's score is then the semantic
cosine of the question and the document (-1 to 1, the same scale for every
query), which metadata["relevance"] always holds; the order stays dmar's.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from .client import DEFAULT_URL, AsyncClient, Client
from .metadata import doc_metadata
from .models import RetrieveResponse

# What a language model reads of the metadata: the title and the paths.
_LLM_SHOWN = ("title", "paths")
_SCORES = ("fused", "relevance")
DEFAULT_TOP_K = 5


def _top_k(similarity_top_k: Optional[int], k: Optional[int]) -> int:
    if similarity_top_k is not None and k is not None and similarity_top_k != k:
        raise ValueError(f"similarity_top_k={similarity_top_k!r} and k={k!r} both say how many documents to return: give one")
    n = similarity_top_k if similarity_top_k is not None else k if k is not None else DEFAULT_TOP_K
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        name = "similarity_top_k" if similarity_top_k is not None else "k"
        raise ValueError(f"{name} must be a whole number of documents, at least 1; got {n!r}")
    return n


class DmarRetriever(BaseRetriever):
    """Retrieves dmar's top similarity_top_k documents for a query as NodeWithScore."""

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: Optional[str] = None,
                 similarity_top_k: Optional[int] = None, k: Optional[int] = None,
                 method: Optional[str] = None, filter: Optional[Dict[str, Any]] = None,
                 options: Optional[Dict[str, Any]] = None, score: str = "fused", timeout: float = 60.0,
                 callback_manager: Optional[CallbackManager] = None) -> None:
        self.similarity_top_k = _top_k(similarity_top_k, k)
        options = dict(options or {})
        for name in ("query", "k", "similarity_top_k", "method", "filter"):
            if name in options:
                raise ValueError(f"options['{name}'] is a request field with its own argument: give it as {name}=...")
        if score not in _SCORES:
            raise ValueError(f"score must be one of {', '.join(_SCORES)}; got {score!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
        self.base_url = base_url
        self.api_key = api_key
        self.method = method
        self.filter = filter
        self.options = options
        self.score = score
        self.timeout = timeout
        super().__init__(callback_manager=callback_manager)

    @property
    def k(self) -> int:
        """similarity_top_k, by its dmar name."""
        return self.similarity_top_k

    def _nodes(self, res: RetrieveResponse) -> List[NodeWithScore]:
        out = []
        for d in res.results:
            md = doc_metadata(d, res)
            hidden = [k for k in md if k not in _LLM_SHOWN]
            node = TextNode(id_=d.id, text=d.text, metadata=md, excluded_llm_metadata_keys=hidden,
                            excluded_embed_metadata_keys=list(md))
            out.append(NodeWithScore(node=node, score=md["relevance"] if self.score == "relevance" else d.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        with Client(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._nodes(c.retrieve(query_bundle.query_str, k=self.similarity_top_k, method=self.method,
                                          filter=self.filter, **self.options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        async with AsyncClient(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._nodes(await c.retrieve(query_bundle.query_str, k=self.similarity_top_k, method=self.method,
                                                filter=self.filter, **self.options))
