"""The package's models agree with the server's OpenAPI document: every field
they declare is a property of its schema, and the properties they do not
declare (a newer server's) reach the caller anyway."""

import httpx

from dmar_client import Client, doc_metadata
from dmar_client.models import SPEC_SCHEMAS

from conftest import QUESTION


def test_models_agree_with_the_spec(url, key):
    spec = httpx.get(url + "/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for name, model in SPEC_SCHEMAS.items():
        declared = {f.alias or n for n, f in model.model_fields.items()}
        assert declared <= set(schemas[name]["properties"]), (name, declared - set(schemas[name]["properties"]))


def test_undeclared_fields_pass_through(url, key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    raw = httpx.post(url + "/v1/retrieve", json={"query": QUESTION, "k": 3}, headers=headers, timeout=60).json()
    with Client(url, api_key=key) as c:
        r = c.retrieve(QUESTION, k=3)
    for got, sent in zip(r.results, raw["results"]):
        md = doc_metadata(got, r)
        assert set(sent["breakdown"]) - {"paths"} <= set(md["breakdown"]), set(sent["breakdown"]) - set(md["breakdown"])
        for k in set(sent) - {"id", "title", "text", "rank", "score", "breakdown", "entities"}:
            assert md[k] == sent[k], k
