"""Issue #21: the published schema's /mcp operation against the served ASGI application (the
MCP SDK behind config.asgi, which the in-process WSGI run of test_schemathesis.py cannot reach):
every built-in check but negative_data_rejection (JSON-RPC errors travel in a 200), a fixed seed,
zero failures. Together the two runs cover the whole schema."""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)

SEED = 20261221
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))
# A JSON-RPC message the schema allows may still name no method of MCP: a JSON-RPC error then.
ACCEPTED = ["2xx", "400", "401", "404"]


def _load_schema() -> schemathesis.BaseSchema:
    from config.wsgi import application

    raw = schemathesis.openapi.from_wsgi("/v1/openapi.json", application).raw_schema
    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"max-examples": EXAMPLES, "deterministic": True},
            "checks": {
                "positive_data_acceptance": {"expected-statuses": ACCEPTED},
                # JSON-RPC answers a message it cannot run (a wrong `params`, an unknown method)
                # with 200 and an error object, as the MCP transport specifies: not an HTTP 4xx.
                "negative_data_rejection": {"enabled": False},
            },
            "phases": {"stateful": {"enabled": False}},
        }
    )
    return schemathesis.openapi.from_dict(raw, config=config).include(path="/mcp")


schema = _load_schema()


@pytest.fixture
def mcp_headers(api_key) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {api_key.plaintext}",
        "Accept": "application/json, text/event-stream",
    }


@schema.parametrize()
@hypothesis_settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_mcp_keeps_its_published_contract(case, live_server_url, mcp_headers):  # noqa: F811
    case.call_and_validate(base_url=live_server_url, headers=mcp_headers)
