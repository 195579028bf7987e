"""ConsoleFunction: the console's page and assets, and the routes only a browser needs (sign-up,
sign-in by emailed code, sign-out, the person's accounts and switching between them). Everything else the console does goes through the API's own
routes, authenticated by the session cookie these routes set (docs/console.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from herald.composition import startup
from herald.composition.common import public_origin
from herald.composition.console import console_services, one_click
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.signin import CodePurpose
from herald.domain.unsubscribes import ALL_TOPICS
from herald.http.access_answers import ConsoleAccount, SwitchedAccount
from herald.http.access_requests import SwitchAccountRequest
from herald.http.account_answers import CodeSent, SignedIn, SignedOut
from herald.http.account_requests import SignInRequest, SignUpRequest, VerifyCodeRequest
from herald.http.answers import json_response
from herald.http.console_pages import console_answer, is_console_path
from herald.http.credentials import (
    UNSAFE_METHODS,
    cleared_cookie,
    require_same_origin,
    session_cookie,
    session_token,
    stack_origin,
)
from herald.http.error_handlers import install_error_handlers
from herald.http.errors import refusal
from herald.http.guards import ScreenedBodies, as_resolver_reads
from herald.http.responses import error_response, validation_error
from herald.http.transport import secured
from herald.http.unsubscribe_pages import (
    is_unsubscribe_path,
    link_parts,
    not_valid_page,
    page_answer,
    subscribed_page,
    unsubscribed_page,
)
from herald.observability import logger, metrics, traced

STATIC = Path(__file__).parent / "static"
CODE_SENT = CodeSent(
    message="If this address can receive mail, a code is on its way; it works for 10 minutes."
)

bodies = ScreenedBodies()
app = APIGatewayHttpResolver(enable_validation=True, json_body_deserializer=bodies.deserialize)
install_error_handlers(app)


def _client_ip() -> str:
    return str(app.current_event.request_context.http.source_ip)


def _console_url() -> str:
    return f"{stack_origin(app.current_event.raw_event, public_origin())}/console"


@app.post("/api/v1/signup")
def sign_up(request: Annotated[SignUpRequest, Body()]) -> Response[str]:
    console_services().signin.request_code(
        CodePurpose.SIGN_UP, request.email, _client_ip(), _console_url(), name=request.name
    )
    return json_response(202, CODE_SENT)


@app.post("/api/v1/signin")
def sign_in(request: Annotated[SignInRequest, Body()]) -> Response[str]:
    console_services().signin.request_code(CodePurpose.SIGN_IN, request.email, _client_ip(), _console_url())
    return json_response(202, CODE_SENT)


@app.post("/api/v1/signin/verify")
def verify(request: Annotated[VerifyCodeRequest, Body()]) -> Response[str]:
    signed_in = console_services().signin.verify(request.email, request.code, _client_ip())
    answer = json_response(200, SignedIn(tenant_id=signed_in.tenant_id, api_key=signed_in.api_key))
    answer.cookies.append(session_cookie(signed_in.session.token))
    return answer


@app.post("/api/v1/signout")
def sign_out() -> Response[str]:
    token = session_token(app.current_event.raw_event)
    if token is not None:
        console_services().sessions.end(token)
    answer = json_response(200, SignedOut(signed_out=True))
    answer.cookies.append(cleared_cookie())
    return answer


def _session() -> str:
    token = session_token(app.current_event.raw_event)
    if token is None:
        raise HeraldError("Sign in to the console first.", ErrorCode.INVALID_SESSION)
    return token


@app.get("/api/v1/console/accounts")
def accounts() -> Response[str]:
    """The accounts the signed-in person belongs to (the console's account switcher)."""
    choices = console_services().accounts.accounts(_session())
    return json_response(200, [ConsoleAccount.of(choice) for choice in choices])


@app.post("/api/v1/console/switch")
def switch(request: Annotated[SwitchAccountRequest, Body()]) -> Response[str]:
    """A new session in another account of the person's; the old session ends."""
    started = console_services().accounts.switch(_session(), request.tenantId)
    answer = json_response(200, SwitchedAccount(tenant_id=started.session.tenant_id))
    answer.cookies.append(session_cookie(started.token))
    return answer


@app.exception_handler(RequestValidationError)
def invalid_request(error: RequestValidationError) -> Response[str]:
    return error_response(validation_error(error.errors()))


@traced
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    method, path = event["requestContext"]["http"]["method"], event.get("rawPath", "")
    origin = stack_origin(event, public_origin())
    if is_console_path(path):
        return secured(console_answer(STATIC, method, path), origin, api=False)
    if is_unsubscribe_path(path):
        return secured(_unsubscribe_link(event, method, path, origin), origin, api=False)
    answer = (
        bodies.admit(event) or _cross_origin(event, origin) or app.resolve(as_resolver_reads(event), context)
    )
    return secured(answer, origin, api=True)


def _unsubscribe_link(event: dict[str, Any], method: str, path: str, origin: str) -> dict[str, Any]:
    """RFC 8058: the POST comes without cookie or key (the token is the credential), whatever its
    body (``List-Unsubscribe=One-Click``, form-encoded or multipart, or none), and is answered 200
    with a page, never a redirect. A token Herald did not sign is a 404 like any unknown page."""
    token, resubscribe = link_parts(path)
    links = one_click()
    try:
        if method == "POST" and resubscribe:
            # Only the link's own page resubscribes: another site cannot undo an unsubscribe.
            require_same_origin(event, origin)
            return page_answer(200, subscribed_page(token, links.resubscribe(token)))
        if method == "POST":
            return page_answer(200, unsubscribed_page(token, links.unsubscribe(token)))
        who, unsubscribe = links.unsubscribed(token)
        if unsubscribe is None:
            return page_answer(200, subscribed_page(token, who))
        return page_answer(200, unsubscribed_page(token, who, every_topic=unsubscribe.topic == ALL_TOPICS))
    except HeraldError as error:
        if error.code is ErrorCode.NOT_FOUND:
            return page_answer(404, not_valid_page())
        return refusal(error)


def _cross_origin(event: dict[str, Any], origin: str) -> dict[str, Any] | None:
    """Every browser route but the accounts list changes state (sends mail, starts or ends a
    session): same origin only, which also keeps another site from signing a visitor in to an
    account of its choosing. A read (the accounts list) is the SameSite cookie's alone."""
    if str(event["requestContext"]["http"]["method"]).upper() not in UNSAFE_METHODS:
        return None
    try:
        require_same_origin(event, origin)
    except HeraldError as error:
        return refusal(error)
    return None


startup.finish()
