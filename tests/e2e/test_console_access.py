"""Named API keys in the console (issue 38), in Chromium against the local stack: the sign-up's key
listed by its preview, a send-only key created and shown once, that key sending an email and refused
the jobs listing with the API's sentence, a key rotated with a grace period, a key revoked (the next
request with it is refused 401), and a refused creation showing the API's sentence by the form."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from herald.domain.access import ROLE_ABILITIES, ROLES_BY_REACH, SCOPE_ABILITIES
from herald_harness.running_stack import RunningStack
from herald_harness.tenants import Tenant
from tests.e2e.browser import Console, screenshot, sign_up

pytestmark = pytest.mark.e2e

KEY = re.compile(r"hk_[0-9a-f]{64}")
ONCE = "Shown this once: you will not see it again."


@pytest.fixture(scope="module")
def console(local_stack: RunningStack, browser: Browser) -> Iterator[Console]:
    made = sign_up(local_stack, browser)
    yield made
    made.context.close()


def key_row(page: Page, name: str) -> Locator:
    return page.locator("tr[data-key]").filter(has=page.get_by_role("rowheader", name=name, exact=True))


def preview(secret: str) -> str:
    return f"hk_…{secret[-4:]}"


def create_key(page: Page, name: str, scopes: list[str]) -> str:
    form = page.get_by_role("form", name="Create a key")
    form.get_by_label("Name").fill(name)
    for scope in scopes:
        form.get_by_role("checkbox", name=re.compile(f"^{scope}")).check()
    form.get_by_role("button", name="Create key").click()
    shown = page.locator(f"section[aria-label='Your new key: {name}']")
    expect(shown.get_by_text(ONCE)).to_be_visible()
    secret = shown.locator("[data-secret]").inner_text()
    assert KEY.fullmatch(secret), secret
    return secret


def test_the_sign_up_key_is_listed_by_its_preview_only(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    row = key_row(page, "Default key")
    expect(row.locator("[data-preview]")).to_have_text(preview(console.tenant.api_key))
    expect(row.get_by_role("cell", name="full", exact=True)).to_be_visible()
    expect(row.get_by_role("cell", name="any", exact=True)).to_be_visible()
    expect(row).to_contain_text(f"by {console.email}")
    assert console.tenant.api_key not in page.locator("main").inner_text()
    expect(page.get_by_role("button", name="Rotate API key")).to_have_count(0)  # the old single-key card
    console.check_accessibility("keys")


def test_a_send_only_key_is_shown_once_sends_and_is_refused_reading(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    secret = create_key(page, "CI sender", ["Send"])
    expect(page.locator("[data-secret]")).to_have_count(1)
    expect(page.get_by_role("button", name="Copy Your new key: CI sender")).to_be_visible()
    row = key_row(page, "CI sender")
    expect(row.locator("[data-preview]")).to_have_text(preview(secret))
    expect(row.get_by_role("cell", name="send", exact=True)).to_be_visible()
    console.check_accessibility("key created")
    screenshot(page, "keys-created")

    # Shown once: after a reload the list has the preview, and the secret is nowhere on the page.
    page.reload()
    expect(key_row(page, "CI sender").locator("[data-preview]")).to_have_text(preview(secret))
    expect(page.locator("[data-secret]")).to_have_count(0)
    assert secret not in page.content()

    sender = Tenant(console.tenant.api_root, console.tenant.tenant_id, secret)
    sent = sender.call(
        "POST",
        "/notifications/email",
        {"to": "reader@example.com", "subject": "From CI", "body": "<p>Hi</p>"},
    )
    assert sent.status_code == 202, sent.text
    refused = sender.call("GET", "/notifications/jobs")
    assert (refused.status_code, refused.json()["code"]) == (403, "insufficient_scope")
    assert (
        refused.json()["error"] == 'This request needs the read scope, which the API key "CI sender" lacks.'
    )

    # Its use is recorded (at most every five minutes), and read by the list.
    page.reload()
    expect(key_row(page, "CI sender").get_by_role("cell", name="never", exact=True)).to_have_count(1)


def test_a_key_rotated_with_grace_shows_its_new_secret_once_and_both_work(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    old = create_key(page, "Reporting", ["Read"])
    row = key_row(page, "Reporting")
    row.locator("summary").click()
    grace = row.get_by_label("Grace for the current secret")
    expect(grace.locator("option:checked")).to_have_text("24 hours")
    grace.select_option("3600")
    row.get_by_role("button", name="Rotate now").click()
    shown = page.locator("section[aria-label='The new secret of Reporting']")
    expect(shown).to_contain_text(ONCE)
    expect(shown).to_contain_text("The previous secret works until")
    new = shown.locator("[data-secret]").inner_text()
    assert KEY.fullmatch(new)
    assert new != old
    expect(key_row(page, "Reporting").locator("[data-preview]")).to_have_text(preview(new))
    expect(key_row(page, "Reporting").locator("[data-grace]")).to_contain_text(
        "The previous secret works until"
    )
    screenshot(page, "keys-rotated")
    for secret in (old, new):
        reader = Tenant(console.tenant.api_root, console.tenant.tenant_id, secret)
        assert reader.call("GET", "/notifications/jobs").status_code == 200
    console.check_accessibility("key rotated")


def test_a_leaked_key_is_rotated_without_grace_after_a_confirmation(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    leaked = create_key(page, "Leaked", ["Read"])
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))  # sign_up's handler accepts it
    row = key_row(page, "Leaked")
    row.locator("summary").click()
    row.get_by_label("Grace for the current secret").select_option("0")
    row.get_by_role("button", name="Rotate now").click()
    shown = page.locator("section[aria-label='The new secret of Leaked']")
    expect(shown).to_contain_text("The previous secret no longer works.")
    assert dialogs == ["Rotate Leaked without grace? Its current secret stops working at once."]
    fresh = shown.locator("[data-secret]").inner_text()
    for secret, status in ((leaked, 401), (fresh, 200)):
        holder = Tenant(console.tenant.api_root, console.tenant.tenant_id, secret)
        assert holder.call("GET", "/notifications/jobs").status_code == status
    # The console's session is the person's, not a key's: it goes on.
    console.open("/console/suppressions", "Suppressions")


def test_a_revoked_key_is_refused_at_its_next_request(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    secret = create_key(page, "Short-lived", ["Send", "Read"])
    holder = Tenant(console.tenant.api_root, console.tenant.tenant_id, secret)
    assert holder.call("GET", "/notifications/jobs").status_code == 200
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))  # sign_up's handler accepts it
    key_row(page, "Short-lived").get_by_role("button", name="Revoke Short-lived").click()
    expect(page.get_by_text("Short-lived revoked")).to_be_visible()
    expect(key_row(page, "Short-lived")).to_have_count(0)
    assert dialogs
    assert dialogs[0].startswith("Revoke Short-lived?")
    assert holder.call("GET", "/notifications/jobs").status_code == 401
    assert console.tenant.call("GET", "/account").status_code == 200  # the other keys go on


def test_a_key_with_an_expiry_lists_it_in_the_browsers_time_zone(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    form = page.get_by_role("form", name="Create a key")
    form.get_by_label("Name").fill("Until spring")
    form.get_by_role("checkbox", name=re.compile("^Send")).check()
    form.get_by_label(re.compile(r"^Expires \(optional")).fill("2030-03-01T09:30")
    form.get_by_role("button", name="Create key").click()
    expect(page.get_by_text(ONCE)).to_be_visible()
    listed = console.tenant.call("GET", "/account/keys").json()["data"]
    expires = next(key["expiresAt"] for key in listed if key["name"] == "Until spring")
    # The form's local time, sent as an instant: the page's own reading of that input.
    sent = page.evaluate("new Date('2030-03-01T09:30').getTime()")
    assert page.evaluate(f"new Date({expires!r}).getTime()") == sent
    expect(key_row(page, "Until spring")).to_contain_text("2030")


def test_a_refused_creation_shows_the_apis_sentence_by_the_form(console: Console) -> None:
    page = console.open("/console/keys", "Keys & signing")
    form = page.get_by_role("form", name="Create a key")
    form.get_by_label("Name").fill("Wrong domain")
    form.get_by_role("button", name="Create key").click()
    expect(form.get_by_role("alert")).to_have_text("Choose at least one scope.")
    domain = f"mail.{uuid.uuid4().hex[:8]}.example.com"
    form.get_by_role("checkbox", name=re.compile("^Send")).check()
    form.get_by_label("Sending domains (optional)").fill(domain)
    form.get_by_role("button", name="Create key").click()
    expect(form.get_by_role("alert")).to_have_text(
        f"{domain} is not a sending domain of this account; add it first."
    )
    expect(key_row(page, "Wrong domain")).to_have_count(0)
    screenshot(page, "keys-refused")
    console.check_accessibility("key refused")


def test_the_consoles_role_and_scope_tables_are_herald_domain_access(console: Console) -> None:
    """The pages hide what a role cannot use by the tables generated from herald/domain/access.py
    into fields.js; read from the module the browser loads, they must be the domain's."""
    page = console.open("/console", "Overview")
    tables = page.evaluate(
        """() => import("/console/assets/fields.js").then((module) => ({
            roles: module.ROLE_ABILITIES, scopes: module.SCOPE_ABILITIES, order: module.ROLES }))"""
    )
    assert {role: set(abilities) for role, abilities in tables["roles"].items()} == {
        role.value: {ability.value for ability in abilities} for role, abilities in ROLE_ABILITIES.items()
    }
    assert {scope: set(abilities) for scope, abilities in tables["scopes"].items()} == {
        scope.value: {ability.value for ability in abilities} for scope, abilities in SCOPE_ABILITIES.items()
    }
    assert tables["order"] == [role.value for role in reversed(ROLES_BY_REACH)]
