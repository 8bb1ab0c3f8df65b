"""Security properties of the deployment: the production settings pass ``check --deploy``, API
keys exist only as hashes and never reach a log, the admin is for staff only, session writes need
a CSRF token, and the per-key rate limit counts exactly under concurrent requests."""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.apps import apps
from django.core.cache import cache
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory, override_settings

from flashcards import services
from flashcards.http.throttling import consume
from tests.factories import UserFactory, make_cards
from tests.reliability.helpers import envelope, refused

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
# The production environment documented in docs/reliability.md ("Production settings").
PRODUCTION_ENV = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "cards.example.com",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
}


def test_check_deploy_is_clean_under_the_production_settings(tmp_path):
    env = {
        "PATH": os.environ["PATH"],
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **PRODUCTION_ENV,
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def _keyless_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The production environment without SECRET_KEY (and without the test suite's own)."""
    return {
        "PATH": os.environ["PATH"],
        "DATABASE_URL": f"sqlite:///{tmp_path / 'keyless.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **PRODUCTION_ENV,
        "ALLOWED_HOSTS": "127.0.0.1",
        **extra,
    }


@pytest.mark.parametrize(
    "command",
    [["runserver", "--noreload", "127.0.0.1:0"], ["serve", "--host", "127.0.0.1", "--port", "0"]],
    ids=["runserver", "serve"],
)
def test_serving_without_a_secret_key_refuses_to_start(tmp_path, command):
    result = subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=_keyless_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr + result.stdout


def test_the_served_application_refuses_the_development_key_outside_debug(tmp_path):
    """Even with the operator commands' allowance set by hand, config.asgi / config.wsgi do not
    load with the published development key unless DEBUG is on."""
    for module in ("config.asgi", "config.wsgi"):
        result = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            cwd=ROOT,
            env=_keyless_env(tmp_path, DJANGO_ALLOW_INSECURE_KEY="1"),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0, module
        assert "development key cannot serve requests" in result.stderr, result.stderr
    debug = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=ROOT,
        env=_keyless_env(tmp_path, DEBUG="1"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert debug.returncode == 0, debug.stderr


def test_operator_commands_that_sign_nothing_run_without_a_key(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=_keyless_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def _everything_stored() -> str:
    """Every column of every row of every table, as one string."""
    dumps = []
    for model in apps.get_models():
        for row in model.objects.values():
            dumps.append(json.dumps(row, default=str))
    return "\n".join(dumps)


def test_api_keys_are_stored_hashed_and_never_logged(api_key, workspace, client_for, caplog):
    plaintext = api_key.plaintext
    secret = plaintext.rsplit("_", 1)[1]
    wrong = plaintext[:-4] + ("AAAA" if not plaintext.endswith("AAAA") else "BBBB")
    make_cards(workspace, 1)
    with caplog.at_level(logging.DEBUG):
        client = client_for(plaintext)
        envelope(client.post("/v1/agent/sql", {"sql": "SELECT * FROM cards"}, format="json"))
        refused(
            client.post("/v1/agent/sql", {"sql": "SELECT nope FROM cards"}, format="json"),
            400,
            "QUERY_INVALID_SQL",
        )
        client.post(
            "/v1/agent/sql/execute",
            {"sql": "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b')"},
            format="json",
            headers={"Idempotency-Key": "once"},
        )
        refused(
            client_for(wrong).post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"),
            401,
            "AGENT_API_KEY_INVALID",
        )
    stored = _everything_stored()
    for needle in (plaintext, secret, wrong, wrong.rsplit("_", 1)[1]):
        assert needle not in stored
        assert needle.lower() not in stored.lower()
        assert needle not in caplog.text
    assert "Authorization" not in stored and "ApiKey fca_" not in caplog.text


def test_the_admin_is_for_staff_only(user):
    member = Client()
    member.force_login(user)
    for path in (
        "/admin/",
        "/admin/flashcards/card/",
        "/admin/dsl/querylog/",
        "/admin/flashcards/apikey/",
    ):
        response = member.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), (
            path
        )
    anonymous = Client().get("/admin/flashcards/card/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/admin/login/")
    staff = Client()
    staff.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    assert staff.get("/admin/flashcards/card/").status_code == 200


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/agent/sql", {"sql": "INSERT INTO cards (front_text, back_text) VALUES ('x', 'y')"}),
        ("/v1/agent/sql/query", {"sql": "SELECT * FROM cards"}),
        ("/v1/agent/workspaces", {"name": "Sneaky"}),
    ],
)
def test_session_writes_need_a_csrf_token(user, workspace, path, body):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    response = browser.post(path, body, content_type="application/json")
    error = refused(response, 403, "FORBIDDEN")
    assert "CSRF" in error["message"]

    request = RequestFactory().get("/")
    token = get_token(request)
    browser.cookies["csrftoken"] = request.META["CSRF_COOKIE"]
    response = browser.post(
        path, body, content_type="application/json", headers={"X-CSRFToken": token}
    )
    assert response.status_code in (200, 201), response.content[:500]


def test_api_key_requests_need_no_csrf_token(api_key):
    client = Client(
        enforce_csrf_checks=True, headers={"Authorization": f"ApiKey {api_key.plaintext}"}
    )
    response = client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, content_type="application/json")
    assert envelope(response)["ok"] is True


@override_settings(AGENT_RATE_LIMIT=40)
def test_the_rate_limit_counts_exactly_under_concurrent_requests():
    """16 threads spend one key's budget at once; exactly the limit gets through (the cache's
    add + incr are atomic in the configured backend)."""
    cache.clear()
    allowed: list[int] = []
    barrier = threading.Barrier(16)

    def client() -> None:
        barrier.wait()
        allowed.append(sum(consume("key:contended") is None for _ in range(10)))

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 40
    assert consume("key:other") is None
    cache.clear()


def test_a_revoked_key_is_refused_at_once(api_key, client_for):
    client = client_for(api_key.plaintext)
    envelope(client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"))
    services.revoke_api_key(api_key)
    refused(
        client.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json"),
        401,
        "AGENT_API_KEY_INVALID",
    )
