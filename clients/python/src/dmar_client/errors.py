"""dmar's error envelope, {"error": {"code", "message", "field"}}, as exceptions."""

from __future__ import annotations

from typing import Dict, Optional, Type


class DmarError(Exception):
    """An error answer of a dmar server: the HTTP status, the code, the
    message and the request field that was wrong (empty when none was)."""

    def __init__(self, status: int, code: str, message: str, field: str = "",
                 request_id: str = "", retry_after: Optional[float] = None) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.request_id = request_id
        self.retry_after = retry_after
        text = f"{status} {code}: {message}"
        if field:
            text += f" (field: {field})"
        super().__init__(text)


class InvalidArgument(DmarError):
    """400: malformed JSON, an unknown key, a value out of range."""


class Unauthorized(DmarError):
    """401: the API key is missing or unknown."""


class Forbidden(DmarError):
    """403: the key is read-only for a write, or the Host is not answered."""


class NotFound(DmarError):
    """404: no such entity, document or route."""


class MethodNotAllowed(DmarError):
    """405."""


class PayloadTooLarge(DmarError):
    """413: a query, text, body or batch over its limit."""


class UnsupportedMediaType(DmarError):
    """415."""


class Unprocessable(DmarError):
    """422: options that contradict each other, or a response over the size limit."""


class RateLimited(DmarError):
    """429: see retry_after."""


class InternalError(DmarError):
    """500."""


class Unavailable(DmarError):
    """503: a backend or the generator is unavailable; see retry_after."""


class ProtocolError(DmarError):
    """An answer that is not dmar's (no error envelope, or a broken stream)."""


_BY_CODE: Dict[str, Type[DmarError]] = {
    "invalid_argument": InvalidArgument, "unauthorized": Unauthorized, "forbidden": Forbidden,
    "not_found": NotFound, "method_not_allowed": MethodNotAllowed, "payload_too_large": PayloadTooLarge,
    "unsupported_media_type": UnsupportedMediaType, "unprocessable": Unprocessable,
    "rate_limited": RateLimited, "internal": InternalError, "unavailable": Unavailable,
}


def error_for(status: int, body: object, request_id: str = "", retry_after: Optional[str] = None) -> DmarError:
    """The exception for an error answer: by the envelope's code, else by status."""
    after: Optional[float] = None
    if retry_after:
        try:
            after = float(retry_after)
        except ValueError:
            after = None
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict) and isinstance(detail.get("code"), str):
        cls = _BY_CODE.get(detail["code"], DmarError)
        return cls(status, detail["code"], str(detail.get("message", "")), str(detail.get("field", "") or ""), request_id, after)
    return ProtocolError(status, "protocol", f"HTTP {status} without dmar's error envelope", "", request_id, after)
