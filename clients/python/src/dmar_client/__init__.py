"""dmar_client: a typed client for dmar, knowledge-graph-aware retrieval.

Client and AsyncClient call a dmar server's REST API; dmar_client.langchain
and dmar_client.llama_index hold retrievers for those frameworks.
"""

from .client import DEFAULT_URL, AsyncClient, Client, StreamItem
from .errors import (ConnectionFailed, DmarError, EncodingError, Forbidden, InternalError, InvalidArgument,
                     MethodNotAllowed, NotFound, PayloadTooLarge, ProtocolError, RateLimited, ServerError, TimedOut,
                     Unauthorized, Unavailable, UnsupportedMediaType, Unprocessable)
from .models import (Anchor, AnswerDelta, AnswerResponse, Breakdown, DeleteDocumentsResponse, Doc, Edge, LinkedEntity,
                     LinkResponse, NamedPath, Node, PutDocumentsResponse, QueryEntity, RejectedDocument,
                     RetrieveResponse, StoredDocument, Subgraph)
from .metadata import doc_metadata

__all__ = [
    "DEFAULT_URL", "AsyncClient", "Client", "StreamItem", "DmarError", "ConnectionFailed", "TimedOut", "EncodingError",
    "ServerError", "Forbidden", "InternalError", "InvalidArgument",
    "MethodNotAllowed", "NotFound", "PayloadTooLarge", "ProtocolError", "RateLimited", "Unauthorized", "Unavailable",
    "UnsupportedMediaType", "Unprocessable", "Anchor", "AnswerDelta", "AnswerResponse", "Breakdown",
    "DeleteDocumentsResponse", "Doc", "Edge", "LinkedEntity", "LinkResponse", "NamedPath", "Node",
    "PutDocumentsResponse", "QueryEntity", "RejectedDocument", "RetrieveResponse", "StoredDocument", "Subgraph",
    "doc_metadata",
]
