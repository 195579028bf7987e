"""Data access for the console's sign-in: one-time codes, request throttles and sessions.

DynamoDB calls: a code request = 1 consistent GetItem (the last code) + 1 conditional UpdateItem
(the client's throttle) + 1 conditional PutItem (the code); a verification = 1 conditional
UpdateItem (the client's throttle) + 1 consistent GetItem + 1 conditional DeleteItem (or, for a
wrong code, 1 conditional UpdateItem); a session = 1 PutItem, 1 GetItem per request, 1 DeleteItem.
Each item expires by TTL; readers check the expiry themselves too (TTL deletion is lazy).
"""

from __future__ import annotations

from pynamodb.exceptions import DoesNotExist

from herald.adapters.store.models import (
    CODE_SK,
    SESSION_SK,
    THROTTLE_SK,
    SessionItem,
    SignInCodeItem,
    ThrottleItem,
    session_pk,
    signin_pk,
    throttle_pk,
)
from herald.adapters.store.table import ConditionFailed, Table, conditional, translated
from herald.domain.signin import (
    CODE_STREAK_SECONDS,
    MAX_CODE_TRIES,
    THROTTLE_WINDOW_SECONDS,
    PendingCode,
    Session,
)


class DynamoSignIn:
    def __init__(self, table: Table) -> None:
        self._table = table

    def count_request(self, scope: str, window: int, limit: int) -> bool:
        item = self._table[ThrottleItem](throttle_pk(scope, window), THROTTLE_SK)
        try:
            with conditional("throttle write"):
                item.update(
                    actions=[
                        ThrottleItem.kind.set(ThrottleItem.kind | ThrottleItem),
                        ThrottleItem.requests.add(1),
                        ThrottleItem.expires_at.set(window + THROTTLE_WINDOW_SECONDS),
                    ],
                    condition=ThrottleItem.requests.does_not_exist() | (ThrottleItem.requests < limit),
                )
        except ConditionFailed:
            return False
        return True

    def save_code(self, code: PendingCode, replacing: PendingCode | None) -> bool:
        item = self._table[SignInCodeItem](
            signin_pk(code.address_key),
            CODE_SK,
            digest=code.digest,
            salt=code.salt,
            issued_at=code.issued_at,
            sends=code.sends,
            tries=code.tries,
            name=code.name,
            tenant_id=code.tenant_id,
            expires_at=code.issued_at + CODE_STREAK_SECONDS,
        )
        # Two requests that read the same last code: one stores its code, the other waits its turn.
        unchanged = (
            SignInCodeItem.digest.does_not_exist()
            if replacing is None
            else SignInCodeItem.digest == replacing.digest
        )
        try:
            with conditional("sign-in code write"):
                item.save(condition=unchanged)
        except ConditionFailed:
            return False
        return True

    def code(self, address_key: str) -> PendingCode | None:
        with translated("sign-in code read"):
            try:
                item: SignInCodeItem = self._table[SignInCodeItem].get(
                    signin_pk(address_key), CODE_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return PendingCode(
            address_key=address_key,
            digest=item.digest,
            salt=item.salt,
            issued_at=int(item.issued_at or 0),
            sends=int(item.sends or 1),
            tries=int(item.tries or 0),
            name=item.name,
            tenant_id=item.tenant_id,
        )

    def wrong_try(self, code: PendingCode) -> None:
        try:
            with conditional("sign-in code write"):
                self._table[SignInCodeItem](signin_pk(code.address_key), CODE_SK).update(
                    actions=[SignInCodeItem.tries.add(1)], condition=SignInCodeItem.digest == code.digest
                )
        except ConditionFailed:
            return  # replaced or used meanwhile: nothing left to lock

    def use_code(self, code: PendingCode) -> bool:
        try:
            with conditional("sign-in code write"):
                self._table[SignInCodeItem](signin_pk(code.address_key), CODE_SK).delete(
                    condition=(SignInCodeItem.digest == code.digest) & (SignInCodeItem.tries < MAX_CODE_TRIES)
                )
        except ConditionFailed:
            return False
        return True


class DynamoSessions:
    def __init__(self, table: Table) -> None:
        self._table = table

    def create(self, session: Session) -> None:
        item = self._table[SessionItem](
            session_pk(session.token_digest),
            SESSION_SK,
            tenant_id=session.tenant_id,
            created_at=session.created_at,
            expires_at=session.expires_at,
            member_id=session.member_id,
        )
        with translated("session write"):
            item.save()

    def get(self, token_digest: str) -> Session | None:
        with translated("session read"):
            try:
                item: SessionItem = self._table[SessionItem].get(
                    session_pk(token_digest), SESSION_SK, consistent_read=True
                )
            except DoesNotExist:
                return None
        return Session(
            token_digest, item.tenant_id, item.created_at, int(item.expires_at or 0), item.member_id
        )

    def end(self, token_digest: str) -> None:
        with translated("session write"):
            self._table[SessionItem](session_pk(token_digest), SESSION_SK).delete()
