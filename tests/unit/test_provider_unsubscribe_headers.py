"""RFC 8058's two headers reach every vendor in that vendor's own way: SendGrid's and Resend's
``headers`` objects, Postmark's ``Headers`` list, Mailgun's ``h:`` form fields and SES v2's
``Headers`` of Simple content (checked against botocore's own request model by its Stubber)."""

from __future__ import annotations

from typing import Any

from botocore.stub import Stubber

from herald.adapters.providers import mailgun, postmark, resend, sendgrid
from herald.adapters.providers.ses import SesProvider
from herald.domain.notifications import EmailNotification
from herald.domain.providers import Credential, Routing
from herald.domain.unsubscribes import list_unsubscribe_headers
from tests.unit.test_provider_ses import expected_request, ses_client

LINK = "<https://herald.test/u/1.abc.def>"
HEADERS = list_unsubscribe_headers("https://herald.test", "1.abc.def")
EMAIL = EmailNotification(to="ada@example.org", subject="Welcome", body="<p>Hi</p>", text="Hi")
ROUTING = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="hello@acme.test", headers=HEADERS)
AS_OBJECT = {"List-Unsubscribe": LINK, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}


def test_sendgrid_takes_them_as_the_messages_headers_object() -> None:
    assert sendgrid.mail_body(EMAIL, ROUTING)["headers"] == AS_OBJECT


def test_resend_takes_them_as_its_headers_object() -> None:
    assert resend.email_body(EMAIL, ROUTING)["headers"] == AS_OBJECT


def test_postmark_takes_them_as_a_list_of_name_and_value() -> None:
    assert postmark.email_body(EMAIL, ROUTING)["Headers"] == [
        {"Name": "List-Unsubscribe", "Value": LINK},
        {"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"},
    ]


def test_mailgun_takes_them_as_h_form_fields() -> None:
    form = mailgun.message_form(EMAIL, ROUTING)
    assert (form["h:List-Unsubscribe"], form["h:List-Unsubscribe-Post"]) == (
        LINK,
        "List-Unsubscribe=One-Click",
    )


def test_ses_takes_them_as_the_simple_contents_headers() -> None:
    client = ses_client()
    expected: dict[str, Any] = expected_request(
        Content={
            "Simple": {
                "Subject": {"Data": "Welcome", "Charset": "UTF-8"},
                "Body": {
                    "Html": {"Data": "<p>Hi</p>", "Charset": "UTF-8"},
                    "Text": {"Data": "Hi", "Charset": "UTF-8"},
                },
                "Headers": [
                    {"Name": "List-Unsubscribe", "Value": LINK},
                    {"Name": "List-Unsubscribe-Post", "Value": "List-Unsubscribe=One-Click"},
                ],
            }
        }
    )
    with Stubber(client) as stub:
        stub.add_response("send_email", {"MessageId": "0100018c-ses-id"}, expected)
        SesProvider(lambda: client, "notifications@herald.test").send(EMAIL, ROUTING, Credential(""))
        stub.assert_no_pending_responses()


def test_without_a_topic_no_vendor_gets_a_headers_field() -> None:
    plain = Routing(job_id="job-0001", tenant_id="tenant-42", from_address="hello@acme.test")
    assert "headers" not in sendgrid.mail_body(EMAIL, plain)
    assert "headers" not in resend.email_body(EMAIL, plain)
    assert "Headers" not in postmark.email_body(EMAIL, plain)
    assert not [name for name in mailgun.message_form(EMAIL, plain) if name.startswith("h:List")]
