"""The human pages in real Chromium (issue 11), each state screenshotted to var/screenshots/:
the landing page, logging in with the login `seed_demo --print-login` prints, a good query's rows,
paging, a wrong query's marker and the suggestion that fixes and runs it, the workspace picker,
the console without JavaScript, the browsable API's form and Swagger UI with no internet."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from django.contrib.auth import get_user_model

from flashcards import services
from tests.factories import make_card

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = "SELECT front_text, tags FROM cards ORDER BY front_text LIMIT 5"
WRONG = "SELECT fron_text FROM cards ORDER BY front_text LIMIT 3"
FIXED = "SELECT front_text FROM cards ORDER BY front_text LIMIT 3"


@pytest.fixture
def context(chromium, live_server_url):
    """A fresh browser context whose requests may only go to the live server: anything else
    (a CDN) is aborted and recorded."""
    ctx = chromium.new_context(viewport={"width": 1366, "height": 900})
    foreign: list[str] = []
    local = urlparse(live_server_url).netloc

    def guard(route):
        if urlparse(route.request.url).netloc == local:
            route.continue_()
        else:
            foreign.append(route.request.url)
            route.abort()

    ctx.route("**/*", guard)
    ctx.foreign_requests = foreign
    yield ctx
    ctx.close()
    assert foreign == [], f"requests left the server: {foreign}"


def log_in(page, base: str, username: str, password: str, screenshot=None) -> None:
    page.goto(f"{base}/console/")
    assert "/api-auth/login/" in page.url and "next=/console/" in page.url
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    if screenshot:
        screenshot(page, "02-login")
    page.click("[type=submit]")
    page.wait_for_url(f"{base}/console/")


def table_column(page, index: int = 0) -> list[str]:
    return page.locator(f"table.rows tbody tr td:nth-child({index + 1})").all_inner_texts()


def test_the_landing_page(context, live_server_url, screenshot):
    page = context.new_page()
    page.goto(f"{live_server_url}/")
    links = {
        a.inner_text().strip(): a.get_attribute("href") for a in page.locator(".links a").all()
    }
    assert links["Query console"] == "/console/"
    assert links["Swagger UI"] == "/v1/docs" and links["Admin"] == "/admin/"
    assert "make run" in page.inner_text("pre.commands")
    screenshot(page, "01-landing")


def test_console_with_the_demo_login(
    context,
    live_server_url,
    demo_login,
    screenshot,
):
    username, password = demo_login
    demo = get_user_model().objects.get(username=username)
    second = services.create_workspace(demo, "Second workspace")
    make_card(second, front_text="only in the second workspace", tags=["second"])
    page = context.new_page()
    log_in(page, live_server_url, username, password, screenshot)
    assert page.inner_text(".who strong") == "demo"
    screenshot(page, "03-console-empty")

    # A good query: rows in the table, the statement kept, Ctrl+Enter runs without a reload.
    page.fill("#sql", GOOD)
    page.focus("#sql")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("table.rows tbody tr")
    first_page = table_column(page)
    assert len(first_page) == 5
    assert [h.strip() for h in page.locator("table.rows th").all_inner_texts()] == [
        "front_text",
        "tags",
    ]
    assert page.input_value("#sql") == GOOD
    assert "5 rows" in page.inner_text("#row-count")
    screenshot(page, "04-console-rows")

    # Paging: the next page runs the statement with OFFSET 5, the previous one goes back.
    page.click("button[rel=next]")
    page.wait_for_function("() => document.querySelector('#sql').value.endsWith('OFFSET 5')")
    second_page = table_column(page)
    assert len(second_page) == 5 and not set(second_page) & set(first_page)
    screenshot(page, "05-console-page-2")
    page.click("button[rel=prev]")
    page.wait_for_function("() => document.querySelector('#sql').value.endsWith('OFFSET 0')")
    assert table_column(page) == first_page

    # A wrong query: the marker under the offending token, and the suggestion fixes and runs it.
    page.fill("#sql", WRONG)
    page.click("#run")
    page.wait_for_selector("pre.marker .caret")
    assert "Unknown column for cards: fron_text" in page.inner_text(".error-box .message")
    marker = page.inner_text("pre.marker").split("\n")
    assert marker[0].endswith(WRONG)
    assert marker[0][marker[1].index("^") :].startswith("fron_text")
    # The textarea selects the offending token too.
    selected = page.evaluate(
        "(() => { const t = document.querySelector('#sql');"
        " return t.value.slice(t.selectionStart, t.selectionEnd); })()"
    )
    assert selected == "fron_text"
    screenshot(page, "06-console-error")
    page.click("button.suggestion:has-text('front_text')")
    page.wait_for_selector("table.rows tbody tr")
    assert page.input_value("#sql") == FIXED
    assert len(table_column(page)) == 3
    screenshot(page, "07-console-fixed")

    # The workspace picker: the same statement in the other workspace sees only its rows.
    options = page.locator("#workspace_id option").all_inner_texts()
    assert options == ["Demo", "Second workspace"]
    page.select_option("#workspace_id", label="Second workspace")
    page.fill("#sql", "SELECT front_text, tags FROM cards")
    page.click("#run")
    # Predicates as functions, not expression strings: Playwright evaluates a string with eval,
    # which the pages' Content-Security-Policy (no 'unsafe-eval') refuses.
    page.wait_for_function(
        "() => document.querySelector('table.rows tbody td') &&"
        " document.querySelector('table.rows tbody td').innerText.includes('second workspace')"
    )
    assert table_column(page) == ["only in the second workspace"]
    assert "1 row" in page.inner_text("#row-count")
    screenshot(page, "08-console-workspace")

    # The history lists this user's statements, newest first.
    history = page.locator("#history ol.history a").all_inner_texts()
    assert history[0] == "SELECT front_text, tags FROM cards" and GOOD in history


def test_console_without_javascript(chromium, live_server_url, demo_login, screenshot):
    ctx = chromium.new_context(java_script_enabled=False, viewport={"width": 1366, "height": 900})
    try:
        page = ctx.new_page()
        log_in(page, live_server_url, *demo_login)
        page.fill("#sql", WRONG)
        with page.expect_navigation():
            page.click("#run")
        assert page.locator("pre.marker .caret").count() == 1
        with page.expect_navigation():
            page.click("button.suggestion:has-text('front_text')")
        assert page.input_value("#sql") == FIXED
        assert len(table_column(page)) == 3
        screenshot(page, "09-console-no-javascript")
    finally:
        ctx.close()


def test_the_browsable_api_form(context, live_server_url, demo_login, screenshot):
    page = context.new_page()
    log_in(page, live_server_url, *demo_login)
    page.goto(f"{live_server_url}/v1/agent/sql")
    # The status line, not any "405" (the live server's random port can contain one).
    assert "HTTP 405" not in page.inner_text(".response-info")
    assert "HTTP 200 OK" in page.inner_text(".response-info")
    assert "This field is required" not in page.content()
    screenshot(page, "10-browsable-api")
    statement = "SELECT front_text FROM cards ORDER BY front_text LIMIT 2"
    page.fill("#post-generic-content-form textarea[name=sql], form textarea[name=sql]", statement)
    page.click("form button:has-text('POST')")
    page.wait_for_selector(".response-info:has-text('HTTP 200 OK')")
    assert '"rowCount": 2' in page.inner_text(".response-info")
    assert page.input_value("form textarea[name=sql]") == statement
    screenshot(page, "11-browsable-api-after-post")


def test_swagger_ui_renders_the_schema_offline(context, live_server_url, screenshot):
    page = context.new_page()
    page.goto(f"{live_server_url}/v1/docs")
    page.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=15000)
    paths = page.locator(".swagger-ui .opblock-summary-path").all_inner_texts()
    assert any("/v1/agent/sql" in p for p in paths)
    assert "Flashcards agent API" in page.inner_text(".swagger-ui .title")
    screenshot(page, "12-swagger-ui")


def test_the_console_runs_under_its_content_security_policy(chromium, live_server_url, demo_login):
    """The enhanced console (console.js: run without reload, history, fixes) works with the CSP
    enforced, and the browser reports no violation."""
    ctx = chromium.new_context(viewport={"width": 1366, "height": 900})
    page = ctx.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    try:
        response = page.goto(f"{live_server_url}/")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        log_in(page, live_server_url, *demo_login)
        page.fill("#sql", FIXED)
        page.focus("#sql")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("table.rows tbody tr")
        assert len(table_column(page)) == 3
        assert violations == []
    finally:
        ctx.close()
