"""The leadrelay receiver: verify, parse, dedupe, enqueue, answer. Nothing else."""

from __future__ import annotations

from flask import Flask

from workers.queues import connect, queue

from . import admin, admin_page, api, config, errors, formconfig, health, logs, metrics, webhooks


def create_app(settings: config.Settings | None = None) -> Flask:
    """Build the app; settings come from the environment unless given.

    Raises:
        ConfigError: a setting the web process needs is missing or malformed.
    """
    if settings is None:
        settings = config.load(role=config.WEB)
    else:
        config.require(settings, config.WEB)
    logs.configure(settings.log_level)
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    connection = connect(settings.redis_url)
    app.extensions["leadrelay"] = {
        "settings": settings,
        "redis": connection,
        "queue": queue(connection, settings.queue_name),
    }
    app.extensions["leadrelay"].update(formconfig.validate(settings.config_path))
    errors.init_app(app)
    app.register_blueprint(webhooks.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(admin.bp)
    admin_page.init_app(app, settings.admin_token)
    app.register_blueprint(api.bp)
    app.register_blueprint(metrics.bp)
    return app
