"""``rlmeta reconcile --inventory``: an S3 Inventory report as the listing of a bucket.

Owns: reading an inventory as AWS documents it: its ``manifest.json`` (``sourceBucket``,
``destinationBucket``, ``fileFormat``, ``fileSchema``, ``creationTimestamp``, ``files[].key``,
``size`` and ``MD5checksum``), from S3 or from a local copy of the destination bucket, and its
files (CSV, gzipped, its keys URL-encoded; ORC; Parquet; the columnar ones through pyarrow), each
checked against the manifest's MD5 and read a batch at a time into the listing's rows (key without
the store's prefix, size, last-modified ms); every error names the file and the field. Never: a
rule. How old the inventory is goes to the core as the listing's time (a segment whose latest
record came after it, less the grace, is not judged by it), and a deletion is never made on an
inventory's word alone (``--delete`` reads each planned key again from the store with HEAD).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
import shutil
import tempfile
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ._errors import ToolError

Listed = Tuple[str, int, int]

#: The columns a listing needs, by the name a CSV ``fileSchema`` gives them and the one ORC and
#: Parquet files carry.
NEEDED = (("Bucket", "bucket"), ("Key", "key"), ("Size", "size"), ("LastModifiedDate", "last_modified_date"))
FORMATS = ("CSV", "ORC", "Parquet")
#: Rows handed on at a time.
PAGE = 50_000


class InventoryError(ToolError):
    """An inventory that cannot be used: its manifest, a file, a field (exit status 2)."""


def _ms(text: str, where: str) -> int:
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError as e:
        raise InventoryError("inventory_bad_time", f"{where}: LastModifiedDate {text!r} is not an ISO 8601 time") from e


class Inventory:
    """An S3 Inventory report of the store's bucket, read from its manifest."""

    def __init__(self, manifest: str, bucket: str, prefix: str, client: Any = None) -> None:
        self.url, self.bucket, self.prefix, self.client = manifest, bucket, prefix, client
        self.root: Optional[Path] = None
        doc = self._manifest()
        for field in ("sourceBucket", "destinationBucket", "fileFormat", "fileSchema", "creationTimestamp", "files"):
            if field not in doc:
                raise InventoryError("inventory_manifest_field_missing", f"manifest {manifest}: no {field!r} (not an S3 Inventory manifest)")
        if doc["sourceBucket"] != bucket:
            raise InventoryError("inventory_other_bucket", f"manifest {manifest}: sourceBucket is {doc['sourceBucket']!r}, the store is s3://{bucket}/: "
                                 "the inventory of another bucket")
        self.format = doc["fileFormat"]
        if self.format not in FORMATS:
            raise InventoryError("inventory_unknown_format", f"manifest {manifest}: fileFormat {self.format!r} is none of {', '.join(FORMATS)}")
        schema = str(doc["fileSchema"])
        if self.format == "CSV":
            self.columns = [c.strip() for c in schema.split(",")]
            lacking = [csv_name for csv_name, _ in NEEDED if csv_name not in self.columns]
        else:
            lacking = [csv_name for csv_name, col in NEEDED if col not in schema]
        if lacking:
            raise InventoryError("inventory_schema_lacks_field", f"manifest {manifest}: fileSchema lacks {', '.join(lacking)} "
                                 "(enable Size and Last modified in the inventory configuration)")
        try:
            self.created_ms = int(doc["creationTimestamp"])
        except (TypeError, ValueError) as e:
            raise InventoryError("inventory_bad_time", f"manifest {manifest}: creationTimestamp {doc['creationTimestamp']!r} is not milliseconds") from e
        self.destination = str(doc["destinationBucket"]).rsplit(":", 1)[-1]
        self.files: List[Dict[str, Any]] = list(doc["files"])
        for i, f in enumerate(self.files):
            if not isinstance(f, dict) or "key" not in f or "MD5checksum" not in f:
                raise InventoryError("inventory_manifest_field_missing", f"manifest {manifest}: files[{i}] has no key or MD5checksum")
        self.name = f"S3 Inventory {manifest} ({self.format}, {len(self.files)} file(s), made {self.created_ms})"
        self.rows = 0

    # -------------------------------------------------------------------------------------- reading
    def _manifest(self) -> Dict[str, Any]:
        try:
            if self.url.startswith("s3://"):
                b, _, k = self.url[5:].partition("/")
                text = self.client.get_object(Bucket=b, Key=k)["Body"].read()
            else:
                p = Path(self.url)
                text = p.read_bytes()
                self.root = p.parent
            return json.loads(text)
        except InventoryError:
            raise
        except (OSError, ValueError) as e:
            raise InventoryError("inventory_manifest_unreadable", f"manifest {self.url}: {e}") from e
        except Exception as e:  # the S3 client's errors
            raise InventoryError("inventory_manifest_unreadable", f"manifest {self.url}: cannot read it: {e}") from e

    def _local(self, key: str) -> Path:
        """A file of a local copy: the destination bucket's key under the manifest's directory or
        one of its parents (a copy of the whole bucket, or of the report alone)."""
        assert self.root is not None
        for d in [self.root, *self.root.parents]:
            for candidate in (d / key, d / self.destination / key):
                if candidate.is_file():
                    return candidate
        if (self.root / Path(key).name).is_file():
            return self.root / Path(key).name
        raise InventoryError("inventory_file_not_found", f"inventory file {key}: not found next to {self.url} or under its parents")

    def _fetch(self, f: Dict[str, Any], tmp: Path) -> Path:
        """The file, checked against its MD5 (downloaded into ``tmp`` from S3)."""
        key, want = f["key"], str(f["MD5checksum"]).lower()
        md5 = hashlib.md5()
        if self.root is not None:
            path = self._local(key)
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    md5.update(block)
        else:
            path = tmp / Path(key).name
            try:
                body = self.client.get_object(Bucket=self.destination, Key=key)["Body"]
                with open(path, "wb") as out:
                    for block in iter(lambda: body.read(1 << 20), b""):
                        md5.update(block)
                        out.write(block)
            except Exception as e:
                raise InventoryError("inventory_file_unreadable", f"inventory file s3://{self.destination}/{key}: cannot read it: {e}") from e
        if md5.hexdigest() != want:
            raise InventoryError("inventory_md5_mismatch", f"inventory file {key}: MD5 {md5.hexdigest()} is not the manifest's MD5checksum {want} "
                                 "(a partial or changed file)")
        return path

    def _rows(self, key: str, path: Path) -> Iterator[Tuple[str, str, int, int]]:
        """(bucket, key, size, last-modified ms) of each row of one file."""
        if self.format == "CSV":
            yield from self._csv_rows(key, path)
            return
        try:
            import pyarrow as pa
            import pyarrow.orc as orc
            import pyarrow.parquet as pq
        except ImportError as e:
            raise InventoryError("inventory_client_missing", f"inventory file {key}: {self.format} needs pyarrow (pip install 'rlmeta[inventory]')") from e
        names = [col for _, col in NEEDED]
        try:
            if self.format == "Parquet":
                batches = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=PAGE, columns=names)
            else:
                f = orc.ORCFile(path)
                batches = (f.read_stripe(i, columns=names) for i in range(f.nstripes))
            for batch in batches:
                cols = {n: batch.column(batch.schema.get_field_index(n)) for n in names}
                modified = cols["last_modified_date"]
                if pa.types.is_timestamp(modified.type):
                    modified = modified.cast(pa.timestamp("ms")).cast(pa.int64())
                yield from zip(cols["bucket"].to_pylist(), cols["key"].to_pylist(),
                               (s if s is not None else 0 for s in cols["size"].to_pylist()), modified.to_pylist())
        except InventoryError:
            raise
        except (pa.ArrowException, OSError, KeyError, ValueError) as e:
            raise InventoryError("inventory_file_invalid", f"inventory file {key}: not a readable {self.format} inventory: {e}") from e

    def _csv_rows(self, key: str, path: Path) -> Iterator[Tuple[str, str, int, int]]:
        at = {c: i for i, c in enumerate(self.columns)}
        b, k, s, m = (at[csv_name] for csv_name, _ in NEEDED)
        try:
            with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
                for n, row in enumerate(csv.reader(fh), 1):
                    if len(row) != len(self.columns):
                        raise InventoryError("inventory_row_invalid", f"inventory file {key}: row {n} has {len(row)} fields, fileSchema names "
                                             f"{len(self.columns)}")
                    size = int(row[s]) if row[s] else 0
                    yield row[b], urllib.parse.unquote_plus(row[k]), size, _ms(row[m], f"inventory file {key} row {n}")
        except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
            raise InventoryError("inventory_file_invalid", f"inventory file {key}: not a gzipped CSV: {e}") from e
        except ValueError as e:
            raise InventoryError("inventory_file_invalid", f"inventory file {key}: {e}") from e

    def pages(self, progress: bool = False) -> Iterator[List[Listed]]:
        """The listing, a page at a time: the rows under the store's prefix, the prefix cut off."""
        tmp = Path(tempfile.mkdtemp(prefix="rlmeta-inventory-"))
        try:
            for f in self.files:
                path = self._fetch(f, tmp)
                page: List[Listed] = []
                for bucket, key, size, modified in self._rows(f["key"], path):
                    self.rows += 1
                    if bucket != self.bucket:
                        raise InventoryError("inventory_other_bucket", f"inventory file {f['key']}: a row of bucket {bucket!r}, not {self.bucket!r}")
                    if key.startswith(self.prefix) and not key.endswith("/"):
                        page.append((key[len(self.prefix):], int(size), int(modified)))
                        if len(page) >= PAGE:
                            yield page
                            page = []
                if page:
                    yield page
                if self.root is None:
                    os.unlink(path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def list(self, progress: bool = False) -> List[Listed]:
        out: List[Listed] = []
        for page in self.pages(progress):
            out.extend(page)
        return out


def open_inventory(manifest: str, store: Any) -> Inventory:
    """The inventory of ``store`` (an S3 store: its bucket, prefix and client)."""
    bucket = getattr(store, "bucket", None)
    if bucket is None:
        raise InventoryError("inventory_not_s3", f"--inventory lists an S3 bucket: the store {store.name} is not one (give --store s3://BUCKET/PREFIX)")
    return Inventory(manifest, bucket, store.prefix, store.client)
