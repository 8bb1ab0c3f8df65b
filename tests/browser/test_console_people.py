"""Issue 24 in real Chromium: the console's fixes that a person can trust, readable results at
1280 and 390 px, the history, the account pages. Screenshots go to docs/screenshots/ (small PNGs,
viewport only) as the README shows them."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model

from flashcards.models import ApiKey, Card
from tests.browser.test_console_browser import log_in

pytestmark = pytest.mark.django_db(transaction=True)

DOCS_SHOTS = Path(django_settings.BASE_DIR) / "docs" / "screenshots"


@pytest.fixture
def browse(chromium, live_server_url):
    """A context factory at a given width whose requests may only go to the live server."""
    opened = []
    local = urlparse(live_server_url).netloc

    def open_context(width: int = 1280, javascript: bool = True):
        ctx = chromium.new_context(
            viewport={"width": width, "height": 800}, java_script_enabled=javascript
        )
        ctx.route(
            "**/*",
            lambda route: (
                route.continue_() if urlparse(route.request.url).netloc == local else route.abort()
            ),
        )
        opened.append(ctx)
        return ctx.new_page()

    yield open_context
    for ctx in opened:
        ctx.close()


def doc_shot(page, name: str) -> None:
    DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"))


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def run(page, sql: str) -> None:
    page.fill("#sql", sql)
    page.click("#run")
    page.wait_for_selector("#result .error-box, #result table.rows, #result .notice")


def test_a_value_suggestion_stays_a_string(browse, live_server_url, demo_login):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    run(page, "SELECT front_text FROM cards WHERE effort_level = 'fats' LIMIT 3")
    page.click("button.suggestion:has-text('fast')")
    page.wait_for_selector("table.rows tbody tr")
    assert page.input_value("#sql") == (
        "SELECT front_text FROM cards WHERE effort_level = 'fast' LIMIT 3"
    )


@pytest.mark.parametrize("second", ["SELECT name FROM decks", "SHOW TABLES"])
def test_two_statements_without_a_semicolon(browse, live_server_url, demo_login, second):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    run(page, f"SELECT front_text FROM cards LIMIT 2\n{second}")
    message = page.inner_text(".error-box .message")
    assert "need a ; between them" in message
    assert "Subqueries" not in message and "not supported" not in message
    page.click("button.corrected-run")
    page.wait_for_selector("table.rows tbody tr")
    # Both statements ran: nothing of the second was dropped.
    assert page.locator(".result-table").count() == 2
    assert page.input_value("#sql") == f"SELECT front_text FROM cards LIMIT 2;\n{second}"


def test_the_caret_and_selection_in_a_multi_line_statement(browse, live_server_url, demo_login):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    run(page, "SELECT front_text\nFROM cards\nWHERE fron_text = 'x'")
    selected = page.evaluate(
        "(() => { const t = document.querySelector('#sql');"
        " return t.value.slice(t.selectionStart, t.selectionEnd); })()"
    )
    assert selected == "fron_text"
    marker = page.inner_text("pre.marker").split("\n")
    assert marker[0].endswith("WHERE fron_text = 'x'")
    assert marker[0][marker[1].index("^") :].startswith("fron_text")


def test_people_get_human_wording(browse, live_server_url, demo_login):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    page.check("#dry_run")
    run(page, "SELECT front_text FROM cards LIMIT 1; SELECT name FROM decks LIMIT 1")
    text = page.inner_text("#result")
    run(page, "SELECT fron_text FROM cards")
    text += page.inner_text("#result")
    for agent_words in ("retry the same endpoint", "dry_run false", "data.statements"):
        assert agent_words not in text
    assert "Dry run: nothing was written" in text


def test_history_shows_the_statement_just_run_and_rerun_keeps_dry_run(
    browse, live_server_url, demo_login, settings
):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    # The query log is written off the request path (as in production).
    settings.QUERY_LOG_ASYNC = True
    page.check("#dry_run")
    statement = "UPDATE cards SET back_text = 'dry' WHERE front_text LIKE '%'"
    run(page, "UPDATE cards SET back_text = 'dry' WHERE effort_level = 'fast'")
    first = page.locator("#history ol.history li").first
    assert first.locator("a").inner_text() == (
        "UPDATE cards SET back_text = 'dry' WHERE effort_level = 'fast'"
    )
    assert first.locator(".dry-badge").count() == 1
    page.uncheck("#dry_run")
    first.locator("button.rerun").click()
    page.wait_for_selector("#result .notice")
    assert "Dry run: nothing was written" in page.inner_text("#result")
    assert not Card.objects.filter(back_text="dry").exists()
    assert statement  # the LIKE variant is never run


def test_results_are_readable_at_1280_and_390(browse, live_server_url, demo_login):
    for width in (1280, 390):
        page = browse(width)
        log_in(page, live_server_url, *demo_login)
        run(page, "SELECT * FROM cards LIMIT 60")
        table_height = page.evaluate("document.querySelector('.table-scroll').scrollHeight")
        assert table_height < 6000, table_height
        # An id cell is one line, shortened; its whole value is its title.
        first_id = page.locator("table.rows tbody tr td.clip .short").first
        box = first_id.bounding_box()
        assert box["height"] < 30
        assert re.fullmatch(r"[0-9a-f-]{36}", first_id.get_attribute("title"))
        # The scroll box is bounded: its header sticks and its scrollbar is on screen.
        scroller = page.locator(".table-scroll")
        assert scroller.evaluate("e => getComputedStyle(e).overflowY") == "auto"
        assert scroller.bounding_box()["height"] <= 800
        page.locator(".table-scroll").evaluate("e => e.scrollTop = 400")
        th = page.locator("table.rows th").first.bounding_box()
        sbox = scroller.bounding_box()
        assert abs(th["y"] - sbox["y"]) < 3
        assert page_width(page) <= width
        doc_shot(page, f"console-{width}")
        run(page, "DESCRIBE cards")
        page.wait_for_selector("table.rows th:has-text('column_name')")
        types = page.locator("table.rows tbody tr td:nth-child(2)").all_inner_texts()
        assert "string" in types and "strin g" not in " ".join(types)
        run(page, "SELECT fron_text FROM cards WHERE effort_level = 'fast' ORDER BY created_at")
        page.wait_for_selector(".error-box pre.marker")
        assert page_width(page) <= width
        if width == 390:
            doc_shot(page, "console-error-390")
            page.goto(f"{live_server_url}/account/api-keys/")
            page.click("button:has-text('Create key')")
            page.wait_for_selector("#new-api-key")
            assert page_width(page) <= width


def test_log_in_from_the_start_page_opens_the_console(browse, live_server_url, demo_login):
    page = browse()
    page.goto(f"{live_server_url}/")
    page.click(".who a:has-text('Log in')")
    page.fill("#id_username", demo_login[0])
    page.fill("#id_password", demo_login[1])
    page.click("[type=submit]")
    page.wait_for_url(f"{live_server_url}/console/")
    page.click(".who button:has-text('Log out')")
    page.wait_for_url(f"{live_server_url}/")
    assert "Logged out" not in page.content()
    assert page.locator(".who a:has-text('Log in')").count() == 1


def test_the_demo_user_opens_the_admin(browse, live_server_url, demo_login):
    assert get_user_model().objects.get(username=demo_login[0]).is_staff
    page = browse()
    log_in(page, live_server_url, *demo_login)
    page.goto(f"{live_server_url}/admin/")
    assert "Site administration" in page.content()


@pytest.mark.parametrize("javascript", [True, False])
def test_api_keys_reload_and_revoke(browse, live_server_url, demo_login, javascript):
    page = browse(javascript=javascript)
    log_in(page, live_server_url, *demo_login)
    page.goto(f"{live_server_url}/account/api-keys/")
    assert page.locator(".site-header nav a:has-text('Console')").count() == 1
    page.click("button:has-text('Create key')")
    page.wait_for_selector("#new-api-key")
    user = get_user_model().objects.get(username=demo_login[0])
    count = ApiKey.objects.filter(user=user).count()
    page.reload()
    assert ApiKey.objects.filter(user=user).count() == count
    assert page.locator("#new-api-key").count() == 0
    page.locator("a.revoke").first.click()
    assert "cannot be undone" in page.content()
    assert ApiKey.objects.filter(user=user, revoked_at__isnull=False).count() == 0
    page.click("#confirm-revoke")
    page.wait_for_selector("p.message")
    assert ApiKey.objects.filter(user=user, revoked_at__isnull=False).count() == 1


def test_the_grammar_page_has_navigation(browse, live_server_url):
    page = browse()
    page.goto(f"{live_server_url}/v1/agent/grammar?format=html")
    assert page.locator("a[href='/console/']").count() >= 1


@pytest.mark.parametrize("javascript", [True, False])
def test_the_typed_statement_survives_an_expired_session(
    browse, live_server_url, demo_login, javascript
):
    page = browse(javascript=javascript)
    log_in(page, live_server_url, *demo_login)
    # The session ends; the CSRF cookie (a year long) stays, as when a session expires.
    page.context.clear_cookies(name="sessionid")
    statement = "SELECT front_text\nFROM cards LIMIT 2"
    page.fill("#sql", statement)
    page.click("#run")
    page.wait_for_url(re.compile(r".*/api-auth/login/.*"))
    page.fill("#id_username", demo_login[0])
    page.fill("#id_password", demo_login[1])
    page.click("[type=submit]")
    page.wait_for_selector("#sql")
    assert page.input_value("#sql") == statement


def test_the_import_form_names_the_header_columns_and_the_tag_separator(
    browse, live_server_url, demo_login
):
    page = browse(390)
    log_in(page, live_server_url, *demo_login)
    page.goto(f"{live_server_url}/console/import")
    help_text = page.inner_text("#import-help")
    for column in ("front_text", "back_text", "tags", "effort_level"):
        assert column in help_text
    assert "separated by ;" in help_text and "math;arithmetic" in help_text
    assert page_width(page) <= 390


def test_the_browsable_api_shows_no_uuid_error_under_a_blank_field(
    browse, live_server_url, demo_login
):
    page = browse()
    log_in(page, live_server_url, *demo_login)
    page.goto(f"{live_server_url}/v1/agent/sql")
    page.fill("form textarea[name=sql]", "SELECT front_text FROM cards LIMIT 1")
    page.click("form button:has-text('POST')")
    page.wait_for_selector(".response-info:has-text('HTTP 200 OK')")
    assert "Must be a valid UUID" not in page.content()
