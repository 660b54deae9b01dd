"""dmar's MCP server as an agent's host sees it: the official Python mcp client,
over stdio (dmar mcp) and over streamable HTTP (POST /mcp on dmar serve).

Run by scripts/clients/run.sh, which starts dmar serve with two API keys and
sets: DMAR_URL, DMAR_BIN, DMAR_CONFIG (the keys), DMAR_MCP_ARGS (dmar mcp's
data flags), DMAR_READ_KEY and DMAR_WRITE_KEY.
"""

import asyncio
import os
import shlex
from contextlib import asynccontextmanager

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

QUESTION = "Which films did Christopher Nolan direct?"
NOLAN_FILMS = {"Q25188", "Q46551", "Q166262", "Q163872", "Q189330"}
READ_TOOLS = {"retrieve", "link", "subgraph", "get_document"}
WRITE_TOOLS = {"put_documents", "delete_documents"}


def env(name):
    v = os.environ.get(name)
    if not v:
        pytest.skip(f"{name} is not set (scripts/clients/run.sh sets it)")
    return v


@asynccontextmanager
async def over_http(key):
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        async with streamable_http_client(env("DMAR_URL") + "/mcp", http_client=http) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


@asynccontextmanager
async def over_stdio(key):
    params = StdioServerParameters(command=env("DMAR_BIN"), args=["mcp", *shlex.split(env("DMAR_MCP_ARGS"))],
                                   env={"DMAR_API_KEY": key, "DMAR_CONFIG": env("DMAR_CONFIG"), "HOME": os.environ.get("HOME", "/"),
                                        **{k: v for k, v in os.environ.items() if k == "DMAR_CACHE"}},
                                   cwd=os.environ.get("DMAR_REPO", os.getcwd()))
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            yield s


TRANSPORTS = {"http": over_http, "stdio": over_stdio}


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_lists_tools_by_key(transport):
    async def names(key):
        async with TRANSPORTS[transport](key) as s:
            return {t.name: t for t in (await s.list_tools()).tools}

    read = run(names(env("DMAR_READ_KEY")))
    write = run(names(env("DMAR_WRITE_KEY")))
    assert READ_TOOLS <= set(read) and not WRITE_TOOLS & set(read), sorted(read)
    assert READ_TOOLS | WRITE_TOOLS <= set(write), sorted(write)
    retrieve = read["retrieve"]
    assert retrieve.description and retrieve.output_schema
    q = retrieve.input_schema["properties"]["query"]
    assert q["type"] == "string" and q.get("description")
    assert retrieve.input_schema["properties"]["k"]["maximum"] == 200


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_retrieve_nolan(transport):
    async def go():
        async with TRANSPORTS[transport](env("DMAR_READ_KEY")) as s:
            return await s.call_tool("retrieve", {"query": QUESTION, "k": 5})

    res = run(go())
    assert not res.is_error, res.content
    out = res.structured_content
    ids = [r["id"] for r in out["results"]]
    assert "Q25188" in ids and len(set(ids) & NOLAN_FILMS) >= 4, [r["title"] for r in out["results"]]
    assert any(e["qid"] == "Q25191" for e in out["query_entities"])
    inception = next(r for r in out["results"] if r["id"] == "Q25188")
    assert inception["title"] == "Inception" and inception["score"] and inception["entities"]
    assert any(p["from"] == "Q25191" and "Inception" in p["text"] for p in inception["paths"]), inception["paths"]
    # Every film's result carries the path that supports it.
    for r in out["results"]:
        if r["id"] in NOLAN_FILMS:
            assert any(r["title"] in p["text"] for p in r["paths"]), (r["title"], r["paths"])


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_write_without_the_write_key_is_refused(transport):
    async def go():
        async with TRANSPORTS[transport](env("DMAR_READ_KEY")) as s:
            put = await s.call_tool("put_documents", {"documents": [{"id": "mcp-note", "text": "A note."}]})
            after = await s.call_tool("link", {"text": "Inception"})
            return put, after

    put, after = run(go())
    text = put.content[0].text
    assert put.is_error and "403" in text and "read-only" in text and "write permission" in text, text
    assert not after.is_error  # the session goes on


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_errors_are_tool_errors_with_dmars_message(transport):
    async def go():
        async with TRANSPORTS[transport](env("DMAR_WRITE_KEY")) as s:
            empty = await s.call_tool("retrieve", {"query": "  "})
            unknown = await s.call_tool("subgraph", {"qid": "Q999999999"})
            ok = await s.call_tool("subgraph", {"qid": "Q25188", "limit": 5})
            return empty, unknown, ok

    empty, unknown, ok = run(go())
    assert empty.is_error and "query: must not be empty" in empty.content[0].text
    assert unknown.is_error and "not in the knowledge graph" in unknown.content[0].text
    assert not ok.is_error and ok.structured_content["root"] == "Q25188"


def test_write_key_writes_over_http():
    async def go():
        async with over_http(env("DMAR_WRITE_KEY")) as s:
            put = await s.call_tool("put_documents", {"documents": [{"id": "mcp-zorb", "title": "Zorbfilm", "text": "Zorbfilm is a film by Christopher Nolan."}]})
            got = await s.call_tool("get_document", {"id": "mcp-zorb"})
            gone = await s.call_tool("delete_documents", {"ids": ["mcp-zorb"]})
            return put, got, gone

    put, got, gone = run(go())
    assert not put.is_error and put.structured_content["created"] + put.structured_content["updated"] == 1
    assert not got.is_error and any(e["qid"] == "Q25191" for e in got.structured_content["entities"])
    assert not gone.is_error and gone.structured_content["deleted"] == 1


def test_answer_with_a_generator():
    if not os.environ.get("DMAR_TEST_GENERATOR"):
        pytest.skip("no generator: dmar serve runs without --chat-url")

    async def go():
        async with over_http(env("DMAR_READ_KEY")) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            return names, await s.call_tool("answer", {"query": QUESTION, "k": 3})

    names, res = run(go())
    assert "answer" in names
    assert not res.is_error, res.content
    out = res.structured_content
    assert out["answer"] and out["results"] and set(out["citations"]) <= set(out["sources"])


def test_stdio_answers_malformed_lines_and_goes_on():
    """dmar mcp, as a host runs it: a line that is not JSON gets -32700, one
    that is not a JSON-RPC message -32600, and the session goes on."""
    import json
    import subprocess

    proc = subprocess.Popen([env("DMAR_BIN"), "mcp", *shlex.split(env("DMAR_MCP_ARGS"))],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={"DMAR_API_KEY": env("DMAR_READ_KEY"), "DMAR_CONFIG": env("DMAR_CONFIG"),
                                 "HOME": os.environ.get("HOME", "/"), **{k: v for k, v in os.environ.items() if k == "DMAR_CACHE"}},
                            cwd=os.environ.get("DMAR_REPO", os.getcwd()))
    try:
        def send(line):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()

        def read():
            line = proc.stdout.readline()
            assert line, f"dmar mcp ended (exit {proc.poll()})"
            return json.loads(line)

        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}}))
        assert "result" in read()
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for line, code in (("garbage", -32700), ("{}", -32600)):
            send(line)
            got = read()
            assert got["id"] is None and got["error"]["code"] == code, (line, got)
        send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "link", "arguments": {"text": "Inception"}}}))
        got = read()
        assert got["id"] == 2 and "Q25188" in json.dumps(got["result"]), got
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_http_batch_over_the_limit_is_refused():
    """A JSON-RPC batch over server.mcp_max_batch is refused before any of it runs."""
    import json
    import urllib.error
    import urllib.request

    batch = [{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(1, 2001)]
    req = urllib.request.Request(env("DMAR_URL") + "/mcp", data=json.dumps(batch).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": "Bearer " + env("DMAR_READ_KEY")})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    body = json.loads(e.value.read())
    assert e.value.code == 413 and body["error"]["field"] == "batch", body
    assert "2000 messages" in body["error"]["message"] and "server.mcp_max_batch" in body["error"]["message"]
