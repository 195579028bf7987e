"""Composition root of the operator CLI: the services of a stack named by its outputs (a deployed
CloudFormation stack's, or the running local stack's)."""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from functools import cached_property

from herald.adapters.aws_clients import AwsClients
from herald.adapters.dead_letters import SqsDeadLetterInbox
from herald.adapters.fanout_queue import SqsFanoutQueue
from herald.adapters.providers.ses_tenants import SesTenants
from herald.adapters.queueing import SqsJobQueue
from herald.adapters.store.audit_store import DynamoAuditLog
from herald.adapters.store.job_store import DynamoJobStore
from herald.adapters.store.key_store import DynamoKeyStore
from herald.adapters.store.table import Table, TableAddress
from herald.adapters.store.tenant_store import DynamoTenantStore
from herald.domain.access import ROLE_ABILITIES, Actor, ActorKind, Grant, Role
from herald.domain.jobs import Channel, QueuePriority
from herald.services.dead_letter_desk import DeadLetterDesk
from herald.services.keys import KeyService
from herald.services.members import MemberService
from herald.services.ports.audit import AuditLog
from herald.services.ports.jobs import JobStore
from herald.services.ports.tenants import TenantStore
from herald.services.tenants import TenantAdmin
from herald.settings import DEFAULT_AWS_MAX_ATTEMPTS


class MissingOutput(LookupError):
    """The stack lacks an output the CLI needs (not a Herald stack, or one from before it existed)."""


def _output(outputs: Mapping[str, str], name: str) -> str:
    if name not in outputs:
        raise MissingOutput(f"the stack has no {name} output; deploy the current template.yaml")
    return outputs[name]


def _queue_urls(outputs: Mapping[str, str]) -> dict[tuple[Channel, QueuePriority], str]:
    return {
        (channel, priority): _output(outputs, f"{channel.value.title()}{priority.value.title()}QueueUrl")
        for channel in Channel
        for priority in QueuePriority
    }


def _ordered_queue_urls(outputs: Mapping[str, str]) -> dict[Channel, str]:
    return {channel: _output(outputs, f"{channel.value.title()}OrderedQueueUrl") for channel in Channel}


def operator_grant() -> Grant:
    """The operator may do everything; the audit log names them by their login on this machine."""
    user = getpass.getuser()
    return Grant(Actor(ActorKind.OPERATOR, user, f"operator {user}"), ROLE_ABILITIES[Role.OWNER])


class OperatorServices:
    """Built once per CLI run; the dead-letter desk only when a command needs it."""

    def __init__(self, outputs: Mapping[str, str], *, region: str, endpoint: str | None) -> None:
        self._table = Table(
            TableAddress(
                _output(outputs, "TableName"),
                region=region,
                endpoint=endpoint,
                max_attempts=DEFAULT_AWS_MAX_ATTEMPTS,
            )
        )
        self._outputs = outputs
        self._clients = AwsClients(region, DEFAULT_AWS_MAX_ATTEMPTS)
        self.tenants: TenantStore = DynamoTenantStore(self._table)
        self.admin = TenantAdmin(
            self.tenants, ses_tenants=self.ses_tenants, audit=DynamoAuditLog(self._table)
        )
        self.keys = KeyService(self.tenants, DynamoKeyStore(self._table))

    @cached_property
    def ses_tenants(self) -> SesTenants | None:
        """The free tenants' SES tenants; None for a stack from before they existed."""
        sender = self._outputs.get("PlatformSenderAddress")
        return SesTenants(self._clients.sesv2, sender) if sender else None

    def migrate_keys(self) -> list[str]:
        """Make every tenant's key from before named keys its first named key (see key_migration)."""
        from herald.adapters.store.key_migration import migrate_keys
        from herald.domain.clock import utc_now

        return list(migrate_keys(self._table, self.tenants.tenant_ids(), operator_grant().actor, utc_now()))

    @cached_property
    def members(self) -> MemberService:
        """Sends no invitation mail (the CLI does not know the platform's sender): the person
        accepts by signing in to the console with the invited address."""
        from herald.adapters.store.member_store import DynamoMemberStore

        return MemberService(self.tenants, DynamoMemberStore(self._table), None)

    @cached_property
    def console_url(self) -> str:
        return _output(self._outputs, "ConsoleUrl")

    @cached_property
    def max_attempts(self) -> int:
        return int(_output(self._outputs, "MaxAttempts"))

    @cached_property
    def audit(self) -> AuditLog:
        """Any tenant's audit log, read by ``herald audit``."""
        return DynamoAuditLog(self._table)

    @cached_property
    def jobs(self) -> JobStore:
        return DynamoJobStore(self._table, self.max_attempts)

    @cached_property
    def dead_letters(self) -> DeadLetterDesk:
        return DeadLetterDesk(
            SqsDeadLetterInbox(
                [
                    _output(self._outputs, name)
                    for name in ("DeadLetterQueueUrl", "OrderedDeadLetterQueueUrl")
                ],
                self._clients.sqs,
            ),
            jobs=self.jobs,
            tenants=self.tenants,
            fanout=SqsFanoutQueue(_output(self._outputs, "FanoutQueueUrl"), self._clients.sqs),
            queue=SqsJobQueue(
                _queue_urls(self._outputs), self._clients.sqs, _ordered_queue_urls(self._outputs)
            ),
            max_attempts=self.max_attempts,
        )
