"""LangChain's own standard tests for retrievers (langchain-tests), against
the dmar serve that DMAR_URL names."""

import os

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from dmar_client.langchain import DmarRetriever

from conftest import QUESTION

pytestmark = pytest.mark.skipif(not os.environ.get("DMAR_URL"), reason="DMAR_URL is not set: no dmar serve to test against")


class TestDmarRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type:
        return DmarRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"base_url": os.environ.get("DMAR_URL", ""), "api_key": os.environ.get("DMAR_API_KEY") or None}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION
