"""The query console without JavaScript (issue 11): plain form posts through the Django test
client, rendered server-side — rows, errors with marker and fixes, paging, workspace isolation,
the anonymous redirect, the history and the query log."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from dsl.models import QueryLog
from dsl.surfaces.reference import HEADLINE_EXAMPLES
from flashcards import services
from tests.dsl.test_examples import EXAMPLES as SPEC_EXAMPLES
from tests.factories import UserFactory, make_card, make_cards

pytestmark = pytest.mark.django_db

URL = "/console/"


@pytest.fixture
def browser(user, workspace) -> Client:
    client = Client()
    client.force_login(user)
    return client


def run(client: Client, sql: str, workspace_id: object = None, **fields: str) -> str:
    data = {"sql": sql, **fields}
    if workspace_id is not None:
        data["workspace_id"] = str(workspace_id)
    response = client.post(URL, data)
    assert response.status_code == 200
    return response.content.decode()


def cells(page: str) -> list[list[str]]:
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    return [
        [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


def headers(page: str) -> list[str]:
    return re.findall(r'<th scope="col">(.*?)</th>', page)


def hidden_sql(page: str, css_class: str) -> list[str]:
    """The sql of the forms whose button has ``css_class`` (fixes, paging, history)."""
    found = []
    for form in re.findall(r"<form [^>]*>(.*?)</form>", page, re.S):
        if f'class="{css_class}"' in form:
            found.append(html.unescape(re.search(r'name="sql" value="(.*?)"', form, re.S)[1]))
    return found


def textarea(page: str) -> str:
    return html.unescape(re.search(r'<textarea id="sql"[^>]*>(.*?)</textarea>', page, re.S)[1])


def test_anonymous_users_go_to_the_login_page_and_back():
    response = Client().get(URL)
    assert response.status_code == 302
    assert response["Location"] == "/api-auth/login/?next=/console/"


def test_login_lands_on_the_console(user):
    user.set_password("s3cret-pass")
    user.save()
    client = Client()
    response = client.post(
        "/api-auth/login/?next=/console/", {"username": "alice", "password": "s3cret-pass"}
    )
    assert response.status_code == 302 and response["Location"] == "/console/"
    assert b'<textarea id="sql"' in client.get(URL).content


def test_get_shows_the_form_the_sidebar_and_runs_nothing(browser, workspace):
    page = browser.get(URL, {"sql": "DELETE FROM cards WHERE front_text = 'x'"}).content.decode()
    assert textarea(page) == "DELETE FROM cards WHERE front_text = 'x'"
    assert 'name="workspace_id"' in page and 'name="dry_run"' in page
    assert f'<option value="{workspace.pk}" selected>Personal</option>' in page
    for resource in ("cards", "decks", "review_events", "workspace"):
        assert f"SELECT * FROM {resource} LIMIT 20" in page
    assert 'data-insert="front_text"' in page and 'data-insert="fsrs_stability"' in page
    for example in HEADLINE_EXAMPLES:
        assert f'data-sql="{html.escape(example)}"' in page
    assert QueryLog.objects.count() == 0


def test_the_examples_are_those_of_dsl_md_section_10():
    assert list(HEADLINE_EXAMPLES) == SPEC_EXAMPLES


def test_a_select_renders_its_rows_as_a_table_and_keeps_the_statement(browser, workspace):
    make_card(workspace, front_text="hola", back_text="hello", tags=["spanish"])
    make_card(workspace, front_text="adiós", back_text="bye", tags=[])
    statement = "SELECT front_text, back_text, tags FROM cards ORDER BY front_text"
    page = run(browser, statement, workspace.pk)
    assert headers(page) == ["front_text", "back_text", "tags"]
    assert cells(page) == [["adiós", "bye", "[]"], ["hola", "hello", '["spanish"]']]
    assert "2 rows" in page
    assert textarea(page) == statement


def test_null_values_show_as_null(browser, workspace):
    make_card(workspace)
    page = run(browser, "SELECT due_at FROM cards", workspace.pk)
    assert '<td class="null">NULL</td>' in page


def test_runs_go_through_run_sql_with_the_console_surface(browser, user, workspace):
    run(browser, "SHOW TABLES", workspace.pk)
    entry = QueryLog.objects.get()
    assert (entry.surface, entry.user, entry.workspace, entry.outcome) == (
        "console",
        user,
        workspace,
        "ok",
    )


def test_an_error_shows_message_hint_marker_and_fixes(browser, workspace):
    make_card(workspace, front_text="fixed by a click")
    page = run(browser, "SELECT fron_text FROM cards", workspace.pk)
    assert "QUERY_INVALID_SQL" in page
    assert "Unknown column for cards: fron_text. Did you mean front_text?" in page
    assert "Hint:" in page
    marker = re.search(r'<pre class="marker"[^>]*>(.*?)</pre>', page, re.S)[1]
    line, caret = re.sub(r"<[^>]+>", "", marker).split("\n")
    assert line.endswith("SELECT fron_text FROM cards")
    # The caret sits under the first letter of the offending token.
    assert line[caret.index("^") :].startswith("fron_text")
    assert "line 1, column 8" in page
    assert hidden_sql(page, "suggestion") == ["SELECT front_text FROM cards"]
    assert textarea(page) == "SELECT fron_text FROM cards"
    fixed = run(browser, "SELECT front_text FROM cards", workspace.pk)
    assert cells(fixed) == [["fixed by a click"]]


def test_a_corrected_statement_from_the_diagnostics_is_one_click_away(browser, api, workspace):
    make_card(workspace, front_text="top card")
    statement = "SELECT TOP 1 front_text FROM cards"
    corrected = api.post("/v1/agent/sql", {"sql": statement}, format="json").json()["error"][
        "details"
    ]["correctedSql"]
    page = run(browser, statement, workspace.pk)
    assert hidden_sql(page, "suggestion corrected-run") == [corrected]
    assert cells(run(browser, corrected, workspace.pk)) == [["top card"]]


def test_a_correction_equal_to_a_fix_is_not_offered_twice(browser, workspace):
    page = run(browser, "SELECT fron_text FROM cards", workspace.pk)
    assert hidden_sql(page, "suggestion corrected-run") == []


def test_request_errors_render_without_a_marker(browser, workspace):
    page = run(browser, "   ", workspace.pk)
    assert "REQUEST_INVALID" in page and 'class="marker"' not in page


def test_paging_links_carry_the_right_offset(browser, workspace):
    make_cards(workspace, 5)
    page = run(browser, "SELECT front_text FROM cards ORDER BY front_text LIMIT 2", workspace.pk)
    assert [r[0] for r in cells(page)] == ["Front 0", "Front 1"]
    assert hidden_sql(page, "page-link") == [
        "SELECT front_text FROM cards ORDER BY front_text LIMIT 2 OFFSET 2"
    ]
    second = run(browser, hidden_sql(page, "page-link")[0], workspace.pk)
    assert [r[0] for r in cells(second)] == ["Front 2", "Front 3"]
    previous, following = hidden_sql(second, "page-link")
    assert previous == "SELECT front_text FROM cards ORDER BY front_text LIMIT 2 OFFSET 0"
    assert following == "SELECT front_text FROM cards ORDER BY front_text LIMIT 2 OFFSET 4"
    last = run(browser, following, workspace.pk)
    assert [r[0] for r in cells(last)] == ["Front 4"]
    assert hidden_sql(last, "page-link") == [
        "SELECT front_text FROM cards ORDER BY front_text LIMIT 2 OFFSET 2"
    ]


def test_a_statement_without_limit_pages_with_the_default_limit(browser, workspace, settings):
    settings.FLASHCARDS_DSL = {"MAX_ROWS_PER_SELECT": 3}
    make_cards(workspace, 4)
    page = run(browser, "SELECT front_text FROM cards ORDER BY front_text", workspace.pk)
    assert len(cells(page)) == 3
    assert hidden_sql(page, "page-link") == [
        "SELECT front_text FROM cards ORDER BY front_text LIMIT 3 OFFSET 3"
    ]


def test_the_picker_lists_only_the_users_workspaces_and_switches(
    browser, user, workspace, other_workspace
):
    second = services.create_workspace(user, "Spanish")
    make_card(workspace, front_text="in personal")
    make_card(second, front_text="in spanish")
    page = run(browser, "SELECT front_text FROM cards", second.pk)
    assert cells(page) == [["in spanish"]]
    assert f'<option value="{second.pk}" selected>Spanish</option>' in page
    assert str(other_workspace.pk) not in page
    # The choice is remembered for the next visit.
    assert f'<option value="{second.pk}" selected>' in browser.get(URL).content.decode()


def test_another_users_workspace_is_refused_with_a_clear_error(browser, workspace, other_workspace):
    make_card(other_workspace, front_text="secret of mallory")
    for workspace_id in (other_workspace.pk, "not-a-uuid"):
        page = run(browser, "SELECT front_text FROM cards", workspace_id)
        assert "WORKSPACE_NOT_FOUND" in page
        assert "Workspace not found (or you are not a member of it)" in page
        assert "secret of mallory" not in page and "<tbody>" not in page
    refused = QueryLog.objects.filter(outcome="WORKSPACE_NOT_FOUND")
    assert refused.count() == 2 and {e.surface for e in refused} == {"console"}


def test_dry_run_rolls_back_and_stays_checked(browser, workspace):
    page = run(
        browser,
        "INSERT INTO cards (front_text, back_text) VALUES ('a', 'b') RETURNING front_text",
        workspace.pk,
        dry_run="on",
    )
    assert "Dry run: nothing was written." in page
    assert 'id="dry_run" checked' in page
    assert workspace.cards.count() == 0


def test_a_batch_renders_one_table_per_statement(browser, workspace):
    make_card(workspace, front_text="one")
    page = run(browser, "SELECT front_text FROM cards; SHOW TABLES", workspace.pk)
    assert "Statement 1: select" in page and "Statement 2: show_tables" in page
    assert 'class="page-link"' not in page


def test_the_history_lists_the_users_last_twenty_distinct_statements(
    browser, user, workspace, other_user, other_workspace
):
    other = Client()
    other.force_login(other_user)
    run(other, "SELECT 'mallory only' FROM cards", other_workspace.pk)
    for n in range(22):
        run(browser, f"SELECT front_text FROM cards LIMIT {n + 1}", workspace.pk)
    run(browser, "SELECT front_text FROM cards LIMIT 22", workspace.pk)
    history = hidden_sql(browser.get(URL).content.decode(), "rerun")
    assert len(history) == 20
    assert history[0] == "SELECT front_text FROM cards LIMIT 22"
    assert history[-1] == "SELECT front_text FROM cards LIMIT 3"
    assert len(set(history)) == 20
    assert not any("mallory" in entry for entry in history)


def test_the_form_needs_a_csrf_token(user, workspace):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(URL, {"sql": "SHOW TABLES", "workspace_id": str(workspace.pk)})
    assert response.status_code == 403
    assert QueryLog.objects.count() == 0


def test_a_user_without_workspaces_gets_personal(db):
    client = Client()
    client.force_login(UserFactory(username="newcomer"))
    page = client.get(URL).content.decode()
    assert ">Personal</option>" in page


def test_other_methods_are_refused(browser):
    assert browser.put(URL).status_code == 405
