"""The HTML mailbox page. Everything shown is untrusted (tenants' mail and webhook bodies): Jinja
escapes every value, HTML bodies render only inside a sandboxed ``srcdoc`` iframe (no scripts, no
same origin), and the page's Content-Security-Policy forbids scripts altogether."""

from __future__ import annotations

from jinja2 import Environment

from herald_local.sandbox.core.records import Hook, Message

CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'"

_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Herald provider sandbox</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; }
section.item { border: 1px solid #ccc; border-radius: 6px; padding: .75rem 1rem; margin: .75rem 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dt { font-weight: 600; } dd { margin: 0; word-break: break-all; }
pre { background: #f6f6f6; padding: .5rem; white-space: pre-wrap; word-break: break-all; }
iframe { width: 100%; height: 16rem; border: 1px solid #ddd; }
</style>
</head>
<body>
<h1>Herald provider sandbox</h1>
<p>JSON views: <a href="/_sandbox/messages">messages</a>, <a href="/_sandbox/attempts">attempts</a>,
<a href="/_sandbox/hooks">hooks</a>.</p>
<h2>Messages ({{ messages|length }})</h2>
{% for message in messages %}
<section class="item">
<dl>
<dt>Subject</dt><dd>{{ message.summary.subject }}</dd>
<dt>Provider</dt><dd>{{ message.provider }}</dd>
<dt>From</dt><dd>{{ message.summary.sender }}</dd>
<dt>To</dt><dd>{{ message.summary.recipients|join(", ") }}</dd>
<dt>Job</dt><dd>{{ message.summary.job_id or "" }}</dd>
<dt>Message id</dt><dd>{{ message.id }}</dd>
<dt>Received</dt><dd>{{ message.received_at.isoformat() }}</dd>
{% for name, value in message.summary.mail_headers.items() %}
<dt>{{ name }}</dt><dd>{{ value }}</dd>
{% endfor %}
{% for file in message.summary.attachments %}
<dt>Attachment</dt><dd>{{ file.filename }} ({{ file.content_type }}, {{ file.content|length }} bytes)</dd>
{% endfor %}
</dl>
{% if message.summary.text %}<pre>{{ message.summary.text }}</pre>{% endif %}
{% if message.summary.html %}
<iframe sandbox title="HTML body" srcdoc="{{ message.summary.html }}"></iframe>
{% endif %}
</section>
{% else %}<p>No messages yet.</p>{% endfor %}
<h2>Webhooks ({{ hooks|length }})</h2>
{% for hook in hooks %}
<section class="item">
<dl>
<dt>Hook</dt><dd>{{ hook.method }} /hooks/{{ hook.name }}</dd>
<dt>Answered</dt><dd>{{ hook.status }}</dd>
<dt>Job</dt><dd>{{ hook.job_id or "" }}</dd>
<dt>Signatures</dt>
<dd>NotifyKit: {{ hook.signatures.notifykit }}, Standard Webhooks: {{ hook.signatures.standard }}</dd>
<dt>Received</dt><dd>{{ hook.received_at.isoformat() }}</dd>
</dl>
<pre>{{ hook.body }}</pre>
</section>
{% else %}<p>No webhooks yet.</p>{% endfor %}
</body>
</html>
"""

_environment = Environment(autoescape=True)
_page = _environment.from_string(_TEMPLATE)


def render_mailbox(messages: list[Message], hooks: list[Hook]) -> str:
    """Newest first, so the page opens on what just arrived."""
    return _page.render(messages=list(reversed(messages)), hooks=list(reversed(hooks)))
