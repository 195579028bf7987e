"""Text that must stay on one line: an email subject (a header line) and a webhook URL (a request
line). Nothing in it may end or break that line, for any reader: no C0 or C1 control character (tab,
CR, LF and NEL among them), no DEL, and no Unicode line or paragraph separator (U+2028, U+2029).
HTTP stacks and mail servers do not agree on these: some strip them silently, some break the line,
some fail to encode. (Lone surrogates never get this far: the request parser refuses them.)

A subject is also read by a person: it carries no invisible or bidirectional format character
(Unicode category Cf: zero-width spaces, byte-order marks, right-to-left overrides and the rest),
which hide text or show it in another order than it is sent. Two are allowed, because scripts
and emoji need them: the zero-width non-joiner (Persian, Indic scripts) and joiner (emoji sequences).
"""

from __future__ import annotations

import re

# Written with \uXXXX escapes, which Python's re and ECMA-262 (JSON Schema's dialect) read alike.
_BREAKING = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029"
# The rule as a JSON Schema pattern, for the OpenAPI document's copy of it.
ONE_LINE_PATTERN = f"^[^{_BREAKING}]*$"
_LINE_BREAKING = re.compile(f"[{_BREAKING}]")


# Unicode 15's category Cf but U+200C and U+200D, as ranges (a test compares it with unicodedata).
_FORMAT_BMP = (
    "\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u180e\\u200b\\u200e-\\u200f"
    "\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb"
)
# Outside the Basic Multilingual Plane: Python's \U escapes, which ECMA-262 has no spelling for, so
# the JSON Schema copy leaves these out.
_FORMAT_ASTRAL = (
    "\\U000110bd\\U000110cd\\U00013430-\\U0001343f\\U0001bca0-\\U0001bca3\\U0001d173-\\U0001d17a"
    "\\U000e0001\\U000e0020-\\U000e007f"
)
VISIBLE_LINE_PATTERN = f"^[^{_BREAKING}{_FORMAT_BMP}]*$"
_FORMAT = re.compile(f"[{_FORMAT_BMP}{_FORMAT_ASTRAL}]")


def format_character(value: str) -> str | None:
    """The first invisible or bidirectional format character of ``value``, as ``U+XXXX``; None if
    there is none."""
    found = _FORMAT.search(value)
    return f"U+{ord(found.group()):04X}" if found else None


def line_breaking_character(value: str) -> str | None:
    """The first character of ``value`` that does not belong on one line, as ``U+XXXX``; None if
    there is none."""
    found = _LINE_BREAKING.search(value)
    return f"U+{ord(found.group()):04X}" if found else None
