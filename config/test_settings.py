"""Settings for the test suite: the production settings with a throwaway secret and no rate limit
(rate-limit tests turn it back on with override_settings)."""

import os

# Not the development key: the served application refuses that one outside DEBUG (config.keys),
# and live-server tests serve the application.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-the-development-one-0123456789")
os.environ.setdefault("AGENT_RATE_LIMIT", "0")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# One process, so an in-memory cache is enough and tests never share state through the disk.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Tests run inside transactions the query-log writer's own connection could not see: rows are
# written on the request path (tests/dsl/test_querylog_writer.py runs the writer itself).
QUERY_LOG_ASYNC = False

# Live-server tests run the served application in a thread of the test process: connections of its
# threads must not outlive their requests, or PostgreSQL refuses to drop the test database.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# Per-address registration and sign-in throttles off (the suite's requests all come from one
# address and share one cache); their tests turn them on with override_settings.
OAUTH_REGISTRATIONS_PER_ADDRESS = 0
LOGIN_FAILURES_PER_ACCOUNT = 0
LOGIN_FAILURES_PER_ADDRESS = 0

# A habit row whose template names a field or filter that does not exist raises instead of being
# skipped in silence (dsl.teaching.teach logs and keeps the plain error in production).
DSL_TEACHING_STRICT = True
