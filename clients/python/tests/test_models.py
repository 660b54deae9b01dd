"""The package's models declare exactly the properties of the server's OpenAPI document."""

import httpx

from dmar_client.models import SPEC_SCHEMAS


def test_models_agree_with_the_spec(url, key):
    spec = httpx.get(url + "/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for name, model in SPEC_SCHEMAS.items():
        declared = {f.alias or n for n, f in model.model_fields.items()}
        assert declared == set(schemas[name]["properties"]), name
