"""The ways in: REST, the grammar page, OpenAPI, MCP and the console. Each builds a request for
the runtime and renders its own envelope, wording and refusals."""
