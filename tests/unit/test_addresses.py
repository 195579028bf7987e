"""The one form suppressions compare addresses on: every spelling of a mailbox is that mailbox, and
a +tag stays another one; and the characters a bare address cannot hold before its @-sign."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from herald.domain.addresses import canonical_address, refused_local_characters


@pytest.mark.parametrize(
    "spelling",
    [
        "victim-case@example.com",
        "\uff56ictim-case@example.com",  # a fullwidth v: the probe's bypass
        "Victim-Case@EXAMPLE.COM",
        "VICTIM-CASE@example.com.",
        "\uff36\uff49ctim-case@\uff45xample.com",  # fullwidth letters on both sides
    ],
)
def test_every_spelling_of_a_mailbox_is_that_mailbox(spelling: str) -> None:
    assert canonical_address(spelling) == "victim-case@example.com"


def test_an_internationalised_domain_is_one_domain_in_either_spelling() -> None:
    assert canonical_address("Ada@Bücher.Example") == canonical_address("ada@xn--bcher-kva.example")
    assert canonical_address("ada@xn--bcher-kva.example") == "ada@xn--bcher-kva.example"


def test_a_tag_or_another_character_is_another_mailbox() -> None:
    base = canonical_address("victim-case@example.com")
    assert canonical_address("victim-case+news@example.com") != base
    assert canonical_address("victim_case@example.com") != base


@given(st.emails())
def test_the_canonical_form_is_its_own_canonical_form(address: str) -> None:
    canonical = canonical_address(address)
    assert canonical_address(canonical) == canonical
    assert canonical_address(address.upper()) == canonical


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("first.last+tag!#$%&'*/=?^_`{|}~-@example.com", []),
        ("ünïcode@example.com", []),  # non-ASCII is judged by the full address check
        ('fail-500+"><script>@example.com', ['"', "<", ">"]),
        ('"quoted@at"@example.com', ['"']),  # only what precedes the first @-sign
        ("no at-sign <here>", []),  # nothing to name: the address check says the @-sign is missing
        ("a b,c;d@example.com", [" ", ",", ";"]),
    ],
)
def test_the_local_parts_refused_characters_are_named_once_each_in_order(
    address: str, refused: list[str]
) -> None:
    assert refused_local_characters(address) == refused
