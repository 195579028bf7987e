"""The operator's commands on deliveries: the dead-letter queue and any tenant's job, printed for a
person (default) or as JSON (--json)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from herald.domain.dead_letters import DeadLetter
from herald.services.dead_letter_desk import DeadLetterDesk, Outcome, Redrive

ERROR_WIDTH = 70


def _short(text: str | None, width: int = ERROR_WIDTH) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _print_letters(letters: Sequence[DeadLetter]) -> None:
    if not letters:
        print("the dead-letter queue is empty")
        return
    for letter in letters:
        print(
            f"{letter.at}  {letter.kind.value:<10} {letter.job_id or letter.message_id}  "
            f"{letter.tenant_id or '-'}  {letter.channel or '-':<7} attempts {letter.attempts or '-'}  "
            f"{_short(letter.error)}"
        )
    print(f"{len(letters)} message(s)")


def _print_letter(letter: DeadLetter) -> None:
    for name, value in letter.summary().items():
        print(f"{name:<10} {value if value is not None else '-'}")
    print("body")
    print(json.dumps(letter.body, indent=2, ensure_ascii=False))


def _print_letters_in_full(letters: Sequence[DeadLetter]) -> None:
    for letter in letters:
        _print_letter(letter)


def _print_redrives(results: Sequence[Redrive]) -> None:
    for result in results:
        ident = result.letter.job_id or result.letter.message_id
        print(f"{ident}  {result.outcome.value:<9} {result.detail}")
    redriven = sum(1 for result in results if result.outcome is Outcome.REDRIVEN)
    print(f"{redriven} of {len(results)} redriven")


def dead_letter_command(args: argparse.Namespace, desk: DeadLetterDesk) -> int:
    """Runs ``herald dlq list|show|redrive``; the exit status."""
    if args.command == "list":
        letters = desk.letters(args.limit)
        _emit([letter.summary() for letter in letters], args.json, lambda: _print_letters(letters))
        return 0
    if args.command == "show":
        found = desk.letter(args.id)
        if not found:
            print(f"herald: no dead-letter message for {args.id}", file=sys.stderr)
            return 1
        _emit([letter.document() for letter in found], args.json, lambda: _print_letters_in_full(found))
        return 0
    results = desk.redrive(args.job, since=args.since)
    if args.job and not results:
        print(f"herald: no dead-letter message for job {args.job}", file=sys.stderr)
        return 1
    documents = [_redrive(result) for result in results]
    _emit(documents, args.json, lambda: _print_redrives(results))
    return 1 if any(result.outcome is Outcome.KEPT for result in results) else 0


def _redrive(result: Redrive) -> dict[str, Any]:
    return {**result.letter.summary(), "outcome": result.outcome.value, "detail": result.detail}


def show_job(document: dict[str, Any], as_json: bool) -> None:
    _emit(document, as_json, lambda: _print_job(document))


def _print_job(job: dict[str, Any]) -> None:
    print(f"job       {job['id']}  ({job['type']}, priority {job['priority']})")
    print(f"tenant    {job['tenantId']}")
    print(f"status    {job['status']}  attempts {job['attempts']} of {job['maxAttempts']}")
    if job.get("errorMessage"):
        print(f"error     {job['errorMessage']}")
    for name in ("createdAt", "startedAt", "completedAt"):
        print(f"{name:<9} {job.get(name) or '-'}")
    for log in job.get("deliveryLogs") or []:
        provider = log.get("usedProvider") or "-"
        print(
            f"attempt {log['attempt']}  {log['createdAt']}  {log['status']:<7} {provider:<9} {_short(log.get('errorMessage'))}"
        )
    for event in job.get("events") or []:
        print(f"event     {event['occurredAt']}  {event['type']}  {event.get('provider') or '-'}")


def _emit(document: Any, as_json: bool, printer: Callable[[], None]) -> None:
    if as_json:
        print(json.dumps(document, ensure_ascii=False))
    else:
        printer()
