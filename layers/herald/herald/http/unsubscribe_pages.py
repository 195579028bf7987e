"""The pages of an unsubscribe link (``/u/{token}``), in the console's styles and under its security
headers: no script at all, so the page works in any browser and a mail client's preview. Every text
the page shows that comes from a tenant or a recipient (the address, the topic) is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

from herald.domain.unsubscribes import Subscriber
from herald.http.console_pages import PAGE_HEADERS

UNSUBSCRIBE_PREFIX = "/u/"
RESUBSCRIBE_SUFFIX = "/resubscribe"
NOT_VALID = "This unsubscribe link is not valid."

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{title}</title>
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/style.css">
</head>
<body>
<main id="main" class="main main-center"><div class="signin-wrap"><section class="card signin">
<h1>{title}</h1>
{content}
</section></div></main>
</body>
</html>
"""


def is_unsubscribe_path(path: str) -> bool:
    return path.startswith(UNSUBSCRIBE_PREFIX)


def link_parts(path: str) -> tuple[str, bool]:
    """The token of a link's path, and whether the path is its resubscribe button's."""
    rest = path.removeprefix(UNSUBSCRIBE_PREFIX)
    resubscribe = rest.endswith(RESUBSCRIBE_SUFFIX)
    return rest.removesuffix(RESUBSCRIBE_SUFFIX) if resubscribe else rest, resubscribe


# The page's unsubscribe button posts what a mailbox provider posts (List-Unsubscribe=One-Click), so
# both take one path.
_ONE_CLICK_FIELD = '<input type="hidden" name="List-Unsubscribe" value="One-Click">'


def _form(action: str, label: str, *, one_click: bool) -> str:
    return (
        f'<form method="post" action="{escape(action)}">{_ONE_CLICK_FIELD if one_click else ""}'
        f'<button class="button button-primary" type="submit">{label}</button></form>'
    )


def _who(who: Subscriber) -> tuple[str, str]:
    return f"<strong>{escape(who.address)}</strong>", f"<code>{escape(who.topic)}</code>"


def unsubscribed_page(token: str, who: Subscriber, *, every_topic: bool = False) -> str:
    """``every_topic``: the provider reported an unsubscribe from all of this sender's list mail,
    which only the sender can take back, so the page offers no button."""
    address, topic = _who(who)
    if every_topic:
        content = f"<p>{address} gets no more list mail from this sender, about {topic} or anything else.</p>"
    else:
        content = (
            f"<p>{address} will get no more mail about {topic} from this sender.</p>"
            '<p class="muted">Unsubscribed by mistake?</p>'
            + _form(f"{UNSUBSCRIBE_PREFIX}{token}{RESUBSCRIBE_SUFFIX}", "Resubscribe", one_click=False)
        )
    return _PAGE.format(title="You are unsubscribed", content=content)


def subscribed_page(token: str, who: Subscriber) -> str:
    address, topic = _who(who)
    content = f"<p>{address} gets mail about {topic} from this sender.</p>" + _form(
        f"{UNSUBSCRIBE_PREFIX}{token}", "Unsubscribe", one_click=True
    )
    return _PAGE.format(title="Unsubscribe", content=content)


def not_valid_page() -> str:
    return _PAGE.format(title="Link not valid", content=f"<p>{NOT_VALID}</p>")


def page_answer(status: int, page: str) -> dict[str, Any]:
    """A page (API Gateway v2 shape) under the console's headers; never cached, never a redirect."""
    headers = {**PAGE_HEADERS, "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"}
    # With no-referrer a browser posts the page's forms with "Origin: null", which the same-origin
    # check of the resubscribe button refuses; same-origin still sends the URL, and its token, nowhere else.
    headers["Referrer-Policy"] = "same-origin"
    return {"statusCode": status, "headers": headers, "body": page, "isBase64Encoded": False}
