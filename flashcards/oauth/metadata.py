"""RFC 9728 protected-resource metadata for /mcp, served at both well-known forms.

The path form (`/.well-known/oauth-protected-resource/mcp`) is what a 401 from /mcp points to; the
root form (`/.well-known/oauth-protected-resource`) is where clients look without one. This
server protects one resource, so both describe /mcp: `resource` is the MCP URL (the audience
every token is bound to) and `authorization_servers` this server's own issuer, whose RFC 8414
document sits at the root `/.well-known/oauth-authorization-server` although its endpoints live
under /o/.
"""

from __future__ import annotations

from django.http import HttpRequest
from oauth2_provider.views import OAuthProtectedResourceMetadataView

from flashcards.oauth.resource import mcp_resource_url


class McpResourceMetadataView(OAuthProtectedResourceMetadataView):
    def get_resource(self, request: HttpRequest) -> str:
        return mcp_resource_url(request)
