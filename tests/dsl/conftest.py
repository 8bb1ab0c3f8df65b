"""The dialect's HTTP tests go through the real URLconf, middleware, authentication and view; their
fixtures (sql, ok, fails) and envelope checks are tests/support's."""
