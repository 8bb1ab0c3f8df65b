"""The published OpenAPI schema against the application, with schemathesis: every operation, every
built-in check, a fixed seed and a bounded number of examples per operation, in process (the WSGI
application on the test database), no network. Zero failures: every request the schema calls
valid is accepted — unless a rule the schema cannot state refuses it, which the answer must then
say (``shape_errors_only_for_invalid_requests``) — every invalid one refused, and every status,
header and body the server sends is described. New routes are covered as soon as they are in the
schema.

Left out: ``/mcp``, which the WSGI application does not serve (config.asgi routes it to the MCP
SDK; tests/flashcards/api/test_mcp*.py drive it with the SDK's own client)."""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode

from flashcards import services

SEED = 20261201
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))
# positive_data_acceptance: a schema-valid request may still break a rule no schema can state (a
# card that must exist, a statement the dialect refuses): a 400 then, checked by the custom
# check below to name such a rule and never the request's shape.
ACCEPTED = ["2xx", "400", "401", "403", "404", "409", "429"]


def _load_schema() -> schemathesis.BaseSchema:
    """Loaded at collection: drf-spectacular builds the schema without the database."""
    from config.wsgi import application

    config = schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {"max-examples": EXAMPLES, "deterministic": True},
            "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}},
            # The stateful phase needs links between operations, which this schema has none of.
            "phases": {"stateful": {"enabled": False}},
        }
    )
    loaded = schemathesis.openapi.from_wsgi("/v1/openapi.json", application, config=config)
    return loaded.exclude(path="/mcp")


schema = _load_schema()


def shape_errors_only_for_invalid_requests(ctx, response, case) -> None:
    """A request generated valid by the schema is never refused for its shape: a 400 listing
    ``details.validationIssues`` means the schema and the server's validation disagree."""
    meta = case.meta
    if meta is None or meta.generation.mode is not GenerationMode.POSITIVE:
        return
    if response.status_code != 400:
        return
    error = response.json().get("error") or {}
    if error.get("code") != "REQUEST_INVALID":
        return  # the dialect's own refusals (QUERY_*) point into the statement
    issues = (error.get("details") or {}).get("validationIssues")
    if issues:
        raise AssertionError(f"A schema-valid request was refused for its shape: {issues}")


@pytest.fixture(autouse=True)
def _requests_keep_the_test_transaction():
    """As Django's own test client does: the test's transaction is the connection's, so requests
    must not close it between them."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def key_header(user, workspace, api_key) -> dict[str, str]:
    services.create_cards(workspace, [{"front_text": "hola", "back_text": "hello"}])
    return {"Authorization": f"ApiKey {api_key.plaintext}"}


@schema.parametrize()
@hypothesis_settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_application_keeps_its_published_contract(case, key_header):
    case.call_and_validate(
        headers=key_header, additional_checks=[shape_errors_only_for_invalid_requests]
    )
