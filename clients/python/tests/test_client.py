import asyncio
import uuid

import pytest

import dmar_client
from dmar_client import AsyncClient, Client

from conftest import QUESTION

NOLAN_FILMS = {"Q25188", "Q46551", "Q166262", "Q163872", "Q189330"}  # Inception, The Prestige, Batman Begins, The Dark Knight (Rises)


def test_retrieve(url, key):
    with Client(url, api_key=key) as c:
        r = c.retrieve(QUESTION, k=5)
    assert [d.rank for d in r.results] == [1, 2, 3, 4, 5]
    assert "Q25188" in {d.id for d in r.results}, [d.title for d in r.results]
    assert len({d.id for d in r.results} & NOLAN_FILMS) >= 4
    assert any(e.qid == "Q25191" for e in r.query_entities)
    inception = next(d for d in r.results if d.id == "Q25188")
    assert any("Inception" in p.text and p.from_ == "Q25191" for p in inception.breakdown.paths)
    assert r.options["k"] == 5


def test_async_retrieve_and_link(url, key):
    async def run():
        async with AsyncClient(url, api_key=key) as c:
            return await c.retrieve(QUESTION, k=3), await c.link("Inception by Christopher Nolan")
    r, links = asyncio.run(run())
    assert len(r.results) == 3
    assert {"Q25188", "Q25191"} <= {m.qid for m in links.mentions}


def test_subgraph(url, key):
    with Client(url, api_key=key) as c:
        g = c.subgraph("Q25188", hops=1, limit=10)
        one = c.subgraph("Q25188", limit=1)
    assert g.root == "Q25188" and len(g.nodes) <= 10 and g.edges
    assert one.edges == [] and len(one.nodes) == 1


@pytest.mark.parametrize("call,cls,field", [
    (lambda c: c.retrieve("   "), dmar_client.InvalidArgument, "query"),
    (lambda c: c.retrieve(QUESTION, k=500), dmar_client.InvalidArgument, "k"),
    (lambda c: c.retrieve(QUESTION, no_such_option=1), dmar_client.InvalidArgument, "no_such_option"),
    (lambda c: c.retrieve("x" * 2001), dmar_client.PayloadTooLarge, "query"),
    (lambda c: c.subgraph("Inception"), dmar_client.InvalidArgument, "qid"),
    (lambda c: c.subgraph("Q25188", hub_degree=10**12), dmar_client.InvalidArgument, "hub_degree"),
    (lambda c: c.subgraph("Q999999999"), dmar_client.NotFound, ""),
    (lambda c: c.get_document("no-such-document"), dmar_client.NotFound, "id"),
])
def test_errors_name_the_field(url, key, call, cls, field):
    with Client(url, api_key=key) as c, pytest.raises(cls) as e:
        call(c)
    assert e.value.field == field
    assert e.value.message and e.value.status >= 400
    if field:
        assert f"(field: {field})" in str(e.value)


def test_documents(url, key):
    doc_id = "py-" + uuid.uuid4().hex[:8]
    with Client(url, api_key=key) as c:
        put = c.put_documents([{"id": doc_id, "title": "Quuxfilm", "text": "Quuxfilm is a 2031 film by Christopher Nolan.", "metadata": {"from": "pytest"}},
                               {"id": "", "text": "no id"}])
        assert put.created == 1 and [r.field for r in put.rejected] == ["documents[1].id"]
        got = c.get_document(doc_id)
        assert got.metadata == {"from": "pytest"} and any(e.qid == "Q25191" for e in got.entities)
        assert doc_id in {d.id for d in c.retrieve("Quuxfilm", k=3).results}
        assert c.delete_documents([doc_id]).deleted == 1
        with pytest.raises(dmar_client.NotFound):
            c.delete_documents([doc_id])


def test_answer(url, key, generator):
    with Client(url, api_key=key) as c:
        if not generator:
            with pytest.raises(dmar_client.Unavailable) as e:
                c.answer(QUESTION)
            assert "generator" in e.value.message
            return
        items = list(c.answer_stream(QUESTION, k=3))
        whole = c.answer(QUESTION, k=3)
    assert whole.answer and whole.retrieval and whole.retrieval.results
    final = items[-1]
    assert isinstance(final, dmar_client.AnswerResponse) and final.retrieval is not None
    assert all(isinstance(i, dmar_client.AnswerDelta) for i in items[:-1])
    assert set(final.citations) <= set(final.sources)
