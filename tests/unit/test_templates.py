"""Email templates: rendering (escaping in html only, strict variables, the limits), attempts to
reach Python or files from a template, and the service's versions, publication, preview and the
accept path's rendering, each change with its audit entry."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from herald.adapters import template_engine
from herald.domain.audit import AuditAction
from herald.domain.errors import ErrorCode, HeraldError
from herald.domain.notifications import EmailNotification
from herald.domain.templates import MAX_VERSIONS_KEPT, TemplateContent, TemplateFault, TemplateUse
from herald.services.templates import TemplateService
from tests.fakes.common import full_grant
from tests.fakes.templates import FakeTemplateStore

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
WELCOME = TemplateContent(
    subject="Welcome, {{ name }}",
    html="<p>Hello {{ name }}, your plan is {{ plan | upcase }}.</p>",
    text="Hello {{ name }}",
)


def render(subject: str = "s", html: str = "h", text: str | None = None, **data: object) -> TemplateContent:
    return template_engine.render(TemplateContent(subject, html, text), data)


def fault(subject: str = "s", html: str = "h", **data: object) -> str:
    with pytest.raises(TemplateFault) as caught:
        template_engine.render(TemplateContent(subject, html), data)
    return caught.value.message


# ---------------------------------------------------------------- rendering


def test_variables_are_escaped_in_html_but_not_in_subject_or_text() -> None:
    name = '<b>Ada & "Bo"</b>'
    rendered = render("Hi {{ name }}", "<p>{{ name }}</p>", "Hi {{ name }}", name=name)
    assert rendered == TemplateContent(
        subject=f"Hi {name}", html="<p>&lt;b&gt;Ada &amp; &#34;Bo&#34;&lt;/b&gt;</p>", text=f"Hi {name}"
    )


def test_a_missing_variable_is_named_with_its_part_and_line() -> None:
    assert (
        fault(html="<p>\n{{ order.total }}</p>", order={})
        == "The template's html, line 2: order.total is undefined."
    )
    assert fault("Hi {{ name }}") == "The template's subject, line 1: 'name' is undefined."


def test_a_default_makes_a_variable_optional() -> None:
    assert render("Hi {{ name | default: 'there' }}").subject == "Hi there"


@pytest.mark.parametrize(
    "attempt",
    [
        "{{ ''.__class__ }}",
        "{{ name.__class__.__mro__ }}",
        "{{ self }}",
        "{{ name.__init__.__globals__ }}",
        "{{ name.upper }}",
        "{{ cycler.__init__.__globals__.os }}",
    ],
)
def test_python_objects_cannot_be_reached(attempt: str) -> None:
    message = fault(attempt, name="x")
    assert message.startswith("The template's subject, line 1: ")
    assert "undefined" in message or "syntax error" in message


@pytest.mark.parametrize("tag", ["{% include 'x' %}", "{% render '/etc/passwd' %}"])
def test_no_other_template_or_file_can_be_read(tag: str) -> None:
    assert "syntax error: unexpected tag" in fault(html=tag)
    with pytest.raises(TemplateFault, match="unexpected tag"):
        template_engine.check(TemplateContent("s", tag))


def test_huge_loops_stop_at_the_iteration_bound() -> None:
    nested = "{% for a in (1..1000) %}{% for b in (1..1000) %}x{% endfor %}{% endfor %}"
    assert "loop iteration limit reached" in fault(html=nested)


def test_a_huge_range_is_refused_before_it_is_built() -> None:
    assert "range too long" in fault(html="{{ (1..100000000) | join }}")


def test_output_growth_stops_at_the_size_bound() -> None:
    doubling = (
        "{% assign a = 'xxxxxxxx' %}{% for i in (1..40) %}{% assign a = a | append: a %}{% endfor %}{{ a }}"
    )
    assert "limit reached" in fault(html=doubling)


def test_slow_filters_in_a_loop_stop_at_the_time_bound() -> None:
    slow = "{% for i in items %}{% assign s = letters | split: '' | sort | join %}{% endfor %}"
    message = fault(html=slow, items=list(range(9000)), letters="ab" * 50_000)
    assert "render time limit reached" in message


def test_deep_nesting_is_refused() -> None:
    deep = "{% if true %}" * 60 + "x" + "{% endif %}" * 60
    assert "nesting limit" in fault(html=deep)


def test_a_syntax_error_says_where() -> None:
    with pytest.raises(TemplateFault) as caught:
        template_engine.check(TemplateContent("Hi {{ name", "x"))
    assert caught.value.message.startswith("The template's subject, line 1: syntax error:")


# ---------------------------------------------------------------- the service


class Rig:
    def __init__(self) -> None:
        self.store = FakeTemplateStore()
        self.service = TemplateService(self.store, template_engine, clock=lambda: NOW)
        self.grant = full_grant("Deploy key")

    def create(self, content: TemplateContent = WELCOME) -> str:
        return self.service.create("t-1", self.grant, "Welcome", content).template.template_id

    def refused(self, call: object, *args: object) -> HeraldError:
        with pytest.raises(HeraldError) as caught:
            call(*args)  # type: ignore[operator]
        return caught.value


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_create_update_publish_each_write_their_audit_entry(rig: Rig) -> None:
    template_id = rig.create()
    rig.service.update("t-1", rig.grant, template_id, None, WELCOME)
    published = rig.service.publish("t-1", rig.grant, template_id, 1)
    assert (published.template.latest_version, published.template.published_version) == (2, 1)
    assert [(e.action, e.target, e.details["version"]) for e in rig.store.audit] == [
        (AuditAction.TEMPLATE_CREATED, template_id, "1"),
        (AuditAction.TEMPLATE_UPDATED, template_id, "2"),
        (AuditAction.TEMPLATE_PUBLISHED, template_id, "1"),
    ]
    assert {e.actor.name for e in rig.store.audit} == {"Deploy key"}


def test_an_invalid_template_is_refused_when_saved(rig: Rig) -> None:
    refused = rig.refused(rig.service.create, "t-1", rig.grant, "Bad", TemplateContent("{% if %}", "x"))
    assert refused.code is ErrorCode.TEMPLATE_INVALID
    assert "syntax error" in refused.message
    assert rig.store.audit == []


def test_old_versions_go_but_the_published_one_stays(rig: Rig) -> None:
    template_id = rig.create()
    rig.service.publish("t-1", rig.grant, template_id, None)
    for _ in range(MAX_VERSIONS_KEPT + 3):
        rig.service.update("t-1", rig.grant, template_id, None, WELCOME)
    kept = [v.version for v in rig.service.get("t-1", template_id).versions]
    assert len(kept) == MAX_VERSIONS_KEPT
    assert kept[0] == 1  # published
    assert kept[-1] == MAX_VERSIONS_KEPT + 4


def test_preview_renders_the_draft_with_sample_data(rig: Rig) -> None:
    template_id = rig.create()
    version, rendered = rig.service.preview("t-1", template_id, None, {"name": "<Ada>", "plan": "indie"})
    assert version == 1
    assert rendered.subject == "Welcome, <Ada>"
    assert rendered.html == "<p>Hello &lt;Ada&gt;, your plan is INDIE.</p>"
    missing = rig.refused(rig.service.preview, "t-1", template_id, None, {"name": "Ada"})
    assert (missing.code, missing.message) == (
        ErrorCode.TEMPLATE_RENDER_FAILED,
        "The template's html, line 1: 'plan' is undefined.",
    )


def email_with(use: TemplateUse) -> EmailNotification:
    return EmailNotification(to="ada@example.com", subject="", body="", template=use)


def test_a_send_renders_the_published_version_in_one_read(rig: Rig) -> None:
    template_id = rig.create()
    rig.service.publish("t-1", rig.grant, template_id, None)
    rig.service.update("t-1", rig.grant, template_id, None, TemplateContent("Draft {{ name }}", "draft"))
    rig.store.reads = 0
    data = {"name": "Ada", "plan": "startup"}
    rendered = rig.service.render_email("t-1", email_with(TemplateUse(template_id, None, data)))
    assert rig.store.reads == 1
    assert (rendered.subject, rendered.body, rendered.text) == (
        "Welcome, Ada",
        "<p>Hello Ada, your plan is STARTUP.</p>",
        "Hello Ada",
    )
    assert rendered.template == TemplateUse(template_id, 1)
    draft = rig.service.render_email("t-1", email_with(TemplateUse(template_id, 2, data)))
    assert (draft.subject, draft.template) == ("Draft Ada", TemplateUse(template_id, 2))


def test_a_send_names_what_is_missing(rig: Rig) -> None:
    template_id = rig.create()
    unpublished = rig.refused(rig.service.render_email, "t-1", email_with(TemplateUse(template_id, None, {})))
    assert unpublished.code is ErrorCode.TEMPLATE_NOT_PUBLISHED
    unknown = rig.refused(rig.service.render_email, "t-1", email_with(TemplateUse("tpl_nope", None, {})))
    assert (unknown.code, unknown.message) == (ErrorCode.TEMPLATE_NOT_FOUND, "There is no template tpl_nope.")
    other_tenant = rig.refused(rig.service.render_email, "t-2", email_with(TemplateUse(template_id, 1, {})))
    assert other_tenant.code is ErrorCode.TEMPLATE_NOT_FOUND
    no_name = rig.refused(
        rig.service.render_email, "t-1", email_with(TemplateUse(template_id, 1, {"plan": "x"}))
    )
    assert no_name.message == "The template's subject, line 1: 'name' is undefined."


def test_a_rendered_subject_stays_one_visible_line(rig: Rig) -> None:
    template_id = rig.create(TemplateContent("Hi\n{{ name }}", "x"))
    rendered = rig.service.render_email("t-1", email_with(TemplateUse(template_id, 1, {"name": "Ada\r\nBo"})))
    assert rendered.subject == "Hi Ada Bo"
    hidden = rig.refused(
        rig.service.render_email, "t-1", email_with(TemplateUse(template_id, 1, {"name": "\u202e"}))
    )
    assert hidden.message == "The template's subject renders with a control or invisible character (U+202E)."


def test_delete_removes_the_template_with_its_entry(rig: Rig) -> None:
    template_id = rig.create()
    rig.service.delete("t-1", rig.grant, template_id)
    assert rig.store.audit[-1].action is AuditAction.TEMPLATE_DELETED
    assert rig.refused(rig.service.get, "t-1", template_id).code is ErrorCode.TEMPLATE_NOT_FOUND
