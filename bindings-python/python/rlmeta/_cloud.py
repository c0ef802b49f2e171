"""``rlmeta reconcile`` on Google Cloud Storage and Azure Blob Storage, where Aiven's
tiered-storage RSM also keeps segments (its key layout is the same on every backend: the `aiven`
preset).

Owns: listing a bucket or container a page at a time through the clouds' official Python clients
(``google-cloud-storage``, ``azure-storage-blob``; optional extras, imported when used), and
deleting keys. Credentials as each cloud's tools take them: Application Default Credentials for
GCS (or ``STORAGE_EMULATOR_HOST`` for an emulator, anonymously), a connection string for Azure
(``AZURE_STORAGE_CONNECTION_STRING``). Never: a rule (classes and the plan are the core's).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple

from ._reconcile import Listed, StoreError, _bar


def _listed(store: Any, progress: bool, pages: Callable[[], Iterable[Iterable[Any]]], modified: str) -> Iterator[List[Listed]]:
    """The rows of each page a client lists (objects with ``name``, ``size`` and the attribute
    ``modified`` holding the last-modified time); a client's error is the store's."""
    bar = _bar(progress, "Listing")
    try:
        for page in pages():
            rows = [(b.name[len(store.prefix):], int(b.size or 0), int(getattr(b, modified).timestamp() * 1000)) for b in page]
            bar.update(len(rows))
            yield rows
    except Exception as e:  # google.api_core's NotFound, azure.core's ResourceNotFoundError, ...
        raise StoreError("store_list_failed", f"cannot list {store.name}: {type(e).__name__}: {e}") from e
    finally:
        bar.close()


def _paged(store: Any, progress: bool) -> List[Listed]:
    out: List[Listed] = []
    for page in store.pages(progress):
        out.extend(page)
    return out


class GcsStore:
    """``gs://BUCKET/PREFIX``."""

    PAGE = 1000

    def __init__(self, bucket: str, prefix: str, project: Optional[str] = None) -> None:
        self.bucket, self.prefix = bucket, prefix
        emulator = os.environ.get("STORAGE_EMULATOR_HOST")
        self.name = f"gs://{bucket}/{prefix}" + (f" at {emulator}" if emulator else "")
        try:
            from google.cloud import storage
        except ImportError as e:
            raise StoreError("store_client_missing", f"cannot list {self.name}: google-cloud-storage is not installed "
                             f"(pip install 'rlmeta[gcs]'): {e}") from e
        try:
            if emulator:
                from google.auth.credentials import AnonymousCredentials

                self.client = storage.Client(project=project or "rlmeta", credentials=AnonymousCredentials())
            else:
                self.client = storage.Client(project=project)
        except Exception as e:  # no credentials found, and the like
            raise StoreError("store_list_failed", f"cannot list {self.name}: {type(e).__name__}: {e}") from e

    def pages(self, progress: bool = False) -> Iterator[List[Listed]]:
        return _listed(self, progress, lambda: self.client.list_blobs(self.bucket, prefix=self.prefix or None,
                                                                      page_size=self.PAGE).pages, "updated")

    def list(self, progress: bool = False) -> List[Listed]:
        return _paged(self, progress)

    def delete(self, keys: Sequence[str]) -> List[Tuple[str, Optional[str]]]:
        bucket = self.client.bucket(self.bucket)
        done: List[Tuple[str, Optional[str]]] = []
        for k in keys:
            try:
                bucket.blob(self.prefix + k).delete()
                done.append((k, None))
            except Exception as e:
                done.append((k, f"{type(e).__name__}: {e}"))
        return done


class AzureStore:
    """``az://CONTAINER/PREFIX`` of the account a connection string names."""

    PAGE = 5000
    BATCH = 256

    def __init__(self, container: str, prefix: str, connection_string: Optional[str]) -> None:
        self.container, self.prefix = container, prefix
        conn = connection_string or os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
        account = dict(p.split("=", 1) for p in (conn or "").split(";") if "=" in p).get("AccountName", "?")
        self.name = f"az://{container}/{prefix} (account {account})"
        if not conn:
            raise StoreError("store_credentials_missing", f"cannot list {self.name}: no connection string (AZURE_STORAGE_CONNECTION_STRING or "
                             "--azure-connection-string)")
        try:
            from azure.storage.blob import BlobServiceClient
        except ImportError as e:
            raise StoreError("store_client_missing", f"cannot list {self.name}: azure-storage-blob is not installed "
                             f"(pip install 'rlmeta[azure]'): {e}") from e
        try:
            self.client = BlobServiceClient.from_connection_string(conn).get_container_client(container)
        except Exception as e:  # a malformed connection string
            raise StoreError("store_list_failed", f"cannot list {self.name}: {type(e).__name__}: {e}") from e

    def pages(self, progress: bool = False) -> Iterator[List[Listed]]:
        return _listed(self, progress, lambda: self.client.list_blobs(name_starts_with=self.prefix or None,
                                                                      results_per_page=self.PAGE).by_page(), "last_modified")

    def list(self, progress: bool = False) -> List[Listed]:
        return _paged(self, progress)

    def delete(self, keys: Sequence[str]) -> List[Tuple[str, Optional[str]]]:
        """Blob Batch requests of up to ``BATCH`` deletions (the service's limit); each key's own
        status is its result, a batch that fails as a whole fails each of its keys."""
        done: List[Tuple[str, Optional[str]]] = []
        for i in range(0, len(keys), self.BATCH):
            chunk = list(keys[i:i + self.BATCH])
            try:
                answers = list(self.client.delete_blobs(*[self.prefix + k for k in chunk], raise_on_any_failure=False))
            except Exception as e:
                done.extend((k, f"{type(e).__name__}: {e}") for k in chunk)
                continue
            for k, r in zip(chunk, answers):
                ok = 200 <= r.status_code < 300 or r.status_code == 404  # 404: already gone
                done.append((k, None if ok else f"HTTP {r.status_code} {r.reason}"))
        return done
