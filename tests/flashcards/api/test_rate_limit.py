from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.test import override_settings
from rest_framework.test import APIClient

from flashcards import services
from flashcards.http.throttling import WINDOW_SECONDS, consume
from tests.flashcards.api.helpers import assert_envelope_error, assert_envelope_ok

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


@override_settings(AGENT_RATE_LIMIT=3)
def test_the_fourth_request_in_a_minute_is_429_with_retry_after(api):
    for _ in range(3):
        assert_envelope_ok(api.get("/v1/agent/me"))
    response = api.get("/v1/agent/me")
    error = assert_envelope_error(response, 429, "RATE_LIMITED")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= WINDOW_SECONDS
    assert error["details"]["retryAfterSeconds"] == retry_after


@override_settings(AGENT_RATE_LIMIT=2)
def test_every_agent_route_spends_the_same_budget(api):
    assert_envelope_ok(api.get("/v1/agent/workspaces"))
    assert_envelope_ok(
        api.post("/v1/agent/workspace/scheduler-settings", {"enable_fuzz": False}, format="json")
    )
    response = api.post("/v1/agent/sql", {"sql": "SHOW TABLES"}, format="json")
    assert_envelope_error(response, 429, "RATE_LIMITED")


@override_settings(AGENT_RATE_LIMIT=2)
def test_each_user_has_one_budget_for_all_their_keys(
    api, user, workspace, client_for, other_user, other_workspace
):
    # Issue #20: was "each key has its own budget", which let a user mint keys for more budget.
    _, second = services.create_api_key(user, "second", workspace=workspace)
    _, others = services.create_api_key(other_user, "other", workspace=other_workspace)
    for _ in range(2):
        assert_envelope_ok(api.get("/v1/agent/me"))
    assert_envelope_error(api.get("/v1/agent/me"), 429, "RATE_LIMITED")
    assert_envelope_error(client_for(second).get("/v1/agent/me"), 429, "RATE_LIMITED")
    assert_envelope_ok(client_for(others).get("/v1/agent/me"))


@override_settings(AGENT_RATE_LIMIT=1)
def test_anonymous_discovery_is_not_limited(db):
    client = APIClient()
    for _ in range(5):
        assert_envelope_ok(client.get("/v1/"))


@override_settings(AGENT_RATE_LIMIT=0)
def test_zero_disables_the_limit(api):
    for _ in range(30):
        assert_envelope_ok(api.get("/v1/agent/me"))


# --- the sliding window, with an explicit clock ------------------------------------------------

# The start of some window; every time below is exact in binary floating point.
START = 1_000 * WINDOW_SECONDS


def spend(count: int, at: float, principal: str = "key:test") -> list[float | None]:
    return [consume(principal, now=at) for _ in range(count)]


@override_settings(AGENT_RATE_LIMIT=4)
def test_a_burst_straddling_a_window_boundary_gets_one_budget_not_two():
    """A fixed window would let all eight through: four in the last second of one window and four
    in the first second of the next."""
    assert spend(4, START - 1) == [None] * 4
    after_the_boundary = spend(4, START + 1)
    assert all(wait is not None for wait in after_the_boundary)


@override_settings(AGENT_RATE_LIMIT=4)
def test_the_previous_window_fades_out_over_the_current_one():
    assert spend(4, START + 30) == [None] * 4
    # Halfway through the next window the previous four weigh two: two more fit, not four.
    allowed = spend(4, START + WINDOW_SECONDS + 30)
    assert [wait is None for wait in allowed] == [True, True, False, False]


@override_settings(AGENT_RATE_LIMIT=2)
def test_after_a_full_window_of_quiet_the_budget_is_whole_again():
    assert spend(3, START + 10)[-1] is not None
    later = START + 2 * WINDOW_SECONDS
    assert spend(2, later) == [None, None]
    assert consume("key:test", now=later) is not None


@override_settings(AGENT_RATE_LIMIT=4)
def test_retry_after_while_the_previous_window_decays():
    assert spend(4, START + 30) == [None] * 4
    now = START + WINDOW_SECONDS + 15
    # 4 * 0.75 + 1 = 4 fits; 4 * 0.75 + 2 = 5 does not. A retry counts 3 in this window, so it
    # needs 4 * (1 - f) <= 1, i.e. f = 0.75: 30 s later.
    assert consume("key:test", now=now) is None
    assert consume("key:test", now=now) == pytest.approx(30)
    assert consume("key:test", now=now + 30) is None


@override_settings(AGENT_RATE_LIMIT=3)
def test_retry_after_when_the_current_window_alone_is_over():
    now = START + 15
    assert spend(3, now) == [None] * 3
    # Four counted (refusals count too): the rest of this window, 45 s, then the next window
    # still weighs the four at 4 * (1 - g) + 1 <= 3, g = 0.5: another 30 s, 75 s in all —
    # answered as the one-window cap, 60 s.
    wait = consume("key:test", now=now)
    assert wait == pytest.approx(WINDOW_SECONDS)
    assert consume("key:test", now=now + 74) is not None
    # That refusal counted in the next window; a fresh key at the true moment gets through.
    assert spend(4, now, principal="key:fresh")[-1] == pytest.approx(WINDOW_SECONDS)
    assert consume("key:fresh", now=now + 75) is None


@override_settings(AGENT_RATE_LIMIT=1)
def test_retry_after_is_at_most_one_window():
    # With a budget of one the next window is spent entirely by the previous count's weight: the
    # true wait is two windows, answered as the one-window cap.
    assert consume("key:test", now=START) is None
    assert consume("key:test", now=START) == pytest.approx(WINDOW_SECONDS)
    assert consume("key:test", now=START + 2 * WINDOW_SECONDS) is None


@override_settings(AGENT_RATE_LIMIT=120)
def test_retry_after_is_never_below_one_second():
    assert spend(120, START + 30) == [None] * 120
    now = START + WINDOW_SECONDS + 30.75
    # The previous 120 weigh 120 * 0.4875 = 58.5 here: 61 more fit, the 62nd does not. A retry
    # (count 63) needs 120 * (1 - f) <= 57, f = 0.525: 0.75 s later, answered as 1 s.
    assert spend(61, now) == [None] * 61
    assert consume("key:test", now=now) == 1.0
    assert consume("key:test", now=now + 0.75) is None


class UnreachableCache(BaseCache):
    """A cache server that is down: every operation raises."""

    def __init__(self, location: str, params: dict) -> None:
        super().__init__(params)

    def add(self, *args, **kwargs):
        raise ConnectionError("cache down")

    get = set = incr = add


@override_settings(
    AGENT_RATE_LIMIT=1,
    CACHES={"default": {"BACKEND": f"{__name__}.UnreachableCache"}},
)
def test_a_cache_outage_lets_requests_through():
    assert spend(5, START) == [None] * 5


class _Processes:
    """Several server processes in one test: each has its own reserved slots (the module's local
    state, swapped in and out) and all share the one cache."""

    def __init__(self, count: int) -> None:
        self._states = [{} for _ in range(count)]

    def consume(self, process: int, principal: str, now: float) -> float | None:
        from flashcards.http import throttling

        saved = throttling._allowances
        throttling._allowances = self._states[process]
        try:
            return consume(principal, now=now)
        finally:
            throttling._allowances = saved


class _CountingCache:
    def __init__(self, monkeypatch):
        from flashcards.http import throttling

        self.calls = 0
        real = throttling.cache

        def counted(name):
            original = getattr(real, name)

            def call(*args, **kwargs):
                self.calls += 1
                return original(*args, **kwargs)

            return call

        for name in ("get", "add", "incr", "set"):
            monkeypatch.setattr(real, name, counted(name))


@override_settings(AGENT_RATE_LIMIT=120)
def test_most_requests_far_below_the_limit_touch_no_shared_cache(monkeypatch):
    counter = _CountingCache(monkeypatch)
    start = 100 * WINDOW_SECONDS
    for n in range(40):
        assert consume("key:CHUNKS00", now=start + n * 0.1) is None
    # Slots are reserved in chunks (an eighth of the headroom, at most 32): far fewer than 40
    # round trips of get + add + incr each.
    assert counter.calls <= 3 * 6


@override_settings(AGENT_RATE_LIMIT=60)
@pytest.mark.parametrize("processes", [1, 2, 4])
def test_a_burst_across_processes_gets_exactly_the_budget(processes):
    pool = _Processes(processes)
    start = 200 * WINDOW_SECONDS
    allowed = sum(
        pool.consume(n % processes, "key:BURST000", now=start + n * 0.001) is None
        for n in range(200)
    )
    assert allowed == 60


@override_settings(AGENT_RATE_LIMIT=60)
def test_reserved_slots_never_let_more_than_the_limit_through_over_time():
    """Spread load from three processes over three minutes: the sliding estimate over any minute
    never passes the limit by more than the reserved slots that lapse unspent."""
    pool = _Processes(3)
    start = 300 * WINDOW_SECONDS
    times = [start + n * 0.25 for n in range(3 * 4 * WINDOW_SECONDS)]  # 4 requests a second
    allowed_at = [
        t for n, t in enumerate(times) if pool.consume(n % 3, "key:SPREAD00", now=t) is None
    ]
    for window_start in range(start, start + 2 * WINDOW_SECONDS, 5):
        in_minute = [t for t in allowed_at if window_start <= t < window_start + WINDOW_SECONDS]
        assert len(in_minute) <= 60 * 1.5  # the two-window estimate's known slack, not more
    per_window = {}
    for t in allowed_at:
        per_window[int(t // WINDOW_SECONDS)] = per_window.get(int(t // WINDOW_SECONDS), 0) + 1
    assert all(count <= 60 for count in per_window.values())


def test_the_budget_is_named_after_the_keys_user_not_a_row_number_alone(api_key):
    from flashcards.http.throttling import principal_key

    class Request:
        auth = api_key
        user = None

    user = api_key.user
    stamp = int(user.date_joined.timestamp() * 1_000_000)
    assert principal_key(Request()) == f"user:{user.pk}.{stamp}"


@override_settings(AGENT_RATE_LIMIT=30)
def test_concurrent_threads_of_one_process_lose_none_of_the_budget():
    """Threads refilling at the same moment keep each other's slots: every slot of the budget
    is spent by some request, so exactly the limit passes."""
    import threading

    start = 400 * WINDOW_SECONDS
    results = []
    lock = threading.Lock()

    def burst():
        for n in range(10):
            allowed = consume("key:THREADS0", now=start + n * 0.01) is None
            with lock:
                results.append(allowed)

    threads = [threading.Thread(target=burst) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 30


def _cache_prefix(**env: str) -> str:
    import os
    import subprocess
    import sys

    from django.conf import settings as django_settings

    probe = (
        "import django; "
        "from django.conf import settings; print(settings.CACHES['default']['KEY_PREFIX'])"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CACHE_KEY_PREFIX")}
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=django_settings.BASE_DIR,
        env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "probe", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_budgets_never_leak_between_databases_sharing_a_cache(tmp_path):
    """The counters live under a per-deployment prefix named after the database, so a fresh
    database beside an old cache (or two installations on one Redis) starts from zero."""
    first = _cache_prefix(DATABASE_URL=f"sqlite:///{tmp_path / 'one.sqlite3'}")
    second = _cache_prefix(DATABASE_URL=f"sqlite:///{tmp_path / 'two.sqlite3'}")
    other_server = _cache_prefix(DATABASE_URL="postgres://u@db.example:5432/cards")
    assert len({first, second, other_server}) == 3
    assert _cache_prefix(CACHE_KEY_PREFIX="shared-on-purpose") == "shared-on-purpose"
