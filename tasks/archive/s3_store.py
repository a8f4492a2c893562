"""A store in an S3-compatible bucket, through boto3 (``pip install evalfleet[archive]``;
the slim client never imports it).

    s3://bucket/prefix?endpoint=http://127.0.0.1:8333&region=us-east-1
    s3://ACCESS_KEY:SECRET_KEY@bucket/prefix?endpoint=...

Without ``endpoint`` the client talks to AWS. Credentials are the URL's, else boto3's own
chain (its environment variables, files and instance roles); requests use path-style
addressing, which every S3-compatible server (SeaweedFS, MinIO, Garage, Ceph) understands.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote

from .errors import NotArchived, StoreError

#: Seconds to connect and to read one reply: a store that hangs is a store that is down.
TIMEOUT_S = 10.0


@dataclass
class S3Store:
    """Keys as objects under ``prefix`` in ``bucket``."""

    client: Any
    bucket: str
    prefix: str = ""
    endpoint: str = ""

    @classmethod
    def from_url(cls, url: SplitResult) -> S3Store:
        """The bucket an ``s3://`` URL names.

        Raises:
            ValueError: no bucket in the URL.
            StoreError: boto3 is not installed.
        """
        if not url.hostname:
            raise ValueError("archive URL s3://: name a bucket, s3://bucket/prefix")
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        endpoint = query.get("endpoint", "")
        client = s3_client(endpoint, query.get("region", "us-east-1"),
                           unquote(url.username or ""), unquote(url.password or ""))
        return cls(client, url.hostname, url.path.strip("/"), endpoint)

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` at ``key`` (S3 writes are atomic and durable when they return).

        Raises:
            StoreError: the store refused or could not be reached.
        """
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        except Exception as err:  # botocore's errors, connection failures included
            raise StoreError(f"{self.describe()}: cannot write {key}: {err}") from err

    def get(self, key: str) -> bytes | None:
        """The object at ``key`` (None: there is none).

        Raises:
            StoreError: the store refused or could not be reached.
        """
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self._key(key))
            return bytes(reply["Body"].read())
        except Exception as err:
            if _missing(err):
                return None
            raise StoreError(f"{self.describe()}: cannot read {key}: {err}") from err

    def keys(self, prefix: str) -> Iterator[str]:
        """The keys under ``prefix``, from the bucket's own listing (a page at a time).

        Raises:
            StoreError: the store refused or could not be reached.
        """
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self._key(prefix))
        try:
            for page in pages:
                yield from (self._unkey(o["Key"]) for o in page.get("Contents", []))
        except Exception as err:
            raise StoreError(f"{self.describe()}: cannot list {prefix}: {err}") from err

    def link(self, key: str, expires_s: int) -> str | None:
        """A presigned ``GET`` of ``key``, valid ``expires_s`` seconds (at most 7 days,
        SigV4's limit), once the object is there.

        Raises:
            NotArchived: there is no object at ``key`` (yet).
            StoreError: the store could not be asked.
        """
        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(key))
            return str(self.client.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": self._key(key)},
                ExpiresIn=min(expires_s, 7 * 24 * 3600)))
        except Exception as err:
            if _missing(err):
                raise NotArchived(key) from None
            raise StoreError(f"{self.describe()}: cannot link {key}: {err}") from err

    def prepare(self) -> None:
        """Create the bucket unless it exists (compose's first start; on AWS the bucket
        is the operator's, and the HEAD finds it).

        Raises:
            StoreError: it could not be created.
        """
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception:
            try:
                self.client.create_bucket(Bucket=self.bucket)
            except Exception as err:
                raise StoreError(f"{self.describe()}: cannot create the bucket: {err}") from err

    def describe(self) -> str:
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"s3://{self.bucket}/{self.prefix}{where}"

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def _unkey(self, key: str) -> str:
        return key[len(self.prefix) + 1:] if self.prefix else key


def s3_client(endpoint: str, region: str, access_key: str = "", secret_key: str = "") -> Any:
    """A boto3 S3 client with short timeouts and no retries of its own (the archiver
    retries, with backoff, and counts the failures).

    Raises:
        StoreError: boto3 is not installed.
    """
    try:
        import boto3
        from botocore.config import Config
    except ImportError as err:
        raise StoreError("an s3:// archive needs boto3: pip install 'evalfleet[archive]'") \
            from err
    config = Config(connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S,
                    retries={"max_attempts": 1, "mode": "standard"},
                    s3={"addressing_style": "path"})
    keys = {"aws_access_key_id": access_key, "aws_secret_access_key": secret_key} \
        if access_key else {}
    return boto3.client("s3", endpoint_url=endpoint or None, region_name=region,
                        config=config, **keys)


def _missing(err: Exception) -> bool:
    """Whether ``err`` says the key does not exist (S3's ``NoSuchKey``, a 404)."""
    response = getattr(err, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    return code in {"NoSuchKey", "404", "NotFound"}
