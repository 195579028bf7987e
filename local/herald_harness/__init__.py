"""Herald driven as the tests and the benchmarks drive it, on the local runtime (herald_local).

- ``in_moto``: the real handlers in this process against moto resources built from template.yaml;
- ``running_stack``, ``tenants``: the local stack as a subprocess, and its tenants as clients;
- ``vendors``, ``inbound_signers``, ``inbound_samples``: email vendors' (one module each) and
  payment processors' webhooks, signed with test-only credentials, from the payloads in
  ``inbound_payloads/`` (``senders``: what they share);
- ``dns``: a stand-in resolver (the machine has none); ``patches``: the changes to this process
  that the others make, undone together, with pytest's ``monkeypatch`` or without pytest.

Nothing here imports pytest, the tests or the benchmarks; the local runtime never imports this.
"""
