"""The console reads every answer and writes every request body by the field names of one module,
generated from the API's models (docs/console.md, "How it is built"): the committed module is what
the generator writes, every name a page takes from it is a field of its model, and no page spells a
model's field itself."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from herald_harness.console_fields import MODULE, field_names, models, rendered

REWRITE = "rewrite it with: .venv/bin/python -m herald_harness.console_fields"
IMPORT = re.compile(r'import \{([^}]*)\} from "\./' + re.escape(MODULE.name) + '";')
# A property read: what it is read from (a name, or a call's or an index's end), then its name.
PROPERTY = re.compile(r"([\w$)\]]+)\??\.([A-Za-z_$][\w$]*)")


def pages() -> list[Path]:
    return [asset for asset in sorted(MODULE.parent.glob("*.js")) if asset != MODULE]


def reads_through_the_module(page: Path) -> Iterator[tuple[str, str]]:
    """Each (model, field) the page takes as ``Model.field`` of a model it imports from the module."""
    text = page.read_text(encoding="utf-8")
    imported = {name.strip() for found in IMPORT.findall(text) for name in found.split(",") if name.strip()}
    for owner, name in PROPERTY.findall(text):
        # Upper-case names are the module's vocabulary (ROLES, AUDIT_ACTIONS), lists not models.
        if owner in imported and not owner.isupper():
            yield owner, name


def test_the_committed_module_is_what_the_generator_writes() -> None:
    assert MODULE.read_text(encoding="utf-8") == rendered(), REWRITE


def test_every_field_a_page_reads_is_a_field_of_its_model() -> None:
    fields = {model.__name__: set(field_names(model)) for model in models()}
    reads = {(page.name, owner, name) for page in pages() for owner, name in reads_through_the_module(page)}

    assert {page for page, _, _ in reads} >= {
        "account.js",
        "app.js",
        "job.js",
        "jobs.js",
        "overview.js",
        "keys.js",
        "sending.js",
        "signin.js",
        "access.js",
        "team.js",
        "templates.js",
        "eventtypes.js",
        "subscriptions.js",
        "events.js",
    }
    assert sorted(read for read in reads if read[2] not in fields.get(read[1], set())) == []


def test_no_page_reads_a_models_field_by_its_own_spelling() -> None:
    """The camelCase names (jobId, maxAttempts, ...) are the ones no other object of a page has:
    read from anything but the module's objects (``job.maxAttempts``), one is a second spelling of a
    model's field. One-word names (id, status, ...) are also names of the browser's objects, so this
    cannot tell them apart; the pages take those from the module as well."""
    named = {model.__name__ for model in models()}
    camel = {name for model in models() for name in field_names(model) if name != name.lower()}
    spelled = {
        (page.name, owner, name)
        for page in pages()
        for owner, name in PROPERTY.findall(page.read_text(encoding="utf-8"))
        if name in camel and owner not in named
    }
    assert sorted(spelled) == []
