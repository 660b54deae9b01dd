"""A LlamaIndex retriever over a dmar server.

    from dmar_client.llama_index import DmarRetriever
    retriever = DmarRetriever(base_url="http://127.0.0.1:8080", k=5)
    nodes = retriever.retrieve("Which films did Christopher Nolan direct?")

Each NodeWithScore holds a TextNode (id: dmar's document id) scored with
dmar's fused score; its metadata is dmar_client.doc_metadata. Only the title
and the paths are shown to a language model; nothing is embedded again.
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


class DmarRetriever(BaseRetriever):
    """Retrieves dmar's top k documents for a query as NodeWithScore."""

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: Optional[str] = None, k: int = 5,
                 method: Optional[str] = None, filter: Optional[Dict[str, Any]] = None,
                 options: Optional[Dict[str, Any]] = None, timeout: float = 60.0,
                 callback_manager: Optional[CallbackManager] = None) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.k = k
        self.method = method
        self.filter = filter
        self.options = dict(options or {})
        self.timeout = timeout
        super().__init__(callback_manager=callback_manager)

    def _nodes(self, res: RetrieveResponse) -> List[NodeWithScore]:
        out = []
        for d in res.results:
            md = doc_metadata(d, res)
            hidden = [k for k in md if k not in _LLM_SHOWN]
            node = TextNode(id_=d.id, text=d.text, metadata=md, excluded_llm_metadata_keys=hidden,
                            excluded_embed_metadata_keys=list(md))
            out.append(NodeWithScore(node=node, score=d.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        with Client(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._nodes(c.retrieve(query_bundle.query_str, k=self.k, method=self.method, filter=self.filter, **self.options))

    async def _aretrieve(self, query_bundle: QueryBundle) -> List[NodeWithScore]:
        async with AsyncClient(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._nodes(await c.retrieve(query_bundle.query_str, k=self.k, method=self.method, filter=self.filter, **self.options))
