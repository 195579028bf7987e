"""Text that must stay on one line: an email subject (a header line) and a webhook URL (a request
line). Nothing in it may end or break that line, for any reader: no C0 or C1 control character (tab,
CR, LF and NEL among them), no DEL, and no Unicode line or paragraph separator (U+2028, U+2029).
HTTP stacks and mail servers do not agree on these: some strip them silently, some break the line,
some fail to encode. (Lone surrogates never get this far: the request parser refuses them.)
"""

from __future__ import annotations

import re

# Written with \uXXXX escapes, which Python's re and ECMA-262 (JSON Schema's dialect) read alike.
_BREAKING = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"
# The rule as a JSON Schema pattern, for the OpenAPI document's copy of it.
ONE_LINE_PATTERN = f"^[^{_BREAKING}]*$"
_LINE_BREAKING = re.compile(f"[{_BREAKING}]")


def line_breaking_character(value: str) -> str | None:
    """The first character of ``value`` that does not belong on one line, as ``U+XXXX``; None if
    there is none."""
    found = _LINE_BREAKING.search(value)
    return f"U+{ord(found.group()):04X}" if found else None
