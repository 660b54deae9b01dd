"""The client's errors: one hierarchy under DmarError.

    DmarError
      ConnectionFailed   (also a ConnectionError) the server could not be reached
      TimedOut           (also a TimeoutError)    no answer within the client's timeout
      EncodingError      (also a ValueError)      a value cannot be sent (a lone surrogate)
      ServerError                                 an error answer: dmar's {"error": {...}}
        InvalidArgument, Unauthorized, Forbidden, NotFound, MethodNotAllowed,
        PayloadTooLarge, UnsupportedMediaType, Unprocessable, RateLimited,
        InternalError, Unavailable, ProtocolError

Every error names the server (base_url) and, where one applies, the request
field (field) and the client's timeout (timeout, in seconds).
"""

from __future__ import annotations

from typing import Dict, Optional, Type


class DmarError(Exception):
    """Any error of dmar_client: status (0 when no HTTP answer came), code,
    message, the request field that was wrong (empty when none was), the
    server's base URL and the request id."""

    def __init__(self, status: int, code: str, message: str, field: str = "",
                 request_id: str = "", retry_after: Optional[float] = None, *,
                 base_url: str = "", timeout: Optional[float] = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id
        self.retry_after = retry_after
        self.base_url = base_url
        self.timeout = timeout
        text = f"{status} {code}: {message}" if status else f"{code}: {message}"
        if field:
            text += f" (field: {field})"
        super().__init__(text)


class ConnectionFailed(DmarError, ConnectionError):
    """The server could not be reached: refused, reset, or not a name that resolves."""


class TimedOut(DmarError, TimeoutError):
    """No answer within the client's timeout (see timeout; raise it, or ask for less)."""


class EncodingError(DmarError, ValueError):
    """A value the request would carry cannot be encoded (a lone surrogate is not UTF-8); see field."""


class ServerError(DmarError):
    """An error answer of the server: the HTTP status, dmar's code, message and field."""


class InvalidArgument(ServerError):
    """400: malformed JSON, an unknown key, a value out of range."""


class Unauthorized(ServerError):
    """401: the API key is missing or unknown."""


class Forbidden(ServerError):
    """403: the key is read-only for a write, or the Host is not answered."""


class NotFound(ServerError):
    """404: no such entity, document or route."""


class MethodNotAllowed(ServerError):
    """405."""


class PayloadTooLarge(ServerError):
    """413: a query, text, body or batch over its limit (the message names it)."""


class UnsupportedMediaType(ServerError):
    """415."""


class Unprocessable(ServerError):
    """422: options that contradict each other, or a response over the size limit."""


class RateLimited(ServerError):
    """429: see retry_after."""


class InternalError(ServerError):
    """500."""


class Unavailable(ServerError):
    """503: a backend or the generator is unavailable, or the request timed out on the server; see retry_after."""


class ProtocolError(ServerError):
    """An answer that is not dmar's (no error envelope, a broken stream, a body that is not JSON)."""


_BY_CODE: Dict[str, Type[ServerError]] = {
    "invalid_argument": InvalidArgument, "unauthorized": Unauthorized, "forbidden": Forbidden,
    "not_found": NotFound, "method_not_allowed": MethodNotAllowed, "payload_too_large": PayloadTooLarge,
    "unsupported_media_type": UnsupportedMediaType, "unprocessable": Unprocessable,
    "rate_limited": RateLimited, "internal": InternalError, "unavailable": Unavailable,
}


def error_for(status: int, body: object, request_id: str = "", retry_after: Optional[str] = None,
              *, base_url: str = "") -> ServerError:
    """The exception for an error answer: by the envelope's code, else by status."""
    after: Optional[float] = None
    if retry_after:
        try:
            after = float(retry_after)
        except ValueError:
            after = None
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict) and isinstance(detail.get("code"), str):
        cls = _BY_CODE.get(detail["code"], ServerError)
        return cls(status, detail["code"], str(detail.get("message", "")), str(detail.get("field", "") or ""),
                   request_id, after, base_url=base_url)
    return ProtocolError(status, "protocol", f"HTTP {status} from {base_url or 'the server'} without dmar's error envelope",
                         "", request_id, after, base_url=base_url)
