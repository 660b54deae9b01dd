"""A LangChain retriever over a dmar server.

    from dmar_client.langchain import DmarRetriever
    retriever = DmarRetriever(base_url="http://127.0.0.1:8080", k=5)
    docs = retriever.invoke("Which films did Christopher Nolan direct?")
    fewer = retriever.invoke("Which films did Christopher Nolan direct?", k=2, method="paper")

Each Document's page_content is the text; its metadata holds dmar's id,
title, rank, score, entities, knowledge-graph paths and score breakdown
(dmar_client.doc_metadata). Arguments given to invoke (k, method, filter,
options, or any other retrieval option of POST /v1/retrieve) apply to that
call. An argument the retriever does not know is refused (a misspelt
base_url must not quietly become the default server).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, model_validator

from .client import DEFAULT_URL, AsyncClient, Client
from .metadata import doc_metadata
from .models import RetrieveResponse

# The request's fields that have their own argument, so options must not hold them.
_NAMED = ("query", "k", "method", "filter")


def _clash(options: Dict[str, Any], given: Dict[str, Any]) -> None:
    for name in _NAMED:
        if name in options:
            if name == "query":
                raise ValueError("options['query'] is not an option: the query is invoke's input")
            where = f" and {name}={given[name]!r}" if given.get(name) is not None else ""
            raise ValueError(f"options['{name}']{where} name the same request field: give it once, as {name}=...")


class DmarRetriever(BaseRetriever):
    """Retrieves dmar's top k documents for a query."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    base_url: str = DEFAULT_URL
    """The dmar server, e.g. http://127.0.0.1:8080."""
    api_key: Optional[str] = None
    """An API key, when the server has keys configured."""
    k: int = Field(5, ge=1)
    """How many documents to return (invoke's k overrides it for one call)."""
    method: Optional[str] = None
    """dmar (the server's default) or paper."""
    filter: Optional[Dict[str, Any]] = None
    """{"ids": [...]} or {"any_entities": [QID, ...]}."""
    options: Dict[str, Any] = Field(default_factory=dict)
    """Any other retrieval option of POST /v1/retrieve (see /openapi.json); not k, method or filter."""
    timeout: float = Field(60.0, gt=0)
    """Seconds to wait for the server (dmar_client.TimedOut past it)."""

    @model_validator(mode="after")
    def _options_apart(self) -> "DmarRetriever":
        _clash(self.options, {"k": self.k, "method": self.method, "filter": self.filter})
        return self

    def _request(self, kwargs: Dict[str, Any]) -> Tuple[int, Optional[str], Optional[Dict[str, Any]], Dict[str, Any]]:
        """This call's k, method, filter and options: invoke's arguments over the fields."""
        kw = dict(kwargs)
        extra = dict(kw.pop("options", None) or {})
        _clash(extra, kw)
        for name, value in kw.items():
            if name not in _NAMED and name in extra:
                raise ValueError(f"options['{name}'] and {name}={value!r} name the same request field: give it once")
        k = kw.pop("k", self.k)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a whole number of documents, at least 1; got {k!r}")
        method = kw.pop("method", self.method)
        flt = kw.pop("filter", self.filter)
        opts = {**self.options, **extra, **kw}
        return k, method, flt, opts

    def _documents(self, res: RetrieveResponse) -> List[Document]:
        return [Document(page_content=d.text, metadata=doc_metadata(d, res), id=d.id) for d in res.results]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any) -> List[Document]:
        k, method, flt, opts = self._request(kwargs)
        with Client(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._documents(c.retrieve(query, k=k, method=method, filter=flt, **opts))

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> List[Document]:
        k, method, flt, opts = self._request(kwargs)
        async with AsyncClient(self.base_url, api_key=self.api_key, timeout=self.timeout) as c:
            return self._documents(await c.retrieve(query, k=k, method=method, filter=flt, **opts))
