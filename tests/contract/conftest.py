"""A black-box suite written from dsl.md alone: every request goes over HTTP through the real
URLconf, middleware, authentication and views with an API key, and every assertion is on the
returned envelope and rows. Fixture data is created through the product's own services, the way
an agent or a client would have written it. Its fixtures (sql, ok, rows, fails, reason) are
tests/support's."""
