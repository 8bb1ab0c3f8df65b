"""The MCP authorization flow: this server as the OAuth 2.1 authorization server (on
django-oauth-toolkit) and as the resource server of /mcp, with every grant an agent connection.

A user's consent to a client becomes a `Connection`: an `ApiKey` row (label, selected workspace,
last used, revocable on /account/api-keys/) whose secret nobody holds, reached only through the
client's access tokens. Everything downstream of authentication — the per-key rate limit, the
query log's `api_key`, the key's selected workspace — therefore treats a connector exactly like an
API key. See docs/mcp.md "Connectors" and docs/decisions.md.
"""
