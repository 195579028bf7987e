"""The least-privilege check of a test run (a pytest plugin, loaded by tests/conftest.py).

moto does not enforce IAM, so a call a function's policy does not allow passes every test and fails
only once deployed. This plugin records every AWS call each function makes while the integration
tests run its handler in-process (``HeraldInMoto.invoke``) and while the end-to-end tests drive the
local stack (its runners record into the stack's state folder; the e2e fixtures hand the files
over). When every test has run, it evaluates each recorded call against that function's policy in
template.yaml: a call the policy does not allow fails the run, naming the function, the action and
the resource; the actions and resources a policy grants that no call used are listed as well.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from herald_local.aws.function_calls import AwsCall, calls_file, read_calls, record_calls_to
from tests.support.iam_policy import Grant, allows, unused_grants

# Where every process of the run (pytest-xdist workers inherit it) records the calls it sees.
CALLS_DIR_VARIABLE = "HERALD_TEST_AWS_CALLS"
_REPORT = pytest.StashKey[list[str]]()
# moto makes up a new KMS key id for every stack the tests create; the template has one key.
_KEY_ID = re.compile(r"(?<=:key/)[0-9a-f-]{36}$")
# CloudFormation names a bucket after its stack and logical id with a random suffix, new per stack.
_BUCKET = re.compile(r"(?<=:s3:::)([a-z0-9-]+?)-[a-z0-9]{12}(?=/|$)")


def _stable(resource: Any) -> Any:
    if isinstance(resource, list):
        return [_stable(item) for item in resource]
    if not isinstance(resource, str):
        return resource
    return _BUCKET.sub(r"\1", _KEY_ID.sub("HeraldKey", resource))


def _stable_statements(statements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{**statement, "Resource": _stable(statement["Resource"])} for statement in statements]


def keep_calls(folder: Path) -> None:
    """Hand over the calls a local stack's runners recorded in ``folder`` (e2e fixtures, at the end)."""
    target = os.environ.get(CALLS_DIR_VARIABLE)
    if target is None or not folder.is_dir():
        return
    for path in folder.glob("*.jsonl"):
        shutil.copyfile(path, Path(target) / f"local-{folder.parent.name}-{path.name}")


def check(
    calls: Iterable[AwsCall], permissions: Mapping[str, Sequence[Mapping[str, Any]]]
) -> tuple[list[AwsCall], list[Grant]]:
    """The calls their function's policy does not allow, and the grants no call used."""
    by_function: dict[str, list[AwsCall]] = defaultdict(list)
    for call in calls:
        by_function[call.function].append(replace(call, resource=_stable(call.resource)))
    permissions = {function: _stable_statements(statements) for function, statements in permissions.items()}
    refused = [
        call
        for function, made in sorted(by_function.items())
        for call in sorted(set(made), key=lambda c: (c.action, c.resource))
        if not allows(permissions.get(function, ()), call)
    ]
    unused = [
        grant
        for function, statements in sorted(permissions.items())
        for grant in unused_grants(function, statements, by_function.get(function, []))
    ]
    return refused, unused


def report(refused: Sequence[AwsCall], unused: Sequence[Grant]) -> list[str]:
    lines = []
    if refused:
        lines.append(
            f"FAILED: {len(refused)} AWS call(s) not allowed by the function's policy in template.yaml:"
        )
        lines += [f"  {call.function}: {call.action} on {call.resource}" for call in refused]
    else:
        lines.append("passed: every recorded AWS call is allowed by its function's policy in template.yaml")
    if unused:
        lines.append(f"granted but never used by the tests that ran ({len(unused)}):")
        lines += [f"  {grant}" for grant in unused]
    return lines


def _template_permissions() -> dict[str, tuple[dict[str, Any], ...]]:
    from herald_harness.in_moto import template_in_moto

    with pytest.MonkeyPatch.context() as monkeypatch, template_in_moto(monkeypatch) as topology:
        return dict(topology.permissions)


def _is_controller(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if _is_controller(config):
        os.environ[CALLS_DIR_VARIABLE] = tempfile.mkdtemp(prefix="herald-aws-calls-")
    record_calls_to(calls_file(Path(os.environ[CALLS_DIR_VARIABLE]), "tests"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, None, None]:
    yield
    folder = Path(os.environ[CALLS_DIR_VARIABLE])
    calls = list(read_calls(folder))
    if not _is_controller(session.config) or not calls:
        return
    refused, unused = check(calls, _template_permissions())
    session.config.stash[_REPORT] = report(refused, unused)
    if refused:
        session.testsfailed += 1
    shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(_REPORT, None)
    if lines:
        terminalreporter.section("least privilege")
        for line in lines:
            terminalreporter.write_line(line)
