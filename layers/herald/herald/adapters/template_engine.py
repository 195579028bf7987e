"""Rendering templates with python-liquid, the Liquid language Shopify made for templates written by
people the platform does not trust.

Liquid has no attribute or method access by design (``{{ name.__class__ }}`` is an undefined
variable, not a Python object), no file access here (no loader: ``include`` and ``render`` are
removed, so a template names no other file), and python-liquid bounds a rendering's loop
iterations, output, nesting and assigned locals. Variables are HTML-escaped in the HTML part only:
a subject and a text part are not HTML. A variable the data lacks is an error naming it (strict
undefined), raised when the send is accepted.

Imported only by the paths that render or check a template (the template routes and a templated
send), since importing python-liquid costs 0.1 to 0.5 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from liquid import BoundTemplate, Environment, RenderContext, StrictDefaultUndefined
from liquid.builtin.expressions.primitive import RangeLiteral
from liquid.exceptions import LiquidError, LiquidSyntaxError, ResourceLimitError
from liquid.token import Token
from liquid.undefined import UNDEFINED

from herald.domain.templates import (
    MAX_LOOP_ITERATIONS,
    MAX_RENDER_SECONDS,
    MAX_RENDERED_BYTES,
    TemplateContent,
    TemplateFault,
)

# Tags that would read another template: with no loader there is none to read.
_REMOVED_TAGS = ("include", "render")


class _TimedContext(RenderContext):
    """A rendering that stops at its deadline. The iteration bound counts the loops of one nesting,
    not loops side by side, and a filter over a long list costs time without a loop: so every
    variable lookup and filter call checks the clock (a few tens of nanoseconds each)."""

    def __init__(self, template: BoundTemplate, **kwargs: Any) -> None:
        super().__init__(template, **kwargs)
        self._deadline = time.monotonic() + MAX_RENDER_SECONDS

    def get(self, path: list[object], *, token: Token | None, default: object = UNDEFINED) -> object:
        self._in_time(token)
        return super().get(path, token=token, default=default)

    def filter(self, name: str, token: Token | None) -> Callable[..., object]:
        self._in_time(token)
        return super().filter(name, token)

    def _in_time(self, token: Token | None) -> None:
        if time.monotonic() > self._deadline:
            raise ResourceLimitError("render time limit reached", token=token)


class _TimedTemplate(BoundTemplate):
    context_class = _TimedContext


def _bounded_range(self: RangeLiteral, start: Any, stop: Any) -> range:
    """A range literal's numbers, at most the loop bound: ``(1..100000000) | join`` would otherwise
    build a string of 900 MB before any output bound saw it."""
    numbers = _make_range(self, start, stop)
    if len(numbers) > MAX_LOOP_ITERATIONS:
        raise ResourceLimitError("range too long", token=self.token)
    return numbers


# python-liquid has no setting for a range's length: its one range builder is wrapped, once, when
# this module is first imported (only Herald's templates render in its processes).
_make_range = RangeLiteral._make_range
setattr(RangeLiteral, "_make_range", _bounded_range)  # noqa: B010 (mypy refuses assigning a method)


class _Bounded(Environment):
    template_class = _TimedTemplate
    loop_iteration_limit: ClassVar[int | None] = MAX_LOOP_ITERATIONS
    # Characters; the byte bound of a rendered part is checked after rendering as well.
    output_stream_limit: ClassVar[int | None] = MAX_RENDERED_BYTES
    # ``assign`` and ``capture`` doubling a string would otherwise grow past any output bound.
    local_namespace_limit: ClassVar[int | None] = MAX_RENDERED_BYTES
    context_depth_limit: ClassVar[int] = 10

    def __init__(self, *, autoescape: bool) -> None:
        super().__init__(autoescape=autoescape, undefined=StrictDefaultUndefined)
        for tag in _REMOVED_TAGS:
            self.tags.pop(tag, None)


_HTML = _Bounded(autoescape=True)
_PLAIN = _Bounded(autoescape=False)


def check(content: TemplateContent) -> None:
    """Parse each part; TemplateFault at the first that is not valid Liquid."""
    for part, source, environment in _parts(content):
        try:
            environment.parse(source)
        except LiquidError as exc:
            raise TemplateFault(_sentence(part, exc)) from exc


def render(content: TemplateContent, data: Mapping[str, Any]) -> TemplateContent:
    """Each part rendered with ``data``; TemplateFault names the part, the place and the reason."""
    subject, html, text = (_render(part, source, env, data) for part, source, env in _parts(content))
    return TemplateContent(subject, html, text if content.text is not None else None)


def _parts(content: TemplateContent) -> tuple[tuple[str, str, Environment], ...]:
    return (
        ("subject", content.subject, _PLAIN),
        ("html", content.html, _HTML),
        ("text", content.text or "", _PLAIN),
    )


def _render(part: str, source: str, environment: Environment, data: Mapping[str, Any]) -> str:
    try:
        rendered = environment.from_string(source).render(**data)
    except LiquidError as exc:
        raise TemplateFault(_sentence(part, exc)) from exc
    if len(rendered.encode()) > MAX_RENDERED_BYTES:
        raise TemplateFault(f"The template's {part} renders to more than {MAX_RENDERED_BYTES} bytes.")
    return rendered


def _sentence(part: str, exc: LiquidError) -> str:
    where = exc.context()
    place = f", line {where[0]}" if where else ""
    if isinstance(exc, ResourceLimitError):
        reason = (
            f"{exc.message} (at most {MAX_LOOP_ITERATIONS} loop iterations and range numbers, "
            f"{MAX_RENDERED_BYTES} bytes, {MAX_RENDER_SECONDS} s)"
        )
    elif isinstance(exc, LiquidSyntaxError):
        reason = f"syntax error: {exc.message}"
    else:
        reason = str(exc.message)
    return f"The template's {part}{place}: {reason}."
