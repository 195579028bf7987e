"""Attachments: what the API refuses (types, names, base64, sizes per provider), how the accept
stores them once and references them, and how the worker hands them to a provider."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest
from msgspec import to_builtins
from pydantic import ValidationError

from herald.adapters.store.conversions import request_document
from herald.domain.attachments import Attachment, allowance, size_cap
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.notifications import EmailNotification, NotificationRequest
from herald.domain.vendors import ProviderName
from herald.http.envelope import failure
from herald.http.requests import EmailRequest
from herald.http.responses import validation_error
from herald.services.auth import Credentials
from tests.unit.test_accept import API_KEY, Rig, tenant

PDF = b"%PDF-1.7\n" + b"x" * 1000
PDF_B64 = base64.b64encode(PDF).decode()


def body(*attachments: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "to": "u@example.com",
        "subject": "Invoice",
        "body": "<p>attached</p>",
        "attachments": list(attachments),
        **fields,
    }


def pdf(**fields: Any) -> dict[str, Any]:
    return {"filename": "invoice.pdf", "contentType": "application/pdf", "content": PDF_B64, **fields}


def refusal(document: dict[str, Any]) -> str:
    """The sentence the API answers an invalid body with (the edge locates problems in the body)."""
    with pytest.raises(ValidationError) as caught:
        EmailRequest.model_validate(document)
    errors = [{**error, "loc": ("body", *error["loc"])} for error in caught.value.errors()]
    return validation_error(errors).message


def request_of(document: dict[str, Any]) -> NotificationRequest:
    return EmailRequest.model_validate(document).to_request()


# ---------------------------------------------------------------- the request's rules


@pytest.mark.parametrize(
    "content_type",
    ["application/x-msdownload", "text/html", "application/javascript", "application/x-sh", "image/svg+xml"],
)
def test_a_dangerous_type_is_refused_naming_it(content_type: str) -> None:
    message = refusal(body(pdf(filename="run.bin", contentType=content_type)))
    assert f"attachments.0.contentType: content type {content_type} is not allowed" in message


def test_a_type_is_written_as_listed() -> None:
    message = refusal(body(pdf(contentType="Application/PDF; name=invoice.pdf")))
    assert "content type Application/PDF; name=invoice.pdf is not allowed" in message
    request = request_of(body(pdf(contentType="text/csv")))
    assert isinstance(request.notification, EmailNotification)
    assert request.notification.attachments[0].content_type == "text/csv"


def test_content_that_is_not_base64_is_refused() -> None:
    assert "attachments.0.content: is not valid base64" in refusal(body(pdf(content="not base64!")))


def test_an_attachment_gives_content_or_url_not_both() -> None:
    both = refusal(body(pdf(url="https://files.example.com/invoice.pdf")))
    assert "attachments.0: give either content (base64) or url" in both
    neither = {"filename": "a.pdf", "contentType": "application/pdf"}
    assert "give either content (base64) or url" in refusal(body(neither))


def test_at_most_ten_attachments() -> None:
    assert "attachments: List should have at most 10 items after validation, not 11" in refusal(
        body(*[pdf()] * 11)
    )


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("../../etc/passwd\x00.pdf", "passwd.pdf"),
        ("C:\\Users\\ada\\invoice.pdf", "invoice.pdf"),
        ("in\u202evoice\r\n.pdf", "invoice.pdf"),
        ('report: "Q3"?.pdf', "report_ _Q3__.pdf"),
    ],
)
def test_file_names_lose_paths_and_control_characters(given: str, kept: str) -> None:
    notification = request_of(body(pdf(filename=given))).notification
    assert isinstance(notification, EmailNotification)
    assert notification.attachments[0].filename == kept


def test_a_file_name_with_nothing_usable_is_refused() -> None:
    assert "attachments.0.filename: file name '../..' holds no usable character" in refusal(
        body(pdf(filename="../.."))
    )
    assert "filename: String should have at most 255 characters" in refusal(body(pdf(filename="a" * 300)))


# ---------------------------------------------------------------- sizes, by the providers' limits


def test_the_cap_is_set_by_the_smallest_message_size_in_the_order() -> None:
    cap, provider = size_cap((ProviderName.SENDGRID, ProviderName.POSTMARK, ProviderName.RESEND))
    assert provider is ProviderName.POSTMARK
    # 10 MB less a megabyte for the bodies, in base64: three bytes of file for every four sent.
    assert cap == (10_000_000 - 1024 * 1024) * 3 // 4 == allowance(ProviderName.POSTMARK)
    assert size_cap((ProviderName.SES,))[1] is ProviderName.SES


def test_attachments_over_the_cap_are_refused_naming_the_cap_and_its_provider() -> None:
    rig = Rig()
    big = base64.b64encode(b"\0" * 4_000_000).decode()
    document = body(pdf(content=big), pdf(filename="copy.pdf", content=big))
    caller = tenant(plan="startup", providers=("SENDGRID", "POSTMARK"))
    error = _refused(rig, document, caller)
    assert error.code is ErrorCode.ATTACHMENT_TOO_LARGE
    assert error.message == (
        "The attachments total 8.0 MB; at most 6.7 MB fit in a message to Postmark, the provider"
        " with the smallest message size in this email's fallback order."
    )
    assert error.extra == {"limit": allowance(ProviderName.POSTMARK), "provider": "POSTMARK"}
    answer = to_builtins(failure(error))
    assert (answer["code"], answer["limit"], answer["provider"]) == (
        "attachment_too_large",
        6_713_568,
        "POSTMARK",
    )
    assert rig.store.puts == 0
    assert rig.jobs.calls == []


def test_a_forced_provider_and_its_fallback_set_the_cap() -> None:
    rig = Rig()
    caller = tenant(plan="startup", providers=("SENDGRID", "POSTMARK"))
    big = base64.b64encode(b"\0" * 4_000_000).decode()
    document = body(pdf(content=big), pdf(filename="copy.pdf", content=big), provider="SENDGRID")
    rig.caller = caller
    accepted = rig.service.accept(Credentials(api_key=API_KEY), request_of(document))
    assert accepted.job_id


# ---------------------------------------------------------------- stored once, referenced by the job


def test_an_attachment_is_stored_once_and_the_job_holds_its_reference() -> None:
    rig = Rig()
    rig.caller = tenant(plan="indie", providers=("SENDGRID",))
    accepted = rig.service.accept(Credentials(api_key=API_KEY), request_of(body(pdf())))
    digest = hashlib.sha256(PDF).hexdigest()
    key = f"attachments/90d/t-1/{digest}"
    assert rig.store.objects == {key: (PDF, "application/pdf")}
    stored = rig.jobs.request("t-1", accepted.job_id)
    document = request_document(stored)
    assert document["attachments"] == [
        {
            "filename": "invoice.pdf",
            "contentType": "application/pdf",
            "size": len(PDF),
            "sha256": digest,
            "key": key,
        }
    ]
    assert PDF_B64 not in str(document)
    assert rig.queue.take().message.request == stored


def test_a_url_attachment_is_fetched_at_accept_and_stored_like_an_inline_one() -> None:
    rig = Rig()
    rig.fetcher.files["https://files.example.com/invoice.pdf"] = PDF
    linked = {
        "filename": "invoice.pdf",
        "contentType": "application/pdf",
        "url": "https://files.example.com/invoice.pdf",
    }
    rig.service.accept(Credentials(api_key=API_KEY), request_of(body(linked)))
    assert rig.fetcher.fetched == ["https://files.example.com/invoice.pdf"]
    assert [content for content, _ in rig.store.objects.values()] == [PDF]


def test_a_refused_or_broken_url_is_a_400() -> None:
    rig = Rig()
    private = {"filename": "a.pdf", "contentType": "application/pdf", "url": "http://10.0.0.1/a.pdf"}
    error = _refused(rig, body(private))
    assert error.code is ErrorCode.URL_NOT_ALLOWED
    assert error.message == "The attachment URL of a.pdf is not allowed: only https:// URLs are allowed"
    missing = {"filename": "a.pdf", "contentType": "application/pdf", "url": "https://files.example.com/gone"}
    error = _refused(rig, body(missing))
    assert error.code is ErrorCode.ATTACHMENT_UNAVAILABLE
    assert error.message == "The attachment URL of a.pdf gave no file: the URL answered status 404"


def test_a_fetched_file_larger_than_the_room_left_is_refused_naming_the_provider() -> None:
    rig = Rig()
    rig.fetcher.files["https://files.example.com/huge.pdf"] = b"\0" * 8_000_000
    linked = {
        "filename": "huge.pdf",
        "contentType": "application/pdf",
        "url": "https://files.example.com/huge.pdf",
    }
    error = _refused(rig, body(linked), tenant(plan="startup", providers=("POSTMARK",)))
    assert error.code is ErrorCode.ATTACHMENT_TOO_LARGE
    assert error.message.startswith(
        "The attachments total more than 6.7 MB; at most 6.7 MB fit in a message to Postmark"
    )


def test_a_bucket_outage_answers_503_and_takes_the_job_off_the_usage() -> None:
    rig = Rig()
    rig.store.down = True
    error = _refused(rig, body(pdf()))
    assert error.code is ErrorCode.STORAGE_UNAVAILABLE
    assert error.message == "Herald could not store the request right now; it was not accepted. Retry it."
    assert rig.jobs.calls == []
    assert sum(rig.counters.jobs.values()) == 0


def _refused(rig: Rig, document: dict[str, Any], caller: Any = None) -> HeraldError:
    rig.caller = caller or tenant()
    return rig.refused(lambda: rig.service.accept(Credentials(api_key=API_KEY), request_of(document)))


# ---------------------------------------------------------------- at delivery


def loaded_email() -> EmailNotification:
    attachment = Attachment(
        filename="invoice.pdf",
        content_type="application/pdf",
        size=len(PDF),
        sha256="ab",
        key="k",
        content=PDF,
    )
    return EmailNotification(to="u@example.com", subject="s", body="<p>b</p>", attachments=(attachment,))


def test_each_json_vendor_gets_the_file_in_its_own_format() -> None:
    from herald.adapters.providers import postmark, resend, sendgrid
    from herald.domain.providers import Routing

    routing = Routing(job_id="j-1", tenant_id="t-1", from_address="a@mail.example.com")
    email = loaded_email()
    assert sendgrid.mail_body(email, routing)["attachments"] == [
        {
            "content": PDF_B64,
            "filename": "invoice.pdf",
            "type": "application/pdf",
            "disposition": "attachment",
        }
    ]
    assert resend.email_body(email, routing)["attachments"] == [
        {"filename": "invoice.pdf", "content": PDF_B64, "content_type": "application/pdf"}
    ]
    assert postmark.email_body(email, routing)["Attachments"] == [
        {"Name": "invoice.pdf", "Content": PDF_B64, "ContentType": "application/pdf"}
    ]


def test_mailgun_gets_the_file_as_a_multipart_part() -> None:
    from herald.adapters.providers import mailgun

    assert mailgun.attachment_parts(loaded_email()) == [
        ("attachment", ("invoice.pdf", PDF, "application/pdf"))
    ]


def test_ses_gets_the_file_in_its_simple_content() -> None:
    from herald.adapters.providers.ses import SesProvider
    from herald.domain.providers import Routing

    routing = Routing(job_id="j-1", tenant_id="t-1", from_address="a@herald.test")
    request = SesProvider(lambda: None, "a@herald.test")._request(loaded_email(), routing)  # type: ignore[arg-type,return-value]  # noqa: SLF001
    assert request["Content"]["Simple"]["Attachments"] == [
        {
            "RawContent": PDF,
            "FileName": "invoice.pdf",
            "ContentType": "application/pdf",
            "ContentDisposition": "ATTACHMENT",
        }
    ]


def test_an_email_without_attachments_sends_no_attachment_field() -> None:
    from herald.adapters.providers import postmark, resend, sendgrid
    from herald.domain.providers import Routing

    routing = Routing(job_id="j-1", tenant_id="t-1", from_address="a@mail.example.com")
    plain = EmailNotification(to="u@example.com", subject="s", body="<p>b</p>")
    assert "attachments" not in sendgrid.mail_body(plain, routing)
    assert "attachments" not in resend.email_body(plain, routing)
    assert "Attachments" not in postmark.email_body(plain, routing)


def test_the_api_page_states_each_providers_cap_as_the_provider_table_sets_it() -> None:
    from herald.domain.attachments import megabytes
    from herald.domain.vendors import message_limit, provider_label
    from herald_local.config import project_root

    page = (project_root() / "docs" / "api.md").read_text()
    for provider in ProviderName:
        label = provider_label(provider) + (" (free plan)" if provider is ProviderName.SES else "")
        row = f"| {label} | {message_limit(provider) // 1_000_000} MB | {megabytes(allowance(provider))} |"
        assert row in page
