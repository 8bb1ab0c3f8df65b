"""Settings, all from the environment (see README "Configuration")."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.keys import DEVELOPMENT_SECRET_KEY

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    # DJANGO_ALLOW_INSECURE_KEY is set by manage.py for operator commands that sign nothing; the
    # served application refuses the development key outside DEBUG all the same (config.keys).
    if DEBUG or os.environ.get("DJANGO_ALLOW_INSECURE_KEY") == "1":
        SECRET_KEY = DEVELOPMENT_SECRET_KEY
    else:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# CORS (django-cors-headers), off unless CORS_ALLOWED_ORIGINS names origins such as
# https://app.example.com. It covers the API and /mcp alike; browser clients authenticate with an
# API key header, never with cookies, so credentials stay off. See flashcards.http.cors.
CORS_ALLOWED_ORIGINS = env_list("CORS_ALLOWED_ORIGINS")
CORS_URLS_REGEX = r"^/(v1/.*|mcp/?)$"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_METHODS = ("DELETE", "GET", "OPTIONS", "PATCH", "POST", "PUT")
CORS_ALLOW_HEADERS = (
    "accept",
    "authorization",
    "content-type",
    "idempotency-key",
    "x-request-id",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
)
CORS_EXPOSE_HEADERS = (
    "X-Request-Id",
    "Retry-After",
    "Idempotent-Replayed",
    "WWW-Authenticate",
    "Mcp-Session-Id",
)
CORS_PREFLIGHT_MAX_AGE = 600

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "corsheaders",
    "oauth2_provider",
    "flashcards",
    "flashcards.oauth",
    "dsl",
]

MIDDLEWARE = [
    # First, so every answer (a 413 or a 429 too) carries the CORS headers a browser needs to read
    # it, and preflights are answered before authentication.
    "flashcards.http.cors.CorsMiddleware",
    "flashcards.http.middleware.RequestIdMiddleware",
    # Every answer under /v1/ JSON (flashcards.security.api_json); every HTML page a CSP.
    "flashcards.security.api_json.ApiJsonMiddleware",
    "flashcards.security.csp.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "flashcards.security.logins.LoginThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "flashcards.http.db_errors.DatabaseUnavailableMiddleware",
    "flashcards.http.handlers.BadRequestMiddleware",
]

ROOT_URLCONF = "config.urls"

# Sign-in throttling (flashcards.security.logins): failed attempts per account and per address in
# a window; past either limit the sign-in pages answer 429 and even the right password is refused.
AUTHENTICATION_BACKENDS = ["flashcards.security.logins.ThrottledModelBackend"]
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "5"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "20"))
LOGIN_FAILURE_WINDOW_SECONDS = int(os.environ.get("LOGIN_FAILURE_WINDOW_SECONDS", "900"))

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# Threads per server process that run Django (config.asgi): each keeps its own database
# connection, so a PostgreSQL pool needs at least this many connections to never make one wait.
SERVER_THREADS = int(os.environ.get("SERVER_THREADS", "4"))

# Connections are kept between requests (each server thread holds its own, config.asgi) for
# DB_CONN_MAX_AGE seconds; 0 opens one per request.
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "600")),
        conn_health_checks=True,
    )
}
# A connection pool for PostgreSQL (psycopg-pool, Django's "pool" option), shared by a process's
# threads (the server's, the query-log writer, MCP tools) instead of one persistent connection per
# thread (docs/deployment.md). DB_POOL_MAX_SIZE=0, the default, turns it off.
DB_POOL_MAX_SIZE = int(os.environ.get("DB_POOL_MAX_SIZE", "0"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DB_POOL_MAX_SIZE > 0:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(int(os.environ.get("DB_POOL_MIN_SIZE", "2")), DB_POOL_MAX_SIZE),
        "max_size": DB_POOL_MAX_SIZE,
        # Seconds a request waits for a free connection before failing (answered with a 503).
        "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django requires it with a pool

# PostgreSQL: seconds to wait for a new connection before giving up (libpq's connect_timeout, whole
# seconds, at least 2), so an unreachable host (packets dropped, not refused) is a 503, not a hang.
DB_CONNECT_TIMEOUT = int(os.environ.get("DB_CONNECT_TIMEOUT", "3"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", DB_CONNECT_TIMEOUT)
# The circuit breaker of flashcards.http.db_errors: while PostgreSQL refuses connections, requests
# that need it get their 503 at once, and one probe every this many seconds notices its return.
DB_BREAKER_PROBE_SECONDS = float(os.environ.get("DB_BREAKER_PROBE_SECONDS", "0.5"))

# SQLite reads the database file through a memory map of up to this many bytes (0 turns it off):
# each connection reads pages straight from the operating
# system's cache instead of copying them into its own 2 MB page cache with a system call each.
# MATCH at 100k cards: 3.3 -> 1.3 ms (docs/benchmarks.md). SQLite's own build caps it at ~2 GB.
SQLITE_MMAP_SIZE = int(os.environ.get("SQLITE_MMAP_SIZE", str(2**31 - 2**16)))

# SQLite: seconds a writer waits for another's lock before "database is locked" (a 503 with
# Retry-After). Below the dialect's statement time limit (5 s), so every route answers a locked
# database within the documented limit; a dialect request waits at most what is left of its own
# limit (dsl.runtime.backends.statement_deadline). Checked at start-up (dsl.checks).
SQLITE_BUSY_TIMEOUT_SECONDS = float(os.environ.get("SQLITE_BUSY_TIMEOUT_SECONDS", "4"))

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers proceed while one writer commits; IMMEDIATE takes the write lock at BEGIN
    # so two writers queue instead of failing with "database is locked" mid-transaction.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
        "init_command": (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
            f"PRAGMA mmap_size={SQLITE_MMAP_SIZE};"
        ),
    }
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("SQLITE_TEST_NAME") or None}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Serve app static files (admin, DRF, Swagger) straight from the apps, so `make run` under
# uvicorn needs no collectstatic step; production may still run collectstatic.
WHITENOISE_USE_FINDERS = True

# Any active user signs in here (the admin's login admits staff only) and lands on the console.
LOGIN_URL = "rest_framework:login"
LOGIN_REDIRECT_URL = "console"

DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024 + 1024
# Every body is received before a worker thread takes the request (flashcards.http.body_limit):
# at most this many bytes on routes outside /v1/ that take no upload, and a body that stalls (no
# byte for this many seconds) is answered 408 and its connection closed (docs/deployment.md).
REQUEST_BODY_MAX_BYTES = int(os.environ.get("REQUEST_BODY_MAX_BYTES", str(1024 * 1024)))
REQUEST_BODY_IDLE_SECONDS = float(os.environ.get("REQUEST_BODY_IDLE_SECONDS", "10"))

# The rate limit counts requests in this cache, so it must be shared by every worker process: the
# default is a directory on disk with atomic counters (flashcards.cache, no setup step);
# production sets Redis or Memcached via
# CACHE_BACKEND / CACHE_LOCATION (docs/deployment.md).
# Every key is prefixed per deployment (CACHE_KEY_PREFIX, default: named after the database), so
# two installations sharing one Redis, or a fresh database beside an old cache, never share counts.
CACHE_KEY_PREFIX = (
    os.environ.get("CACHE_KEY_PREFIX")
    or "fc-"
    + hashlib.sha256(
        f"{DATABASES['default']['ENGINE']}:{DATABASES['default'].get('HOST', '')}:"
        f"{DATABASES['default'].get('PORT', '')}:{DATABASES['default']['NAME']}".encode()
    ).hexdigest()[:12]
)
# Django's Redis backend is served by flashcards.cache.BoundedRedisCache: one connection pool per
# process, connect and socket timeouts of CACHE_TIMEOUT_SECONDS, a failed Redis remembered for
# CACHE_RETRY_SECONDS (docs/deployment.md, "Redis").
CACHE_BACKEND = os.environ.get("CACHE_BACKEND", "flashcards.cache.LockingFileBasedCache")
if CACHE_BACKEND == "django.core.cache.backends.redis.RedisCache":
    CACHE_BACKEND = "flashcards.cache.BoundedRedisCache"
CACHE_TIMEOUT_SECONDS = float(os.environ.get("CACHE_TIMEOUT_SECONDS", "0.25"))
CACHE_RETRY_SECONDS = float(os.environ.get("CACHE_RETRY_SECONDS", "2"))
CACHES = {
    "default": {
        "BACKEND": CACHE_BACKEND,
        "LOCATION": os.environ.get("CACHE_LOCATION", str(BASE_DIR / "var" / "cache")),
        "KEY_PREFIX": CACHE_KEY_PREFIX,
    }
}

# Seconds an authenticated API key (with its user and selected workspace) is reused per process
# without a query; changes made through the product are seen at once (flashcards.services
# .key_cache). 0 turns the cache off.
AUTH_CACHE_SECONDS = float(os.environ.get("AUTH_CACHE_SECONDS", "5"))
# How often each process reads the shared generation that announces such changes.
AUTH_GENERATION_CHECK_SECONDS = float(os.environ.get("AUTH_GENERATION_CHECK_SECONDS", "0.25"))

# PostgreSQL: a lone read repeated on a connection is prepared there and run with EXECUTE, so the
# server can skip planning it (dsl.runtime.prepared_reads). Turn off behind PgBouncer's transaction pooling.
DSL_PREPARED_READS = env_bool("DSL_PREPARED_READS", True)

# The query log is written off the request path by a background thread per process, in batches
# (dsl.runtime.querylog_writer); QUERY_LOG_ASYNC=0 writes each row on the request path instead.
QUERY_LOG_ASYNC = env_bool("QUERY_LOG_ASYNC", True)
QUERY_LOG_QUEUE_SIZE = int(os.environ.get("QUERY_LOG_QUEUE_SIZE", "10000"))
QUERY_LOG_BATCH = int(os.environ.get("QUERY_LOG_BATCH", "200"))
QUERY_LOG_FLUSH_SECONDS = float(os.environ.get("QUERY_LOG_FLUSH_SECONDS", "0.1"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "flashcards.http.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "flashcards.http.parsers.SafeJSONParser",
        "flashcards.http.parsers.AnyBodyAsJSONParser",
    ],
    # Database outages → 503 SERVICE_UNAVAILABLE; everything else → flashcards.http.envelope.
    "EXCEPTION_HANDLER": "flashcards.http.db_errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": ["flashcards.http.throttling.AgentRateThrottle"],
    "DEFAULT_METADATA_CLASS": "flashcards.http.metadata.EnvelopeMetadata",
    # An unknown ?format= or an Accept no renderer satisfies: a 404 / 406 envelope, never a 500.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "flashcards.http.negotiation.EnvelopeContentNegotiation",
}

# Requests per minute per user (all their API keys, OAuth connections and console sessions share
# one budget); 0 disables the limit.
AGENT_RATE_LIMIT = int(os.environ.get("AGENT_RATE_LIMIT", "120"))
# Statements of one user in flight at once per server process (REST, MCP, console), so one user
# cannot hold every one of the SERVER_THREADS threads; 0 disables the bound.
AGENT_CONCURRENT_STATEMENTS = int(os.environ.get("AGENT_CONCURRENT_STATEMENTS", "2"))

# The dialect's limits (dsl.md §8); any key may be overridden here or via FLASHCARDS_DSL_* env.
FLASHCARDS_DSL: dict[str, object] = {}

# The MCP authorization flow (docs/mcp.md "Connectors"): this server is the OAuth 2.1 authorization
# server (django-oauth-toolkit, endpoints under /o/, metadata at the root /.well-known/ forms) and
# the resource server of /mcp. See flashcards.oauth.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"  # named by our migration
OAUTH_MAX_REGISTRATIONS = int(os.environ.get("OAUTH_MAX_REGISTRATIONS", "500"))
# Registrations nobody approved are deleted after this long (flashcards.oauth.registration), and one
# address registers at most this many clients an hour.
OAUTH_UNAPPROVED_REGISTRATION_SECONDS = int(
    os.environ.get("OAUTH_UNAPPROVED_REGISTRATION_SECONDS", "900")
)
OAUTH_REGISTRATIONS_PER_ADDRESS = int(os.environ.get("OAUTH_REGISTRATIONS_PER_ADDRESS", "10"))
OAUTH2_PROVIDER = {
    "SCOPES": {"mcp": "Use the flashcards tools over MCP as you, in your workspaces"},
    "DEFAULT_SCOPES": ["mcp"],
    "OAUTH2_VALIDATOR_CLASS": "flashcards.oauth.validators.ConnectionValidator",
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("OAUTH_ACCESS_TOKEN_SECONDS", "3600")),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(
        os.environ.get("OAUTH_REFRESH_TOKEN_SECONDS", str(30 * 24 * 3600))
    ),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    # A refresh token used twice revokes its whole family (RFC 9700 §4.14.2).
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "PKCE_REQUIRED": True,
    # RFC 9700 gates, all on: S256 only, no implicit or password grant, tokens only in the
    # Authorization header, `iss` on the authorization response, tokens stored hashed.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    # http stays allowed for native clients' loopback redirects (RFC 8252); registration refuses
    # any other http redirect URI (flashcards.oauth.registration), so this check only warns.
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": False,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # Loopback redirect URIs match on any port (RFC 8252 §7.3), `localhost` included.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https"],
    "REQUEST_APPROVAL_PROMPT": "force",
    "DCR_ENABLED": True,
    # RFC 7592 registration access tokens: an hour, then the registration can no longer be managed.
    "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 3600,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_post",
        "client_secret_basic",
    ],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "flashcards-sql MCP server",
}

# W008 says plain-http redirect URIs are allowed: they are, for native clients' loopback callbacks
# only (RFC 8252); flashcards.oauth.registration refuses every other http redirect URI.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

SERVICE_NAME = "flashcards-sql"
SERVICE_VERSION = "0.1.0"

SPECTACULAR_SETTINGS = {
    "TITLE": "Flashcards agent API",
    "DESCRIPTION": (
        "REST routes of the flashcards backend. Agents start at GET /v1/ (discovery); the SQL "
        "dialect is documented at /v1/agent/grammar. Authenticate with 'Authorization: ApiKey "
        "fca_…' (or 'Bearer fca_…')."
    ),
    "VERSION": SERVICE_VERSION,
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI from the pinned drf-spectacular-sidecar package, served by the app: /v1/docs
    # works offline and loads nothing from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # Error statuses, headers and codes of every /v1/ operation; then the dialect's shapes
        # (rows from the resource registry, the SQL data, its error codes, /mcp, the grammar page).
        "flashcards.api.contract.add_contract",
        "dsl.surfaces.openapi.add_contract",
        "dsl.surfaces.openapi.add_examples",
    ],
}

# Request ids (flashcards.http.request_id): the X-Request-Id (REQUEST_ID_HEADER) of a request from
# one of these peers (addresses or networks: the reverse proxy) is kept as its id; from any other
# peer it is ignored. Every log line carries the id of the request that wrote it.
TRUSTED_PROXY_IPS = env_list("TRUSTED_PROXY_IPS")
REQUEST_ID_HEADER = os.environ.get("REQUEST_ID_HEADER", "X-Request-Id")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "flashcards.http.request_id.RequestIdFilter"}},
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": "line",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
