"""Settings for the test suite: the production settings with a throwaway secret and no rate limit
(rate-limit tests turn it back on with override_settings)."""

import os

os.environ.setdefault("DJANGO_ALLOW_INSECURE_KEY", "1")
os.environ.setdefault("AGENT_RATE_LIMIT", "0")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
