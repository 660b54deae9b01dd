"""The client's errors are its own (dmar_client.DmarError and its kinds), each
naming the server, and the timeout or the field where one applies; sync and
async alike. Only the last tests need a dmar serve (DMAR_URL)."""

import asyncio
import http.server
import socket
import threading

import pytest

import dmar_client
from dmar_client import AsyncClient, Client

from conftest import QUESTION


def closed_port_url() -> str:
    """A loopback URL nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def silent_url():
    """A server that accepts connections and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()


@pytest.fixture
def not_dmar_url():
    """An HTTP server that is not dmar: every answer is a 502 page."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(502)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>Bad Gateway</html>")

        def log_message(self, *args):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def sync_and_async(url, call, **kw):
    """The error call raises with Client, then with AsyncClient."""
    errors = []
    with Client(url, **kw) as c:
        try:
            call(c)
        except Exception as e:  # noqa: BLE001 - the test inspects it
            errors.append(e)

    async def run():
        async with AsyncClient(url, **kw) as c:
            try:
                await call(c)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
    asyncio.run(run())
    assert len(errors) == 2, errors
    return errors


def test_connection_failed_names_the_server():
    url = closed_port_url()
    for e in sync_and_async(url, lambda c: c.retrieve(QUESTION)):
        assert isinstance(e, dmar_client.ConnectionFailed) and isinstance(e, dmar_client.DmarError)
        assert isinstance(e, ConnectionError)
        assert e.base_url == url and url in str(e) and "/v1/retrieve" in str(e)
        assert e.status == 0 and e.code == "connection"


def test_timeout_names_the_server_and_the_timeout(silent_url):
    for e in sync_and_async(silent_url, lambda c: c.link("Inception"), timeout=0.5):
        assert isinstance(e, dmar_client.TimedOut) and isinstance(e, TimeoutError)
        assert e.timeout == 0.5 and e.base_url == silent_url
        assert silent_url in str(e) and "0.5 s" in str(e) and "timeout=" in str(e)


def test_encoding_error_names_the_field():
    # Nothing is sent: the server need not exist.
    url = closed_port_url()
    for e in sync_and_async(url, lambda c: c.retrieve("Incep\ud800tion")):
        assert isinstance(e, dmar_client.EncodingError) and isinstance(e, ValueError)
        assert e.field == "query" and "lone surrogate" in str(e) and "position 5" in str(e)
    for e in sync_and_async(url, lambda c: c.retrieve(QUESTION, filter={"ids": ["ok", "b\udc80d"]})):
        assert isinstance(e, dmar_client.EncodingError) and e.field == "filter.ids[1]"
    for e in sync_and_async(url, lambda c: c.get_document("a\ud800")):
        assert isinstance(e, dmar_client.EncodingError) and e.field == "id"


def test_not_dmar_is_a_protocol_error(not_dmar_url):
    for e in sync_and_async(not_dmar_url, lambda c: c.link("Inception")):
        assert isinstance(e, dmar_client.ProtocolError) and isinstance(e, dmar_client.ServerError)
        assert e.status == 502 and not_dmar_url in str(e)


def test_server_error_names_field_and_server(url, key):
    for e in sync_and_async(url, lambda c: c.retrieve(QUESTION, k=500), api_key=key):
        assert isinstance(e, dmar_client.InvalidArgument) and isinstance(e, dmar_client.ServerError)
        assert isinstance(e, dmar_client.DmarError)
        assert e.status == 400 and e.field == "k" and e.base_url == url.rstrip("/")


def test_oversized_body_names_limit_and_field(url, key):
    with Client(url, api_key=key) as c, pytest.raises(dmar_client.PayloadTooLarge) as e:
        c.retrieve(QUESTION, filter={"ids": ["x" * 70_000]})
    assert e.value.field == "filter.ids[0]" and "65536" in e.value.message


def test_empty_filter_list_refused(url, key):
    with Client(url, api_key=key) as c, pytest.raises(dmar_client.InvalidArgument) as e:
        c.retrieve(QUESTION, filter={"ids": []})
    assert e.value.field == "filter.ids"
