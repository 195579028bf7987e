"""SES tenants (one per free tenant) and what a paused one does to a send, against botocore's real
sesv2 request and response shapes: the Stubber validates every request against the service model."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from botocore.stub import Stubber

from herald.adapters.providers.ses import SesProvider
from herald.adapters.providers.ses_tenants import SesSending, SesTenants, ses_tenant_name
from herald.domain.errors import DependencyError
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, FailureKind, ProviderFailure, Routing
from tests.unit.test_provider_ses import expected_request, ses_client

if TYPE_CHECKING:
    from mypy_boto3_sesv2 import SESV2Client

SENDER = "notifications@herald.test"
TENANT = "3f2b8c1e-7d4a-4e5b-9c0d-1a2b3c4d5e6f"
NAME = f"herald-{TENANT}"
ARN = f"arn:aws:ses:us-east-1:123456789012:tenant/{NAME}/tn-0123456789"
IDENTITY = "arn:aws:ses:us-east-1:123456789012:identity/herald.test"
POLICY = "arn:aws:ses:us-east-1:aws:reputation-policy/standard"
EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="someone@tenant.test")


@pytest.fixture(scope="module")
def client() -> SESV2Client:
    return ses_client()


@pytest.fixture
def stubber(client: SESV2Client) -> Iterator[Stubber]:
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


@pytest.fixture
def tenants(client: SESV2Client) -> SesTenants:
    return SesTenants(lambda: client, SENDER)


def tenant_answer(status: str, name: str = NAME, arn: str = ARN) -> dict[str, Any]:
    return {
        "Tenant": {
            "TenantName": name,
            "TenantId": "tn-0123456789",
            "TenantArn": arn,
            "CreatedTimestamp": datetime(2026, 12, 4, 9, 30, tzinfo=UTC),
            "SendingStatus": status,
        }
    }


def expect_setup(stubber: Stubber, *, name: str = NAME, arn: str = ARN) -> None:
    """The association and the policy that follow a tenant's creation, in that order."""
    stubber.add_response(
        "create_tenant_resource_association", {}, {"TenantName": name, "ResourceArn": IDENTITY}
    )
    stubber.add_response(
        "update_reputation_entity_policy",
        {},
        {
            "ReputationEntityType": "RESOURCE",
            "ReputationEntityReference": arn,
            "ReputationEntityPolicy": POLICY,
        },
    )


# ---------------------------------------------------------------- names


def test_a_tenant_name_is_the_prefixed_id_within_ses_name_rules() -> None:
    assert ses_tenant_name(TENANT) == NAME
    assert ses_tenant_name("acme.corp/7") == "herald-acme-corp-7"
    assert len(ses_tenant_name("x" * 100)) == 64


# ---------------------------------------------------------------- creation


def test_given_a_new_tenant_then_it_is_created_with_the_identity_and_the_standard_policy(
    stubber: Stubber, tenants: SesTenants
) -> None:
    stubber.add_response(
        "create_tenant",
        {"TenantName": NAME, "TenantId": "tn-0123456789", "TenantArn": ARN, "SendingStatus": "ENABLED"},
        {"TenantName": NAME},
    )
    expect_setup(stubber)

    tenant = tenants.ensure(TENANT)

    assert (tenant.name, tenant.arn, tenant.sending) == (NAME, ARN, SesSending.ENABLED)


def test_given_an_interrupted_earlier_setup_then_ensure_finishes_it_without_failing(
    stubber: Stubber, tenants: SesTenants
) -> None:
    stubber.add_client_error("create_tenant", "AlreadyExistsException", "Tenant exists", http_status_code=400)
    stubber.add_response("get_tenant", tenant_answer("ENABLED"), {"TenantName": NAME})
    stubber.add_client_error(
        "create_tenant_resource_association",
        "AlreadyExistsException",
        "Already associated",
        http_status_code=400,
    )
    stubber.add_response(
        "update_reputation_entity_policy",
        {},
        {
            "ReputationEntityType": "RESOURCE",
            "ReputationEntityReference": ARN,
            "ReputationEntityPolicy": POLICY,
        },
    )

    assert tenants.ensure(TENANT).arn == ARN


def test_given_ses_refuses_the_creation_then_ensure_raises_a_dependency_error(
    stubber: Stubber, tenants: SesTenants
) -> None:
    stubber.add_client_error(
        "create_tenant", "LimitExceededException", "Too many tenants", http_status_code=400
    )

    with pytest.raises(DependencyError, match="SES tenant not set up"):
        tenants.ensure(TENANT)


# ---------------------------------------------------------------- status, list, resume


@pytest.mark.parametrize(
    ("status", "sending"),
    [("ENABLED", SesSending.ENABLED), ("DISABLED", SesSending.PAUSED), ("REINSTATED", SesSending.REINSTATED)],
)
def test_the_status_read_maps_ses_sending_status(
    stubber: Stubber, tenants: SesTenants, status: str, sending: SesSending
) -> None:
    stubber.add_response("get_tenant", tenant_answer(status), {"TenantName": NAME})

    tenant = tenants.status(TENANT)

    assert tenant is not None
    assert tenant.sending is sending
    assert tenant.created_at == "2026-12-04T09:30:00+00:00"


def test_a_tenant_never_created_has_no_status(stubber: Stubber, tenants: SesTenants) -> None:
    stubber.add_client_error("get_tenant", "NotFoundException", "No such tenant", http_status_code=404)

    assert tenants.status(TENANT) is None


def test_the_paused_tenants_are_listed_page_by_page(stubber: Stubber, tenants: SesTenants) -> None:
    paused = {"Filter": {"SENDING_STATUS": "DISABLED"}, "PageSize": 100}
    stubber.add_response(
        "list_tenants",
        {"Tenants": [{"TenantName": "herald-a", "SendingStatus": "DISABLED"}], "NextToken": "p2"},
        paused,
    )
    stubber.add_response(
        "list_tenants",
        {"Tenants": [{"TenantName": "herald-b", "SendingStatus": "DISABLED"}]},
        {**paused, "NextToken": "p2"},
    )

    assert tenants.paused() == ["herald-a", "herald-b"]


def test_resume_reinstates_the_tenant_through_its_reputation_entity(
    stubber: Stubber, tenants: SesTenants
) -> None:
    stubber.add_client_error("create_tenant", "AlreadyExistsException", "Tenant exists", http_status_code=400)
    stubber.add_response("get_tenant", tenant_answer("DISABLED"), {"TenantName": NAME})
    expect_setup(stubber)
    stubber.add_response(
        "update_reputation_entity_customer_managed_status",
        {},
        {"ReputationEntityType": "RESOURCE", "ReputationEntityReference": ARN, "SendingStatus": "REINSTATED"},
    )
    stubber.add_response("get_tenant", tenant_answer("REINSTATED"), {"TenantName": NAME})

    assert tenants.resume(TENANT).sending is SesSending.REINSTATED


# ---------------------------------------------------------------- sends of a paused or missing tenant

OTHER_NAME = "herald-tenant-42"
OTHER_ARN = f"arn:aws:ses:us-east-1:123456789012:tenant/{OTHER_NAME}/tn-42"


@pytest.fixture
def ses(client: SESV2Client) -> SesProvider:
    return SesProvider(lambda: client, SENDER)


def test_given_the_tenant_is_paused_then_the_send_fails_provider_permanent_naming_sending_paused(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_client_error("send_email", "SendingPausedException", "Sending paused", http_status_code=400)
    stubber.add_response(
        "get_tenant", tenant_answer("DISABLED", OTHER_NAME, OTHER_ARN), {"TenantName": OTHER_NAME}
    )

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, Credential(""))

    failure = caught.value
    assert (failure.kind, failure.code, failure.status) == (
        FailureKind.PROVIDER_PERMANENT,
        "sending_paused",
        400,
    )
    assert failure.reason == (
        "SES paused this account's free-plan sending after too many bounces or complaints (sending_paused); "
        "other accounts keep sending, and the operator can resume it"
    )


def test_given_the_whole_account_is_paused_then_the_failure_stays_ses_own(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_client_error(
        "send_email", "SendingPausedException", "Sending paused for this account", http_status_code=400
    )
    stubber.add_response(
        "get_tenant", tenant_answer("ENABLED", OTHER_NAME, OTHER_ARN), {"TenantName": OTHER_NAME}
    )

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, Credential(""))

    assert (caught.value.code, caught.value.reason) == (
        "SendingPausedException",
        "Sending paused for this account",
    )
    assert caught.value.kind is FailureKind.PROVIDER_PERMANENT


def test_given_the_ses_tenant_is_missing_then_it_is_set_up_and_the_send_tried_once_more(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_client_error("send_email", "NotFoundException", "Tenant not found", http_status_code=404)
    stubber.add_response(
        "create_tenant", {"TenantName": OTHER_NAME, "TenantArn": OTHER_ARN}, {"TenantName": OTHER_NAME}
    )
    expect_setup(stubber, name=OTHER_NAME, arn=OTHER_ARN)
    stubber.add_response("send_email", {"MessageId": "after-setup"}, expected_request())

    assert ses.send(EMAIL, ROUTING, Credential("")).provider_message_id == "after-setup"


def test_given_the_setup_fails_too_then_the_send_fails_with_ses_own_not_found(
    stubber: Stubber, ses: SesProvider
) -> None:
    stubber.add_client_error(
        "send_email", "NotFoundException", "Configuration set does not exist", http_status_code=404
    )
    stubber.add_client_error("create_tenant", "TooManyRequestsException", "slow down", http_status_code=429)

    with pytest.raises(ProviderFailure) as caught:
        ses.send(EMAIL, ROUTING, Credential(""))

    assert (caught.value.kind, caught.value.reason) == (
        FailureKind.PROVIDER_PERMANENT,
        "Configuration set does not exist",
    )
