"""The attachments bucket in template.yaml: encrypted with the stack's key, never public, and every
plan's retention class expired by a lifecycle rule (attachments are deleted with their jobs)."""

from __future__ import annotations

from typing import Any

import pytest

from herald.domain.attachments import object_key
from herald.domain.plans import LIMITS
from herald_local.cloudformation.template import load_template
from herald_local.config import project_root


@pytest.fixture(scope="module")
def bucket() -> dict[str, Any]:
    properties: dict[str, Any] = load_template(project_root() / "template.yaml")["Resources"][
        "AttachmentsBucket"
    ]["Properties"]
    return properties


def test_objects_are_encrypted_with_the_stacks_key(bucket: dict[str, Any]) -> None:
    (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"] == {
        "SSEAlgorithm": "aws:kms",
        "KMSMasterKeyID": {"Fn::GetAtt": ["HeraldKey", "Arn"]},
    }


def test_the_bucket_is_never_public(bucket: dict[str, Any]) -> None:
    assert bucket["PublicAccessBlockConfiguration"] == dict.fromkeys(
        ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"), True
    )


def test_each_plans_retention_class_expires_a_day_after_its_jobs(bucket: dict[str, Any]) -> None:
    rules = {rule["Prefix"]: rule for rule in bucket["LifecycleConfiguration"]["Rules"]}
    for limits in LIMITS.values():
        prefix = object_key(limits.retention_days, "tenant", "hash").removesuffix("tenant/hash")
        assert rules[prefix]["Status"] == "Enabled"
        assert rules[prefix]["ExpirationInDays"] == limits.retention_days + 1
    assert len(rules) == len({limits.retention_days for limits in LIMITS.values()})
