"""The leadrelay receiver, the HTTP edge: verify, parse, dedupe, enqueue, answer.

Notes: docs/internals/webhook_app.md
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

    from workers.config.settings import Settings


def create_app(settings: "Settings | None" = None) -> "Flask":
    """Build the app; settings come from the environment unless given.

    Raises:
        ConfigError: a setting the web process needs is missing or malformed.
    """
    from flask import Flask

    from workers.common import logs, replication
    from workers.common.queues import connect, queue
    from workers.config import mappingfile, needed
    from workers.config.settings import load
    from workers.intake.requestredis import RequestRedis

    from . import admin, admin_actions, admin_page, api, errors, health, people, prometheus, webhooks  # noqa: F401
    from .bodies import WholeBodies

    if settings is None:
        settings = load(role=needed.WEB)
    else:
        needed.require(settings, needed.WEB)
    logs.configure(settings.log_level)
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.wsgi_app = WholeBodies(app.wsgi_app, settings.max_body_bytes, settings.body_timeout_seconds)
    if settings.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        # Behind a load balancer every request comes from its address: read the client's
        # from X-Forwarded-For (throttling, logs), set by that many proxies and no more.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies, x_proto=settings.trusted_proxies)
    connection = connect(settings.redis_url)
    replication.configure(settings.replica_acks, settings.replica_ack_timeout_ms)
    app.extensions["leadrelay"] = {
        "settings": settings,
        "redis": connection,
        "queue": queue(connection, settings.queue_name),
        "request_redis": RequestRedis(connection),  # the webhook's one Redis call per request
    }
    app.extensions["leadrelay"].update(mappingfile.validate(settings))
    errors.init_app(app)
    app.register_blueprint(webhooks.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(admin.bp)
    admin_page.init_app(app, settings.admin_token, settings.admin_cookie_secure)
    app.register_blueprint(api.bp)
    app.register_blueprint(prometheus.bp)
    return app
