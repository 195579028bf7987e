"""The attachments bucket (template.yaml, ``AttachmentsBucket``): one object per file, encrypted with
the stack's KMS key (SSE-KMS), never public; the bucket's lifecycle rules delete each object when
its retention class ends (the key's prefix, ``herald.domain.attachments.object_key``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from herald.domain.errors import DependencyError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_GONE = frozenset({"NoSuchKey", "404"})


class S3AttachmentStore:
    def __init__(self, client: Callable[[], S3Client], bucket: str, kms_key_id: str) -> None:
        self._client = client
        self._bucket = bucket
        self._kms_key_id = kms_key_id

    def put(self, key: str, content: bytes, content_type: str) -> None:
        try:
            # The key is named on every put (the bucket's default says the same), so an object is
            # never stored under S3's own key should the default change.
            self._client().put_object(
                Bucket=self._bucket,
                Key=key,
                Body=content,
                ContentType=content_type,
                ServerSideEncryption="aws:kms",
                SSEKMSKeyId=self._kms_key_id,
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"attachments bucket: {exc}") from exc

    def get(self, key: str) -> bytes:
        try:
            answer = self._client().get_object(Bucket=self._bucket, Key=key)
            return answer["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _GONE:
                raise KeyError(key) from exc
            raise DependencyError(f"attachments bucket: {exc}") from exc
        except BotoCoreError as exc:
            raise DependencyError(f"attachments bucket: {exc}") from exc
