"""Sync and async clients for dmar's REST API."""

from __future__ import annotations

import contextlib
import json
from typing import Any, AsyncIterator, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

import httpx

from .errors import ConnectionFailed, DmarError, EncodingError, ProtocolError, TimedOut, error_for
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


def _raise_for(resp: httpx.Response, base_url: str) -> None:
    if resp.status_code < 400:
        return
    try:
        body = resp.json()
    except ValueError:
        body = None
    raise error_for(resp.status_code, body, resp.headers.get("X-Request-ID", ""), resp.headers.get("Retry-After"),
                    base_url=base_url)


def _json(resp: httpx.Response, base_url: str) -> Any:
    try:
        return resp.json()
    except ValueError as e:
        raise ProtocolError(resp.status_code, "protocol", f"the answer of {base_url} is not JSON: {e}",
                            request_id=resp.headers.get("X-Request-ID", ""), base_url=base_url) from None


def _unencodable(value: Any, path: str) -> Optional[Tuple[str, str]]:
    """The first string in value (keys included) that UTF-8 cannot encode: its path and the reason."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return path, f"{value[e.start:e.end]!r} at position {e.start} is a lone surrogate, not a character"
    elif isinstance(value, Mapping):
        for k, v in value.items():
            got = _unencodable(k, path) or _unencodable(v, f"{path}.{k}" if path else str(k))
            if got:
                return got
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            got = _unencodable(v, f"{path}[{i}]")
            if got:
                return got
    return None


def _encode(body: Any, base_url: str) -> bytes:
    """body as UTF-8 JSON; a value that cannot be sent raises EncodingError naming its field."""
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        field, why = _unencodable(body, "") or ("", "a string is not valid Unicode")
        raise EncodingError(0, "encoding", f"{field or 'the request'} cannot be sent as UTF-8: {why}", field,
                            base_url=base_url) from None
    except (TypeError, ValueError) as e:
        raise EncodingError(0, "encoding", f"the request cannot be sent as JSON: {e}", base_url=base_url) from None


def _path_id(value: str, field: str, base_url: str) -> str:
    from urllib.parse import quote
    try:
        return quote(value, safe="")
    except UnicodeEncodeError:
        _, why = _unencodable(value, field) or ("", "not valid Unicode")
        raise EncodingError(0, "encoding", f"{field} cannot be sent as UTF-8: {why}", field, base_url=base_url) from None


_TIMEOUT_PHASE = ((httpx.ConnectTimeout, "connecting"), (httpx.WriteTimeout, "sending the request"),
                  (httpx.PoolTimeout, "waiting for a free connection"), (httpx.ReadTimeout, "waiting for the answer"))


@contextlib.contextmanager
def _transport(base_url: str, timeout: Optional[float], method: str, path: str) -> Iterator[None]:
    """httpx's errors as the client's: TimedOut and ConnectionFailed, naming the server and the timeout."""
    try:
        yield
    except DmarError:
        raise
    except httpx.TimeoutException as e:
        phase = next((p for cls, p in _TIMEOUT_PHASE if isinstance(e, cls)), "waiting")
        limit = f"{timeout:g} s" if timeout is not None else "its timeout"
        raise TimedOut(0, "timeout", f"{method} {path}: no progress from dmar at {base_url} within the client's timeout of {limit} "
                       f"({phase}); pass a larger timeout= or ask for less", base_url=base_url, timeout=timeout) from e
    except (httpx.TransportError, httpx.InvalidURL) as e:
        cause = str(e) or type(e).__name__
        raise ConnectionFailed(0, "connection", f"{method} {path}: could not reach dmar at {base_url}: {cause} "
                               "(is dmar serve running there?)", base_url=base_url, timeout=timeout) from e


def _read_timeout(http: Union[httpx.Client, httpx.AsyncClient]) -> Optional[float]:
    return http.timeout.read


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

    def __init__(self, status: int, request_id: str, base_url: str) -> None:
        self.retrieval: Optional[RetrieveResponse] = None
        self.status = status
        self.request_id = request_id
        self.base_url = base_url

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
            raise error_for(self.status, value, self.request_id, base_url=self.base_url)
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
        self.timeout = _read_timeout(self._http)
        self._headers = _headers(api_key)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, body: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        headers, content = self._headers, None
        if body is not None:
            headers, content = dict(headers, **{"Content-Type": "application/json"}), _encode(body, self.base_url)
        with _transport(self.base_url, self.timeout, method, path):
            resp = self._http.request(method, self.base_url + path, content=content, params=params, headers=headers)
        _raise_for(resp, self.base_url)
        return _json(resp, self.base_url)

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
        content = _encode(body, self.base_url)
        headers = dict(self._headers, **{"Accept": "text/event-stream", "Content-Type": "application/json"})
        with _transport(self.base_url, self.timeout, "POST", "/v1/answer"), \
                self._http.stream("POST", self.base_url + "/v1/answer", content=content, headers=headers) as resp:
            if resp.status_code >= 400:
                resp.read()
                _raise_for(resp, self.base_url)
            st, ev = _Stream(resp.status_code, resp.headers.get("X-Request-ID", ""), self.base_url), _Events()
            for line in resp.iter_lines():
                got = ev.feed(line)
                if got:
                    item = st.item(*got)
                    if item is not None:
                        yield item
                        if isinstance(item, AnswerResponse):
                            return
        raise ProtocolError(200, "protocol", f"the answer stream of {self.base_url} ended without an answer", base_url=self.base_url)

    def link(self, text: str) -> LinkResponse:
        """POST /v1/link: the knowledge-graph entities a text mentions."""
        return LinkResponse.model_validate(self._request("POST", "/v1/link", {"text": text}))

    def subgraph(self, qid: str, *, hops: Optional[int] = None, limit: Optional[int] = None,
                 hub_degree: Optional[int] = None) -> Subgraph:
        """GET /v1/entities/{qid}/subgraph: an entity's neighbourhood."""
        return Subgraph.model_validate(self._request("GET", f"/v1/entities/{_path_id(qid, 'qid', self.base_url)}/subgraph", params=_subgraph_params(hops, limit, hub_degree)))

    def get_document(self, doc_id: str) -> StoredDocument:
        """GET /v1/documents/{id}."""
        return StoredDocument.model_validate(self._request("GET", f"/v1/documents/{_path_id(doc_id, 'id', self.base_url)}"))

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
        self.timeout = _read_timeout(self._http)
        self._headers = _headers(api_key)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _request(self, method: str, path: str, body: Any = None, params: Optional[Mapping[str, Any]] = None) -> Any:
        headers, content = self._headers, None
        if body is not None:
            headers, content = dict(headers, **{"Content-Type": "application/json"}), _encode(body, self.base_url)
        with _transport(self.base_url, self.timeout, method, path):
            resp = await self._http.request(method, self.base_url + path, content=content, params=params, headers=headers)
        _raise_for(resp, self.base_url)
        return _json(resp, self.base_url)

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
        content = _encode(body, self.base_url)
        headers = dict(self._headers, **{"Accept": "text/event-stream", "Content-Type": "application/json"})
        with _transport(self.base_url, self.timeout, "POST", "/v1/answer"):
            async with self._http.stream("POST", self.base_url + "/v1/answer", content=content, headers=headers) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    _raise_for(resp, self.base_url)
                st, ev = _Stream(resp.status_code, resp.headers.get("X-Request-ID", ""), self.base_url), _Events()
                async for line in resp.aiter_lines():
                    got = ev.feed(line)
                    if got:
                        item = st.item(*got)
                        if item is not None:
                            yield item
                            if isinstance(item, AnswerResponse):
                                return
        raise ProtocolError(200, "protocol", f"the answer stream of {self.base_url} ended without an answer", base_url=self.base_url)

    async def link(self, text: str) -> LinkResponse:
        return LinkResponse.model_validate(await self._request("POST", "/v1/link", {"text": text}))

    async def subgraph(self, qid: str, *, hops: Optional[int] = None, limit: Optional[int] = None,
                       hub_degree: Optional[int] = None) -> Subgraph:
        return Subgraph.model_validate(await self._request("GET", f"/v1/entities/{_path_id(qid, 'qid', self.base_url)}/subgraph", params=_subgraph_params(hops, limit, hub_degree)))

    async def get_document(self, doc_id: str) -> StoredDocument:
        return StoredDocument.model_validate(await self._request("GET", f"/v1/documents/{_path_id(doc_id, 'id', self.base_url)}"))

    async def put_documents(self, documents: Iterable[Document]) -> PutDocumentsResponse:
        return PutDocumentsResponse.model_validate(await self._request("PUT", "/v1/documents", _docs(documents)))

    async def delete_documents(self, ids: Iterable[str]) -> DeleteDocumentsResponse:
        return DeleteDocumentsResponse.model_validate(await self._request("POST", "/v1/documents/delete", {"ids": list(ids)}))

    async def health(self) -> Dict[str, Any]:
        return await self._request("GET", "/healthz")

    async def ready(self) -> Dict[str, Any]:
        return await self._request("GET", "/readyz")
