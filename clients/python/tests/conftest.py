"""The tests run against a real dmar serve: DMAR_URL names it (scripts/clients_test.sh
starts one over codexm-film). Without DMAR_URL they are skipped."""

import os

import pytest

QUESTION = "Which films did Christopher Nolan direct?"


@pytest.fixture(scope="session")
def url() -> str:
    u = os.environ.get("DMAR_URL")
    if not u:
        pytest.skip("DMAR_URL is not set: no dmar serve to test against")
    return u


@pytest.fixture(scope="session")
def key():
    """The API key to present (DMAR_API_KEY; None for a keyless server)."""
    return os.environ.get("DMAR_API_KEY") or None


@pytest.fixture(scope="session")
def generator() -> bool:
    """Whether the server has a generator (DMAR_CHAT_URL was given to it)."""
    return bool(os.environ.get("DMAR_TEST_GENERATOR"))
