"""Cross-cutting refusals of issue #21 that belong to no one surface: login throttling, the
Content-Security-Policy of HTML pages, JSON for every answer under /v1/ and /mcp, forwarded
headers only from trusted proxies, and small per-address counters. See docs/reliability.md
"Hostile files, tokens and staff"."""
