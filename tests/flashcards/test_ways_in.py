"""Ways in for humans (issue 11): the demo login printed by `seed_demo --print-login`,
`manage.py add_member` and the admin action "Add me as a member", the landing page at /, and
Swagger UI served from the installed sidecar package (nothing from a CDN)."""

from __future__ import annotations

import re
from io import StringIO

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from flashcards import services
from flashcards.models import Membership
from flashcards.services.demo import find_demo_workspace
from tests.factories import UserFactory, make_card
from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def command(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def printed_login(output: str) -> tuple[str, str]:
    match = re.search(r"^Login: (\S+) / (\S+)$", output, re.M)
    assert match, output
    return match[1], match[2]


def test_print_login_gives_a_fresh_password_that_opens_the_demo(settings):
    settings.DEBUG = True
    output = command("seed_demo", "--print-login", "--print-key")
    username, password = printed_login(output)
    assert username == "demo" and output.strip().splitlines()[-1].startswith("fca_")
    client = Client()
    response = client.post("/api-auth/login/", {"username": username, "password": password})
    assert response.status_code == 302 and response["Location"] == "/console/"
    page = client.post("/console/", {"sql": "SELECT COUNT(*) AS n FROM cards"}).content.decode()
    assert re.search(r"<td>(\d+)</td>", page)[1] == "61"
    assert client.get("/account/api-keys/").status_code == 200
    browsable = client.post("/v1/agent/sql", {"sql": "SELECT COUNT(*) AS n FROM decks"})
    assert browsable.json()["data"]["rows"] == [{"n": 4}]
    # Each run is a new password; the previous one stops working.
    _, again = printed_login(command("seed_demo", "--print-login"))
    assert again != password
    assert not Client().login(username="demo", password=password)
    assert Client().login(username="demo", password=again)


def test_print_login_needs_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="only with DEBUG"):
        command("seed_demo", "--print-login")
    user = get_user_model().objects.filter(username="demo").first()
    assert user is None or not user.has_usable_password()


def test_add_member_gives_a_superuser_the_demo_workspace():
    command("seed_demo")
    demo = find_demo_workspace(get_user_model().objects.get(username="demo"))
    admin = UserFactory(username="admin", is_staff=True, is_superuser=True)
    output = command("add_member", "admin", str(demo.pk))
    assert "Added admin" in output and "as member" in output
    assert Membership.objects.get(user=admin, workspace=demo).role == "member"
    client = Client()
    client.force_login(admin)
    page = client.post(
        "/console/", {"sql": "SELECT COUNT(*) AS n FROM cards", "workspace_id": str(demo.pk)}
    ).content.decode()
    assert "<td>61</td>" in page
    # By unique name, idempotent, and the role changes only when asked.
    assert "Kept admin" in command("add_member", "admin", "Demo")
    command("add_member", "admin", "Demo", "--role", "owner")
    assert Membership.objects.get(user=admin, workspace=demo).role == "owner"
    command("add_member", "admin", "Demo")
    assert Membership.objects.get(user=admin, workspace=demo).role == "owner"


def test_add_member_errors_are_clear(user, workspace):
    with pytest.raises(CommandError, match="No user 'nobody'"):
        command("add_member", "nobody", str(workspace.pk))
    with pytest.raises(CommandError, match="not found"):
        command("add_member", "alice", "00000000-0000-0000-0000-000000000000")
    services.create_workspace(UserFactory(username="bob"), "Personal")
    with pytest.raises(CommandError, match="Several workspaces"):
        command("add_member", "alice", "Personal")


def test_the_admin_action_adds_the_signed_in_admin(user, workspace, other_workspace):
    make_card(workspace, front_text="alice's card")
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(root)
    response = client.post(
        "/admin/flashcards/workspace/",
        {"action": "add_me_as_member", "_selected_action": [str(workspace.pk)]},
        follow=True,
    )
    assert "You are now a member of: Personal." in response.content.decode()
    assert Membership.objects.get(user=root, workspace=workspace).role == "member"
    assert not Membership.objects.filter(user=root, workspace=other_workspace).exists()
    # The owner keeps owning it when the action runs again for them.
    client.force_login(user)
    user.is_staff = user.is_superuser = True
    user.save()
    client.post(
        "/admin/flashcards/workspace/",
        {"action": "add_me_as_member", "_selected_action": [str(workspace.pk)]},
    )
    assert Membership.objects.get(user=user, workspace=workspace).role == "owner"


def test_the_landing_page_links_every_surface():
    response = Client().get("/")
    assert response.status_code == 200
    page = response.content.decode()
    for href in (
        'href="/console/"',
        'href="/v1/"',
        'href="/v1/agent/grammar?format=html"',
        'href="/account/api-keys/"',
        'href="/v1/openapi.json"',
        'href="/v1/docs"',
        'href="/admin/"',
    ):
        assert href in page, href
    assert "make run" in page and "make test" in page


def test_swagger_ui_loads_only_local_assets():
    page = Client().get("/v1/docs").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert any("swagger-ui-bundle.js" in a for a in assets)
    # Its start-up script comes from the page's own URL (?script=), so the CSP needs no inline
    # script (issue #21).
    assert all(a.startswith("/static/") or a == "/v1/docs?script=" for a in assets), assets
    assert "cdn" not in page.lower() and "unpkg" not in page.lower()


def test_the_sidecar_assets_are_served_by_the_app(live_server_url):  # noqa: F811
    # The real ASGI app under uvicorn (WhiteNoise serves app static files; no collectstatic).
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css", "swagger-ui-standalone-preset.js"):
        response = httpx2.get(
            f"{live_server_url}/static/drf_spectacular_sidecar/swagger-ui-dist/{asset}"
        )
        assert response.status_code == 200 and len(response.content) > 1000
