"""In-memory stand-ins for the console's stores and the platform's mail, with the adapters' conditions
(``herald.adapters.store.signin_store``, ``herald.adapters.platform_mail``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from msgspec.structs import replace

from herald.domain.errors import DependencyError
from herald.domain.signin import MAX_CODE_TRIES, PendingCode, Session


@dataclass
class FakeSignIn:
    codes: dict[str, PendingCode] = field(default_factory=dict)
    throttles: dict[tuple[str, int], int] = field(default_factory=dict)

    def count_request(self, scope: str, window: int, limit: int) -> bool:
        counted = self.throttles.get((scope, window), 0)
        if counted >= limit:
            return False
        self.throttles[(scope, window)] = counted + 1
        return True

    def save_code(self, code: PendingCode, replacing: PendingCode | None) -> bool:
        stored = self.codes.get(code.address_key)
        if (stored and stored.digest) != (replacing and replacing.digest):
            return False
        self.codes[code.address_key] = code
        return True

    def code(self, address_key: str) -> PendingCode | None:
        return self.codes.get(address_key)

    def wrong_try(self, code: PendingCode) -> None:
        stored = self.codes.get(code.address_key)
        if stored is not None and stored.digest == code.digest:
            self.codes[code.address_key] = replace(stored, tries=stored.tries + 1)

    def use_code(self, code: PendingCode) -> bool:
        stored = self.codes.get(code.address_key)
        if stored is None or stored.digest != code.digest or stored.tries >= MAX_CODE_TRIES:
            return False
        del self.codes[code.address_key]
        return True


@dataclass
class FakeSessions:
    sessions: dict[str, Session] = field(default_factory=dict)

    def create(self, session: Session) -> None:
        self.sessions[session.token_digest] = session

    def get(self, token_digest: str) -> Session | None:
        return self.sessions.get(token_digest)

    def end(self, token_digest: str) -> None:
        self.sessions.pop(token_digest, None)


@dataclass
class FakeMail:
    sent: list[tuple[str, str, str]] = field(default_factory=list)
    unavailable: bool = False

    def send(self, to: str, subject: str, text: str) -> None:
        if self.unavailable:
            raise DependencyError("platform mail failed: ServiceUnavailable")
        self.sent.append((to, subject, text))
