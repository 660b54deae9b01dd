"""Sync and async clients for dmar's REST API."""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import httpx

from .errors import ProtocolError, error_for
from .models import (AnswerDelta, AnswerResponse, DeleteDocumentsResponse, LinkResponse, PutDocumentsResponse,
                     RetrieveResponse, StoredDocument, Subgraph)

DEFAULT_URL = "http://127.0.0.1:8080"

#: A streamed answer's items: AnswerDelta pieces as the generator writes them,
#: then the final AnswerResponse (with its retrieval, from the stream's first event).
StreamItem = Union[AnswerDelta, AnswerResponse]

Document = Mapping[str, Any]


def _retrieve_body(query: str, k: Optional[int], method: Optional[str], filter: Optional[Mapping[str, Any]],
                   options: Mapping[str, Any]) -> Dict[str, Any]:
    body: Dict[str, Any] = {"query": query}
    if k is not None:
        body["k"] = k
    if method is not None:
        body["method"] = method
    if filter is not None:
        body["filter"] = dict(filter)
    body.update(options)
    return body


def _subgraph_params(hops: Optional[int], limit: Optional[int], hub_degree: Optional[int]) -> Dict[str, int]:
    return {k: v for k, v in (("hops", hops), ("limit", limit), ("hub_degree", hub_degree)) if v is not None}


def _headers(api_key: Optional[str]) -> Dict[str, str]:
    h = {"Accept": "application/json", "User-Agent": "dmar-client-python"}
    if api_key:
        h["Authorization"] = f"Bearer {api_key}"
    return h


def _raise_for(resp: httpx.Response) -> None:
    if resp.status_code < 400:
        return
    try:
        body = resp.json()
    except ValueError:
        body = None
    raise error_for(resp.status_code, body, resp.headers.get("X-Request-ID", ""), resp.headers.get("Retry-After"))


def _path_id(doc_id: str) -> str:
    from urllib.parse import quote
    return quote(doc_id, safe="")


class _Events:
    """Server-sent events from lines: (event, data) pairs."""

    def __init__(self) -> None:
        self.event = ""
        self.data: List[str] = []

    def feed(self, line: str) -> Optional[Tuple[str, str]]:
        if line.startswith("event:"):
            self.event = line[6:].strip()
        elif line.startswith("data:"):
            self.data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
        elif line == "" and self.event:
            out = (self.event, "\n".join(self.data))
            self.event, self.data = "", []
            return out
        return None


class _Stream:
    """The answer stream's state: the retrieval, then deltas, then the answer."""

    def __init__(self, status: int, request_id: str) -> None:
        self.retrieval: Optional[RetrieveResponse] = None
        self.status = status
        self.request_id = request_id

    def item(self, event: str, data: str) -> Optional[StreamItem]:
        value = json.loads(data)
        if event == "retrieval":
            self.retrieval = RetrieveResponse.model_validate(value)
        elif event == "delta":
            return AnswerDelta.model_validate(value)
        elif event == "answer":
            ans = AnswerResponse.model_validate(value)
            ans.retrieval = self.retrieval
            return ans
        elif event == "error":
            raise error_for(self.status, value, self.request_id)
        return None


def _docs(documents: Iterable[Document]) -> Dict[str, Any]:
    return {"documents": [dict(d) for d in documents]}


class Client:
    """A dmar server's REST API, synchronously.

    >>> c = Client("http://127.0.0.1:8080")
    >>> r = c.retrieve("Which films did Christopher Nolan direct?", k=5)
    >>> [d.title for d in r.results]

    Options the server takes (see /openapi.json) go as keyword arguments; an
    error answer raises a DmarError subclass naming the field.
    """

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: Optional[str] = None, timeout: float = 60.0,
                 http_client: Optional[httpx.Client] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = _headers(api_key)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        resp = self._http.request(method, self.base_url + path, json=body, params=params, headers=self._headers)
        _raise_for(resp)
        return resp.json()

    def retrieve(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
                 filter: Optional[Mapping[str, Any]] = None, **options: Any) -> RetrieveResponse:
        """POST /v1/retrieve: the ranked documents, with why each was found."""
        return RetrieveResponse.model_validate(self._request("POST", "/v1/retrieve", _retrieve_body(query, k, method, filter, options)))

    def answer(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
               filter: Optional[Mapping[str, Any]] = None, **options: Any) -> AnswerResponse:
        """POST /v1/answer: a short answer citing the documents, and the retrieval."""
        return AnswerResponse.model_validate(self._request("POST", "/v1/answer", _retrieve_body(query, k, method, filter, options)))

    def answer_stream(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
                      filter: Optional[Mapping[str, Any]] = None, **options: Any) -> Iterator[StreamItem]:
        """POST /v1/answer with "stream": true: AnswerDelta pieces, then the AnswerResponse."""
        body = _retrieve_body(query, k, method, filter, options)
        body["stream"] = True
        headers = dict(self._headers, Accept="text/event-stream")
        with self._http.stream("POST", self.base_url + "/v1/answer", json=body, headers=headers) as resp:
            if resp.status_code >= 400:
                resp.read()
                _raise_for(resp)
            st, ev = _Stream(resp.status_code, resp.headers.get("X-Request-ID", "")), _Events()
            for line in resp.iter_lines():
                got = ev.feed(line)
                if got:
                    item = st.item(*got)
                    if item is not None:
                        yield item
                        if isinstance(item, AnswerResponse):
                            return
        raise ProtocolError(200, "protocol", "the answer stream ended without an answer")

    def link(self, text: str) -> LinkResponse:
        """POST /v1/link: the knowledge-graph entities a text mentions."""
        return LinkResponse.model_validate(self._request("POST", "/v1/link", {"text": text}))

    def subgraph(self, qid: str, *, hops: Optional[int] = None, limit: Optional[int] = None,
                 hub_degree: Optional[int] = None) -> Subgraph:
        """GET /v1/entities/{qid}/subgraph: an entity's neighbourhood."""
        return Subgraph.model_validate(self._request("GET", f"/v1/entities/{_path_id(qid)}/subgraph", params=_subgraph_params(hops, limit, hub_degree)))

    def get_document(self, doc_id: str) -> StoredDocument:
        """GET /v1/documents/{id}."""
        return StoredDocument.model_validate(self._request("GET", f"/v1/documents/{_path_id(doc_id)}"))

    def put_documents(self, documents: Iterable[Document]) -> PutDocumentsResponse:
        """PUT /v1/documents: add or replace ({"id", "title", "text", "metadata"?} each); see rejected."""
        return PutDocumentsResponse.model_validate(self._request("PUT", "/v1/documents", _docs(documents)))

    def delete_documents(self, ids: Iterable[str]) -> DeleteDocumentsResponse:
        """POST /v1/documents/delete: all or nothing."""
        return DeleteDocumentsResponse.model_validate(self._request("POST", "/v1/documents/delete", {"ids": list(ids)}))

    def health(self) -> Dict[str, Any]:
        return self._request("GET", "/healthz")

    def ready(self) -> Dict[str, Any]:
        return self._request("GET", "/readyz")


class AsyncClient:
    """A dmar server's REST API, with asyncio: the methods of Client, awaited."""

    def __init__(self, base_url: str = DEFAULT_URL, *, api_key: Optional[str] = None, timeout: float = 60.0,
                 http_client: Optional[httpx.AsyncClient] = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self._headers = _headers(api_key)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _request(self, method: str, path: str, body: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        resp = await self._http.request(method, self.base_url + path, json=body, params=params, headers=self._headers)
        _raise_for(resp)
        return resp.json()

    async def retrieve(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
                       filter: Optional[Mapping[str, Any]] = None, **options: Any) -> RetrieveResponse:
        return RetrieveResponse.model_validate(await self._request("POST", "/v1/retrieve", _retrieve_body(query, k, method, filter, options)))

    async def answer(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
                     filter: Optional[Mapping[str, Any]] = None, **options: Any) -> AnswerResponse:
        return AnswerResponse.model_validate(await self._request("POST", "/v1/answer", _retrieve_body(query, k, method, filter, options)))

    async def answer_stream(self, query: str, *, k: Optional[int] = None, method: Optional[str] = None,
                            filter: Optional[Mapping[str, Any]] = None, **options: Any) -> AsyncIterator[StreamItem]:
        body = _retrieve_body(query, k, method, filter, options)
        body["stream"] = True
        headers = dict(self._headers, Accept="text/event-stream")
        async with self._http.stream("POST", self.base_url + "/v1/answer", json=body, headers=headers) as resp:
            if resp.status_code >= 400:
                await resp.aread()
                _raise_for(resp)
            st, ev = _Stream(resp.status_code, resp.headers.get("X-Request-ID", "")), _Events()
            async for line in resp.aiter_lines():
                got = ev.feed(line)
                if got:
                    item = st.item(*got)
                    if item is not None:
                        yield item
                        if isinstance(item, AnswerResponse):
                            return
        raise ProtocolError(200, "protocol", "the answer stream ended without an answer")

    async def link(self, text: str) -> LinkResponse:
        return LinkResponse.model_validate(await self._request("POST", "/v1/link", {"text": text}))

    async def subgraph(self, qid: str, *, hops: Optional[int] = None, limit: Optional[int] = None,
                       hub_degree: Optional[int] = None) -> Subgraph:
        return Subgraph.model_validate(await self._request("GET", f"/v1/entities/{_path_id(qid)}/subgraph", params=_subgraph_params(hops, limit, hub_degree)))

    async def get_document(self, doc_id: str) -> StoredDocument:
        return StoredDocument.model_validate(await self._request("GET", f"/v1/documents/{_path_id(doc_id)}"))

    async def put_documents(self, documents: Iterable[Document]) -> PutDocumentsResponse:
        return PutDocumentsResponse.model_validate(await self._request("PUT", "/v1/documents", _docs(documents)))

    async def delete_documents(self, ids: Iterable[str]) -> DeleteDocumentsResponse:
        return DeleteDocumentsResponse.model_validate(await self._request("POST", "/v1/documents/delete", {"ids": list(ids)}))

    async def health(self) -> Dict[str, Any]:
        return await self._request("GET", "/healthz")

    async def ready(self) -> Dict[str, Any]:
        return await self._request("GET", "/readyz")
