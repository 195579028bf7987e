"""The console's templates page in a real browser against the local stack: create a template,
edit its draft, preview it live with sample JSON data (variables escaped in the HTML part, a
missing variable named), publish it, and send with it; the rendered HTML is shown in a frame that
runs no script."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from herald_harness.running_stack import RunningStack
from tests.e2e.browser import Console, screenshot, sign_up
from tests.e2e.clients import address, finished_job, sandbox

pytestmark = pytest.mark.e2e

HTML = '<p>Hello {{ name }}</p><img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'


@pytest.fixture(scope="module")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def test_a_template_is_written_previewed_published_and_sent_from_the_console(console: Console) -> None:
    page = console.open("/console/templates", "Templates")
    expect(page.get_by_text("No template yet.")).to_be_visible()
    page.get_by_label("Name").fill("Welcome mail")
    page.get_by_role("button", name="Create template").click()
    expect(page.get_by_role("heading", name="Welcome mail")).to_be_visible()
    expect(page.get_by_role("heading", name="Draft: version 1")).to_be_visible()

    page.get_by_label("Subject").fill("Hi {{ name }}, welcome to {{ team }}")
    page.get_by_label("HTML").fill(HTML)
    page.get_by_role("button", name="Save as new draft").click()
    expect(page.get_by_role("heading", name="Draft: version 2")).to_be_visible()

    preview = page.locator("[data-preview]")
    page.get_by_label("Sample data (JSON)").fill('{"name": "<Ada>"}')
    expect(preview).to_contain_text("The template's subject, line 1: 'team' is undefined.")
    page.get_by_label("Sample data (JSON)").fill('{"name": "<Ada>", "team": "Acme"}')
    expect(page.locator("[data-subject]")).to_have_text("Hi <Ada>, welcome to Acme")
    expect(page.locator("[data-html]")).to_contain_text("<p>Hello &lt;Ada&gt;</p>")
    frame = page.frame_locator("iframe.preview-frame")
    expect(frame.locator("p")).to_have_text("Hello <Ada>")
    assert page.title() != "pwned"
    console.check_accessibility("templates")
    screenshot(page, "templates")

    page.get_by_role("button", name="Publish version 2").click()
    expect(page.get_by_text("Sends without a version use version 2.")).to_be_visible()
    expect(page.locator('tr[data-version="2"]')).to_contain_text("published")

    template_id = page.locator("header code").inner_text()
    assert re.fullmatch(r"tpl_[0-9a-f]{16}", template_id)
    to = address("console-template")
    job = finished_job(
        console.tenant,
        console.tenant.send(
            "email", {"to": to, "template": {"id": template_id, "data": {"name": "Bo", "team": "Acme"}}}
        ),
    )
    assert job["template"] == {"id": template_id, "version": 2}
    [mail] = sandbox(console.stack, "messages", jobId=job["id"])
    assert mail["subject"] == "Hi Bo, welcome to Acme"

    page = console.open("/console/templates", "Templates")
    row = page.locator(f'tr[data-template="{template_id}"]')
    expect(row).to_contain_text("Welcome mail")
    expect(row).to_contain_text("v2")
