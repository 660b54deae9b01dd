"""LangChain's and LlamaIndex's retrievers return dmar's top k, with its metadata."""

import asyncio

from dmar_client import Client

from conftest import QUESTION


def top(url, key, k):
    with Client(url, api_key=key) as c:
        return c.retrieve(QUESTION, k=k)


def test_langchain(url, key):
    from langchain_core.retrievers import BaseRetriever

    from dmar_client.langchain import DmarRetriever

    want = top(url, key, 4)
    r = DmarRetriever(base_url=url, api_key=key, k=4)
    assert isinstance(r, BaseRetriever)
    docs = r.invoke(QUESTION)
    assert [d.metadata["id"] for d in docs] == [d.id for d in want.results]
    assert [d.page_content for d in docs] == [d.text for d in want.results]
    inception = next(d for d in docs if d.metadata["id"] == "Q25188")
    md = inception.metadata
    assert md["title"] == "Inception" and md["rank"] >= 1 and isinstance(md["score"], float)
    assert "Q25191" in md["entities"] or md["paths"], md
    assert any("Inception" in p for p in md["paths"])
    assert md["breakdown"]["stage"] and "paths" not in md["breakdown"]
    assert any(e["qid"] == "Q25191" for e in md["query_entities"])
    adocs = asyncio.run(r.ainvoke(QUESTION))
    assert [d.metadata["id"] for d in adocs] == [d.id for d in want.results]
    # The request options are fields.
    assert len(DmarRetriever(base_url=url, api_key=key, k=2, method="paper").invoke(QUESTION)) == 2


def test_llama_index(url, key):
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import MetadataMode, NodeWithScore

    from dmar_client.llama_index import DmarRetriever

    want = top(url, key, 4)
    r = DmarRetriever(base_url=url, api_key=key, k=4)
    assert isinstance(r, BaseRetriever)
    nodes = r.retrieve(QUESTION)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.node_id for n in nodes] == [d.id for d in want.results]
    assert [n.score for n in nodes] == [d.score for d in want.results]
    inception = next(n for n in nodes if n.node.node_id == "Q25188")
    assert any("Inception" in p for p in inception.node.metadata["paths"])
    llm_text = inception.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "Inception" in llm_text and "breakdown" not in llm_text
    anodes = asyncio.run(r.aretrieve(QUESTION))
    assert [n.node.node_id for n in anodes] == [d.id for d in want.results]
