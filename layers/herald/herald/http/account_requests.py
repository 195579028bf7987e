"""The request bodies of the account routes and of the console's sign-in, apart from the send path's
(``herald.http.requests``): the API imports them with the account routes, on their first need."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from herald.domain.account import MAX_GRACE_SECONDS
from herald.domain.vendors import TENANT_PROVIDERS
from herald.http.requests import (
    DOMAIN_NAME,
    EMAILED_CODE,
    EmailAddress,
    ProviderCredential,
    StrictBody,
    WholeNumber,
)


class ProviderKeyRequest(StrictBody):
    apiKey: ProviderCredential  # noqa: N815 (the API's field names)
    accountToken: ProviderCredential | None = None  # noqa: N815
    webhookSecret: str | None = Field(default=None, min_length=1, max_length=1024)  # noqa: N815


class PriorityRequest(StrictBody):
    # A place in the order of the tenant's providers, of which it has at most one per vendor.
    priority: WholeNumber = Field(ge=1, le=len(TENANT_PROVIDERS))


class RotateKeyRequest(StrictBody):
    graceSeconds: WholeNumber = Field(default=0, ge=0, le=MAX_GRACE_SECONDS)  # noqa: N815


class DomainRequest(StrictBody):
    # DNS names compare without regard to case (RFC 4343): Mail.Example.COM is stored as mail.example.com.
    domain: Annotated[
        str,
        Field(
            min_length=4,
            max_length=253,
            pattern=DOMAIN_NAME,
            description="A sending domain such as mail.example.com, in any letter case (kept in lower case)",
        ),
        AfterValidator(str.lower),
    ]


# ---------------------------------------------------------------- the console's browser routes


class SignUpRequest(StrictBody):
    email: EmailAddress
    name: str = Field(min_length=1, max_length=100, description="The account's name (a team or product)")

    @field_validator("name")
    @classmethod
    def _single_line(cls, value: str) -> str:
        if not value.strip() or any(unicodedata.category(char).startswith("C") for char in value):
            raise ValueError("must be one line of visible text")
        return value.strip()


class SignInRequest(StrictBody):
    email: EmailAddress


class VerifyCodeRequest(StrictBody):
    email: EmailAddress
    code: str = Field(pattern=EMAILED_CODE, description="The six digits of the emailed code")


class CheckoutRequest(StrictBody):
    plan: Literal["indie", "startup"]
    processor: Literal["polar", "paystack"] | None = Field(
        default=None, description="Which processor takes the payment (default: the first that sells the plan)"
    )
