"""The local stack's moto server: a request logged only when it answered with a server error, each
host routed to its backend once, and the stack created by clients that wait for it to build."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

import pytest
from werkzeug.serving import WSGIRequestHandler

from herald_local.aws.backend_routing import remember_backends_per_host
from herald_local.aws.server import log_only_server_errors
from herald_local.cloudformation.moto_stack import CREATE_TIMEOUT_SECONDS
from herald_local.config import LocalConfig
from herald_local.stack import setup_clients


class _Handler(WSGIRequestHandler):
    """A request handler without a connection: only what log_request reads."""

    def __init__(self) -> None:
        self.client_address = ("127.0.0.1", 50000)
        self.command, self.path, self.request_version = "POST", "/", "HTTP/1.1"


def test_only_a_server_error_reaches_the_access_log(caplog: pytest.LogCaptureFixture) -> None:
    log_only_server_errors(_Handler)
    handler = _Handler()
    with caplog.at_level(logging.INFO, logger="werkzeug"):
        for code in (200, 400, 404, 503):
            handler.log_request(code, 17)
    (record,) = caplog.records
    line = re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()).rstrip()  # werkzeug colours a 5xx line
    assert re.fullmatch(r'127\.0\.0\.1 - - \[[^\]]+\] "POST / HTTP/1\.1" 503 17', line), line


def test_each_host_is_routed_once_and_to_the_backend_moto_picks(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    listings: list[None] = []
    list_modules = backends.list_of_moto_modules

    def counted() -> Iterable[str]:
        listings.append(None)
        return list_modules()

    monkeypatch.setattr(backends, "list_of_moto_modules", counted)
    remember_backends_per_host()
    remember_backends_per_host()
    # Idempotent: moto's method under one wrapper, not two.
    chain: list[object] = [DomainDispatcherApplication.get_backend_for_host]
    while (inner := getattr(chain[-1], "__wrapped__", None)) is not None:
        chain.append(inner)
    assert len(chain) == 2
    dispatcher = DomainDispatcherApplication(create_backend_app)
    hosts = ["dynamodb.us-east-1.amazonaws.com", "sqs.us-east-1.amazonaws.com", "kms.us-east-1.amazonaws.com"]
    routed = [dispatcher.get_backend_for_host(host) for host in hosts * 3]
    assert routed == ["dynamodb", "sqs", "kms"] * 3
    assert len(listings) == len(hosts)
    assert DomainDispatcherApplication(create_backend_app).get_backend_for_host(None) is None


def test_the_stack_is_created_with_clients_that_wait_as_long_as_it_may_take_to_build() -> None:
    # moto answers CreateStack only once every resource exists: 2 s idle, over 10 s on a busy machine.
    config = LocalConfig.from_env({"AWS_DEFAULT_REGION": "eu-west-1"})
    cloudformation = setup_clients(config)("cloudformation")
    assert cloudformation.meta.config.read_timeout == CREATE_TIMEOUT_SECONDS >= 60
    assert cloudformation.meta.config.retries["total_max_attempts"] == 1
    assert (cloudformation.meta.endpoint_url, cloudformation.meta.region_name) == (
        config.moto_url,
        "eu-west-1",
    )
