"""LangChain's and LlamaIndex's retrievers return dmar's top k, with its metadata."""

import asyncio

import pytest

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


def test_langchain_arguments(url, key):
    import pydantic

    from dmar_client.langchain import DmarRetriever

    # Unknown constructor arguments are refused, naming them: a misspelt
    # base_url must not quietly become the default server.
    for bad in ({"url": url}, {"top_k": 1}, {"search_kwargs": {"k": 1}}):
        with pytest.raises(pydantic.ValidationError) as e:
            DmarRetriever(base_url=url, api_key=key, **bad)
        assert next(iter(bad)) in str(e.value)
    for bad in ({"k": 0}, {"timeout": 0}):
        with pytest.raises(pydantic.ValidationError):
            DmarRetriever(base_url=url, api_key=key, **bad)
    # options must not hold a field that has its own argument.
    with pytest.raises(pydantic.ValidationError) as e:
        DmarRetriever(base_url=url, api_key=key, k=3, options={"k": 2})
    assert "options['k']" in str(e.value) and "k=3" in str(e.value)

    r = DmarRetriever(base_url=url, api_key=key, k=4)
    # invoke's arguments apply to that call: k, method, and any option.
    assert len(r.invoke(QUESTION, k=2)) == 2
    assert len(r.invoke(QUESTION, k=1, method="paper")) == 1
    assert len(asyncio.run(r.ainvoke(QUESTION, k=3))) == 3
    only = r.invoke(QUESTION, filter={"ids": ["Q25188", "Q46551"]})
    assert {d.id for d in only} == {"Q25188", "Q46551"}
    with pytest.raises(ValueError) as e:
        r.invoke(QUESTION, k=3, options={"k": 2})
    assert "options['k']" in str(e.value) and "k=3" in str(e.value)
    with pytest.raises(ValueError):
        r.invoke(QUESTION, k="2")
    # An option the server does not know is its refusal, naming it.
    import dmar_client
    with pytest.raises(dmar_client.InvalidArgument) as e:
        r.invoke(QUESTION, no_such_option=1)
    assert e.value.field == "no_such_option"


def test_llama_index_conventions(url, key):
    from llama_index.core.postprocessor import SimilarityPostprocessor

    from dmar_client.llama_index import DmarRetriever

    want = top(url, key, 5)
    nodes = DmarRetriever(base_url=url, api_key=key, similarity_top_k=5).retrieve(QUESTION)
    assert [n.node.node_id for n in nodes] == [d.id for d in want.results]
    # k is similarity_top_k by dmar's name; both, differing, are refused.
    assert len(DmarRetriever(base_url=url, api_key=key, k=2).retrieve(QUESTION)) == 2
    with pytest.raises(ValueError, match="similarity_top_k=3 and k=2"):
        DmarRetriever(base_url=url, api_key=key, similarity_top_k=3, k=2)
    for bad in (0, -1, "3", True, 2.5):
        with pytest.raises(ValueError, match="similarity_top_k"):
            DmarRetriever(base_url=url, api_key=key, similarity_top_k=bad)
    with pytest.raises(ValueError, match="options"):
        DmarRetriever(base_url=url, api_key=key, options={"k": 2})
    with pytest.raises(TypeError):
        DmarRetriever(base_url=url, api_key=key, top_k=2)
    # relevance is the bounded semantic cosine, in every node's metadata.
    rel = [n.node.metadata["relevance"] for n in nodes]
    assert all(-1.0 <= r <= 1.0 for r in rel), rel
    assert [d.breakdown.semantic for d in want.results] == rel
    assert max(n.score for n in nodes) > 1.0  # the fused score is not bounded
    # score="relevance": the nodes are scored by it, in dmar's order, so a
    # cutoff on one scale for every query works.
    by_rel = DmarRetriever(base_url=url, api_key=key, similarity_top_k=5, score="relevance").retrieve(QUESTION)
    assert [n.node.node_id for n in by_rel] == [n.node.node_id for n in nodes]
    assert [n.score for n in by_rel] == rel
    cut = sorted(rel)[2]
    kept = SimilarityPostprocessor(similarity_cutoff=cut).postprocess_nodes(by_rel)
    assert [n.node.node_id for n in kept] == [n.node.node_id for n in by_rel if n.score >= cut]
    assert 0 < len(kept) < len(by_rel)


def test_llama_index_engines(url, key):
    """The retriever in LlamaIndex's engines, as its docs use one (a mock LLM)."""
    from llama_index.core.chat_engine import ContextChatEngine
    from llama_index.core.llms.mock import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from dmar_client.llama_index import DmarRetriever

    r = DmarRetriever(base_url=url, api_key=key, similarity_top_k=3)
    engine = RetrieverQueryEngine.from_args(r, llm=MockLLM())
    res = engine.query(QUESTION)
    assert len(res.source_nodes) == 3 and "Q25188" in {n.node.node_id for n in res.source_nodes}
    ares = asyncio.run(engine.aquery(QUESTION))
    assert [n.node.node_id for n in ares.source_nodes] == [n.node.node_id for n in res.source_nodes]
    chat = ContextChatEngine.from_defaults(retriever=r, llm=MockLLM())
    reply = chat.chat(QUESTION)
    assert len(reply.source_nodes) == 3
