"""``manage.py serve --workers N --host H --port P``: the production server (docs/deployment.md).

It runs ``config.asgi:application`` under uvicorn with the options the deployment document
recommends, in N worker processes sharing one listening socket, with the settings the environment
gives (DJANGO_SETTINGS_MODULE, DATABASE_URL, SECRET_KEY, …).

Why not ``uvicorn --workers N``: uvicorn's supervisor binds the shared socket without naming its
protocol (``socket.socket(family)``, protocol 0), accepted connections inherit that, and asyncio
only turns Nagle's algorithm off (TCP_NODELAY) for sockets that report IPPROTO_TCP. Every response
on a keep-alive connection after the first then waits for the client's delayed ACK, ~40 ms on
Linux (upstream: Kludex/uvicorn#3149; the gunicorn UvicornWorker pre-binds the same way). Here the
socket is made with ``IPPROTO_TCP`` and TCP_NODELAY set on it (accepted sockets inherit both), and
handed to uvicorn's own supervisor, which restarts a worker that dies.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

APPLICATION = "config.asgi:application"


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A bound TCP socket whose accepted connections report IPPROTO_TCP and have Nagle off."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise CommandError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def uvicorn_options(options: dict[str, Any]) -> dict[str, Any]:
    """The uvicorn configuration of docs/deployment.md."""
    return {
        "workers": options["workers"],
        "lifespan": "on",  # the MCP session manager and the query-log flush need it
        # config.asgi applies X-Forwarded-* itself, after noting the connection's own peer
        # (flashcards.http.request_id); uvicorn's handling would replace that peer first.
        "proxy_headers": False,
        "server_header": False,
        "access_log": options["access_log"],
        "log_level": options["log_level"],
        "timeout_keep_alive": options["keep_alive"],
        "timeout_graceful_shutdown": options["graceful_timeout"],
        "limit_concurrency": options["limit_concurrency"],
        "backlog": options["backlog"],
        "h11_max_incomplete_event_size": 64 * 1024,
    }


class Command(BaseCommand):
    help = "Serve the application in production: uvicorn, N worker processes, one shared socket."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "1"))
        )
        parser.add_argument(
            "--forwarded-allow-ips",
            default=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"),
            help="Proxies trusted for X-Forwarded-For / X-Forwarded-Proto.",
        )
        parser.add_argument("--keep-alive", type=int, default=5, help="Idle keep-alive seconds.")
        parser.add_argument("--graceful-timeout", type=int, default=20)
        parser.add_argument("--limit-concurrency", type=int, default=None)
        parser.add_argument("--backlog", type=int, default=2048)
        parser.add_argument("--log-level", default=os.environ.get("LOG_LEVEL", "warning").lower())
        parser.add_argument("--access-log", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn
        from uvicorn.supervisors import Multiprocess

        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        if not settings.DEBUG and not os.environ.get("SECRET_KEY"):
            raise CommandError("SECRET_KEY must be set to serve with DEBUG off.")
        # manage.py lets operator commands run without a key; the served application must not.
        if os.environ.get("SECRET_KEY"):
            os.environ.pop("DJANGO_ALLOW_INSECURE_KEY", None)
        # Read by config.asgi, in this process and in the workers it starts.
        os.environ["FORWARDED_ALLOW_IPS"] = options["forwarded_allow_ips"]
        # Workers exit when this process dies (config.asgi.exit_with_the_supervisor).
        os.environ["SERVE_SUPERVISOR_PID"] = str(os.getpid())
        sock = listening_socket(options["host"], options["port"], options["backlog"])
        config = uvicorn.Config(APPLICATION, **uvicorn_options(options))
        self.stdout.write(
            f"Serving {APPLICATION} on http://{options['host']}:{sock.getsockname()[1]} with "
            f"{options['workers']} worker(s)",
        )
        self.stdout.flush()
        try:
            if options["workers"] == 1:
                uvicorn.Server(config).run(sockets=[sock])
            else:
                Multiprocess(config, sockets=[sock]).run()
        except KeyboardInterrupt:
            pass
        finally:
            sock.close()
