"""Real Chromium for the browser tests: Debian's `chromium` driven by Playwright for Python
(never Playwright's own browser download), against the real ASGI app under uvicorn.

Without chromium (or Playwright) the tests skip with the reason, unless REQUIRE_BROWSER=1 (set by
.ci/run) demands them: then they fail. Screenshots of each state go to var/screenshots/."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from tests.flashcards.api.conftest import live_server_url  # noqa: F401  (fixture)

SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"
CHROMIUM_NAMES = ("chromium", "chromium-browser")
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    override = os.environ.get("CHROMIUM_PATH")
    if override:
        return override if Path(override).is_file() else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def _unavailable(reason: str) -> None:
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(
        f"browser tests skipped: {reason} (apt-get install chromium; REQUIRE_BROWSER=1 fails instead)"
    )


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    path = chromium_path()
    if path is None:
        _unavailable("no chromium executable on PATH (or CHROMIUM_PATH)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (requirements-dev.txt)")
    # Playwright's sync API keeps an asyncio loop running on this thread while it is open, so
    # Django's guard would take the tests' own (synchronous) ORM calls for calls from async
    # code. The guard is lifted only while the browser is open, i.e. for the browser modules.
    previous = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = previous


@pytest.fixture
def screenshot() -> object:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: object, name: str) -> Path:
        target = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(target), full_page=True)  # type: ignore[attr-defined]
        return target

    return take


@pytest.fixture
def demo_login(settings) -> tuple[str, str]:
    """Seed the demo as `make run` does and read the login it prints."""
    settings.DEBUG = True
    out = StringIO()
    call_command("seed_demo", "--print-login", stdout=out)
    settings.DEBUG = False
    match = re.search(r"^Login: (\S+) / (\S+)$", out.getvalue(), re.M)
    assert match, out.getvalue()
    return match[1], match[2]
