"""A LangChain retriever over a dmar server.

    from dmar_client.langchain import DmarRetriever
    retriever = DmarRetriever(base_url="http://127.0.0.1:8080", k=5)
    docs = retriever.invoke("Which films did Christopher Nolan direct?")

Each Document's page_content is the text; its metadata holds dmar's id,
title, rank, score, entities, knowledge-graph paths and score breakdown
(dmar_client.doc_metadata).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from .client import DEFAULT_URL, AsyncClient, Client
from .metadata import doc_metadata
from .models import RetrieveResponse


class DmarRetriever(BaseRetriever):
    """Retrieves dmar's top k documents for a query."""

    base_url: str = DEFAULT_URL
    """The dmar server, e.g. http://127.0.0.1:8080."""
    api_key: Optional[str] = None
    """An API key, when the server has keys configured."""
    k: int = 5
    """How many documents to return."""
    method: Optional[str] = None
    """dmar (the server's default) or paper."""
    filter: Optional[Dict[str, Any]] = None
    """{"ids": [...]} or {"any_entities": [QID, ...]}."""
    options: Dict[str, Any] = {}
    """Any other retrieval option of POST /v1/retrieve (see /openapi.json)."""
    timeout: float = 60.0

    def _documents(self, res: RetrieveResponse) -> List[Document]:
        return [Document(page_content=d.text, metadata=doc_metadata(d, res), id=d.id) for d in res.results]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> List[Document]:
        with Client(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._documents(c.retrieve(query, k=self.k, method=self.method, filter=self.filter, **self.options))

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun) -> List[Document]:
        async with AsyncClient(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._documents(await c.retrieve(query, k=self.k, method=self.method, filter=self.filter, **self.options))
