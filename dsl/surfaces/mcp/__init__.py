"""The MCP surface (domain.md §4a): the server and its tools, the file tools, resources and prompts."""
