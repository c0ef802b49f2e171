"""``rlmeta reconcile``: the metadata held against the remote store itself (issue 21).

Owns: the hosts' half: listing a store (a local directory, or any S3-compatible bucket, pages of
1,000 keys followed; every store gives ``pages(progress)``), feeding the core's ledger the metadata
records and the core's classifier the listing a page at a time (keeping only the objects that are
not live, so memory is the ledger's, never the store's), printing the report, and
``--delete``: re-listing and re-reading just before deleting, deleting only what both plans call
safe, and journaling every deletion. Never: a rule (every class, total and the cleanup plan are
the core's ``reconcile``), or a write to ``__remote_log_metadata``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _native
from ._errors import ToolError

Listed = Tuple[str, int, int]  # (key without the prefix, size, last-modified ms)


class StoreError(ToolError):
    """A store that cannot be listed or deleted from (exit status 2)."""


class MetadataError(ToolError):
    """Metadata that cannot be read (exit status 2)."""


# ---------------------------------------------------------------------------------------------- stores
class LocalStore:
    """A directory of a file-based RSM (or an NFS mount): keys are paths relative to it."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)
        self.name = f"file://{self.root.resolve()}"

    PAGE = 1000

    def pages(self, progress: bool) -> Iterator[List[Listed]]:
        """The files under the root, a page of up to PAGE at a time."""
        if not self.root.is_dir():
            raise StoreError("store_not_found", f"cannot list {self.name}: not a directory")
        if not os.access(self.root, os.R_OK | os.X_OK):
            raise StoreError("store_permission_denied", f"cannot list {self.name}: permission denied")
        out: List[Listed] = []
        bar = _bar(progress, "Listing")
        errors: List[str] = []
        try:
            for dirpath, _, files in os.walk(self.root, onerror=lambda e: errors.append(str(e))):
                for f in files:
                    p = Path(dirpath) / f
                    try:
                        st = p.stat()
                    except OSError as e:  # removed while listing: not there
                        if not isinstance(e, FileNotFoundError):
                            errors.append(str(e))
                        continue
                    out.append((p.relative_to(self.root).as_posix(), st.st_size, st.st_mtime_ns // 1_000_000))
                    if len(out) >= self.PAGE:
                        yield out
                        out = []
                bar.update(len(files))
                if errors:
                    raise StoreError("store_list_failed", f"cannot list {self.name}: {errors[0]}")
        finally:
            bar.close()
        if errors:
            raise StoreError("store_list_failed", f"cannot list {self.name}: {errors[0]}")
        if out:
            yield out

    def list(self, progress: bool) -> List[Listed]:
        return [o for page in self.pages(progress) for o in page]

    def delete(self, keys: Sequence[str]) -> List[Tuple[str, Optional[str]]]:
        """Deletes keys; returns (key, error or None) for each. Empty directories left behind
        (a segment's) go too, never the root."""
        done: List[Tuple[str, Optional[str]]] = []
        for k in keys:
            p = self.root / k
            try:
                p.unlink()
                done.append((k, None))
            except OSError as e:
                done.append((k, str(e)))
                continue
            d = p.parent
            while d != self.root and self.root in d.parents:
                try:
                    d.rmdir()
                except OSError:
                    break
                d = d.parent
        return done


class S3Store:
    """Any S3-compatible bucket (credentials as AWS tools take them: environment, profile, config
    files, instance roles)."""

    PAGE = 1000

    def __init__(self, bucket: str, prefix: str, endpoint_url: Optional[str], region: Optional[str], profile: Optional[str]) -> None:
        self.bucket, self.prefix, self.endpoint_url = bucket, prefix, endpoint_url
        self.name = f"s3://{bucket}/{prefix}" + (f" at {endpoint_url}" if endpoint_url else "")
        try:
            import boto3
            from botocore.config import Config
        except ImportError as e:  # pragma: no cover - boto3 is a dependency
            raise StoreError("store_client_missing", f"cannot list {self.name}: boto3 is not installed ({e})") from e
        session = boto3.session.Session(profile_name=profile) if profile else boto3.session.Session()
        self.client = session.client("s3", endpoint_url=endpoint_url, region_name=region,
                                     config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=10, read_timeout=60))
        self.requests = 0

    def pages(self, progress: bool) -> Iterator[List[Listed]]:
        """The bucket's keys under the prefix, a page of up to PAGE (one request) at a time."""
        from botocore.exceptions import BotoCoreError, ClientError

        bar = _bar(progress, "Listing")
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix, PaginationConfig={"PageSize": self.PAGE})
            for page in pages:
                self.requests += 1
                contents = page.get("Contents", [])
                yield [(o["Key"][len(self.prefix):], int(o["Size"]), int(o["LastModified"].timestamp() * 1000)) for o in contents]
                bar.update(len(contents))
        except (ClientError, BotoCoreError) as e:
            raise StoreError("store_list_failed", f"cannot list {self.name}: {e}") from e
        finally:
            bar.close()

    def list(self, progress: bool) -> List[Listed]:
        return [o for page in self.pages(progress) for o in page]

    def head(self, key: str) -> Optional[Tuple[int, int]]:
        """(size, last-modified ms) of one key now, None if it is gone."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            r = self.client.head_object(Bucket=self.bucket, Key=self.prefix + key)
        except ClientError as e:
            if str(e.response.get("Error", {}).get("Code")) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise StoreError("store_read_failed", f"cannot read {self.name}{key}: {e}") from e
        except BotoCoreError as e:
            raise StoreError("store_read_failed", f"cannot read {self.name}{key}: {e}") from e
        return int(r["ContentLength"]), int(r["LastModified"].timestamp() * 1000)

    def delete(self, keys: Sequence[str]) -> List[Tuple[str, Optional[str]]]:
        from botocore.exceptions import BotoCoreError, ClientError

        done: List[Tuple[str, Optional[str]]] = []
        for i in range(0, len(keys), self.PAGE):
            chunk = list(keys[i:i + self.PAGE])
            try:
                r = self.client.delete_objects(Bucket=self.bucket, Delete={
                    "Objects": [{"Key": self.prefix + k} for k in chunk], "Quiet": False})
            except (ClientError, BotoCoreError) as e:
                done += [(k, str(e)) for k in chunk]
                continue
            failed = {e["Key"][len(self.prefix):]: f"{e.get('Code')}: {e.get('Message')}" for e in r.get("Errors", [])}
            done += [(k, failed.get(k)) for k in chunk]
        return done


def open_store(url: str, endpoint_url: Optional[str], region: Optional[str], profile: Optional[str],
               gcs_project: Optional[str] = None, azure_connection_string: Optional[str] = None) -> Any:
    for scheme in ("s3://", "gs://", "az://"):
        if url.startswith(scheme):
            bucket, _, prefix = url[len(scheme):].partition("/")
            if not bucket:
                raise StoreError("store_invalid_url", f"no bucket in {url!r} ({scheme}BUCKET/PREFIX)")
            if scheme == "s3://":
                return S3Store(bucket, prefix, endpoint_url, region, profile)
            from . import _cloud

            if scheme == "gs://":
                return _cloud.GcsStore(bucket, prefix, gcs_project)
            return _cloud.AzureStore(bucket, prefix, azure_connection_string)
    if url.startswith("file://"):
        url = url[7:]
    if "://" in url:
        raise StoreError("store_invalid_url", f"unsupported store {url!r}: a directory, file://DIR, s3://BUCKET/PREFIX, gs://BUCKET/PREFIX "
                         "or az://CONTAINER/PREFIX")
    return LocalStore(url)


def _bar(progress: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(desc=desc, unit=" keys", file=sys.stderr, disable=None if progress else True, leave=False)


# ---------------------------------------------------------------------------------------------- the core's answer
@dataclass(frozen=True)
class Finding:
    """What the core found: every segment; of the objects, only those not live (a live object
    is counted in the totals, never held); ``safe`` indexes ``objects``, ``person`` ``segments``."""

    partitions: List[str]
    segments: List[Dict[str, Any]]
    objects: List[Dict[str, Any]]
    totals: List[Dict[str, Any]]
    safe: List[int]
    person: List[int]
    listed: int


STATE_NAMES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED", 3: "DELETE_SEGMENT_FINISHED"}


def classify(ledger: Any, listing: Union[List[Listed], Iterable[List[Listed]]], layout: str, now_ms: int, grace_ms: int,
             metadata_as_of_ms: Optional[int] = None, listing_as_of_ms: Optional[int] = None) -> Finding:
    """Classifies a listing against the ledger, a page at a time: ``listing`` is the rows, or an
    iterable of pages of rows (a store's ``pages()``). Memory: the ledger and the objects that are
    not live, never the listing.
    metadata_as_of_ms: None for the live topic read to its end; for files, how recent they are
    (the core never plans to delete an object modified after that, less the grace).
    listing_as_of_ms: None for a listing made now; for an inventory, when it was made (the core
    does not judge a segment by it whose latest record came after that, less the grace)."""
    if isinstance(listing, list) and (not listing or isinstance(listing[0], tuple)):
        listing = [listing]  # type: ignore[list-item]
    ledger.classify_start(layout, now_ms, grace_ms, metadata_as_of_ms, listing_as_of_ms)
    kept: List[Any] = []
    for page in listing:
        if page:
            kept += ledger.classify_feed(page)
    parts, segs, totals, person, waited, listed = ledger.classify_finish()
    kept += waited
    kept.sort(key=lambda k: k[0][0])
    names = [f"{t}-{p} ({i})" for i, t, p in parts]
    key_of = {k[0][0]: k[0][1] for k in kept}
    segments = [{
        "segmentId": s[0], "partition": names[s[1]], "class": s[2], "state": STATE_NAMES.get(s[3], s[3]), "sinceMs": s[4],
        "startOffset": s[5][0], "endOffset": s[5][1], "segmentSizeInBytes": s[5][2], "kafkaKnows": s[6],
        "objects": [key_of[i] for i in s[7]], "objectBytes": s[8], "missingFiles": s[9], "covered": s[10], "why": s[11],
    } for s in segs]
    objects = [{
        "key": key, "size": size, "lastModifiedMs": modified, "class": o[0],
        "segmentId": o[2], "partition": None if o[3] is None else names[o[3]], "file": o[4], "safeToDelete": o[5], "note": o[6],
    } for (_, key, size, modified), o in kept]
    safe = [i for i, o in enumerate(objects) if o["safeToDelete"]]
    tot = [{"partition": None if p is None else names[p], "class": c, "segments": ns, "objects": no, "objectBytes": ob, "segmentBytes": sb}
           for p, c, ns, no, ob, sb in totals]
    return Finding(names, segments, objects, tot, safe, person, listed)


# ---------------------------------------------------------------------------------------------- report
MONEY = ("orphaned", "leaked", "abandoned_upload")
READS = ("dangling", "size_mismatch", "stuck_deletion")


def _class_sums(f: Finding) -> Dict[str, Dict[str, int]]:
    sums: Dict[str, Dict[str, int]] = {}
    for t in f.totals:
        s = sums.setdefault(t["class"], {"segments": 0, "objects": 0, "objectBytes": 0, "segmentBytes": 0})
        for k in ("segments", "objects", "objectBytes", "segmentBytes"):
            s[k] += t[k]
    return sums


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def report_text(f: Finding, store: str, layout: str, grace_ms: int, source: str) -> str:
    sums = _class_sums(f)
    z = {"segments": 0, "objects": 0, "objectBytes": 0, "segmentBytes": 0}
    L: List[str] = [f"rlmeta reconcile: {store} (layout {layout}) against {source}; grace {grace_ms // 1000} s"]
    money = sum(sums.get(c, z)["objectBytes"] for c in MONEY)
    L.append(f"What costs money: {human_bytes(money)} in objects no live segment needs")
    for c, label in (("orphaned", "orphaned (no metadata names their segment)"), ("leaked", "leaked (segment deleted, objects left)"),
                     ("abandoned_upload", "abandoned uploads (copy started, never finished)")):
        s = sums.get(c, z)
        L.append(f"  {label:<52} {s['objects']:>7} objects {human_bytes(s['objectBytes']):>11}  {s['segments']:>5} segments")
    L.append("What breaks reads:")
    for c, label in (("dangling", "dangling (finished, objects missing)"), ("size_mismatch", "size mismatch (log object vs segmentSizeInBytes)"),
                     ("stuck_deletion", "stuck deletions (DELETE_SEGMENT_STARTED)")):
        s = sums.get(c, z)
        L.append(f"  {label:<52} {s['segments']:>5} segments, {human_bytes(s['segmentBytes'])} of log unreadable")
    live = sums.get("live", z)
    L.append(f"Live and complete: {live['segments']} segments, {live['objects']} objects, {human_bytes(live['objectBytes'])}")
    other = [(c, sums[c]) for c in ("copy_in_progress", "deletion_in_progress", "deleted") if c in sums]
    if other:
        L.append("Also: " + ", ".join(f"{c.replace('_', ' ')} {s['segments']}" for c, s in other))
    un = sums.get("unmatched", z)
    if un["objects"]:
        L.append(f"Unmatched keys (reported, never guessed, never deleted): {un['objects']}")
        for o in [o for o in f.objects if o["class"] == "unmatched"][:20]:
            L.append(f"  {o['key']}: {o['note']}")
    L.append("")
    L.append("By partition:")
    rows: Dict[str, List[str]] = {}
    for t in f.totals:
        if t["class"] in ("live", "deleted"):
            continue
        n = t["segments"] if t["class"] in READS else t["objects"]
        what = "segments" if t["class"] in READS else "objects"
        rows.setdefault(t["partition"] or "(no partition in key)", []).append(f"{t['class']} {n} {what}")
    for p in sorted(rows):
        L.append(f"  {p}: " + ", ".join(rows[p]))
    if not rows:
        L.append("  nothing to report")
    L.append("")
    safe = [f.objects[i] for i in f.safe]
    L.append(f"Cleanup plan: safe to delete {len(safe)} objects ({human_bytes(sum(o['size'] for o in safe))})")
    for o in safe[:50]:
        L.append(f"  {o['class']:<17} {o['key']}")
    if len(safe) > 50:
        L.append(f"  ... {len(safe) - 50} more (--json lists all)")
    waiting = [o for o in f.objects if o["note"] and o["class"] in MONEY and not o["safeToDelete"]]
    if waiting:
        L.append(f"Not yet (within the grace): {len(waiting)} objects")
    L.append(f"Needs a person: {len(f.person)} segments")
    for i in f.person:
        s = f.segments[i]
        L.append(f"  {s['class']:<17} {s['partition']} {s['segmentId']} [{s['startOffset']}..{s['endOffset']}]: {s['why']}")
    return "\n".join(L) + "\n"


def report_json(f: Finding, store: str, layout: str, grace_ms: int, now_ms: int) -> Dict[str, Any]:
    """The report as JSON: segments other than deleted ones, each with the keys of its objects
    unless it is live (a live segment's objects are counted in ``objectBytes`` and the totals,
    never held: the report is bounded by what needs attention, not by the store)."""
    return {
        "store": store, "layout": layout, "graceMs": grace_ms, "nowMs": now_ms,
        "summary": _class_sums(f), "totals": f.totals,
        "segments": [s for s in f.segments if s["class"] != "deleted"],
        "objects": [o for o in f.objects if o["class"] != "live"],
        "plan": {"safeToDelete": [f.objects[i]["key"] for i in f.safe],
                 "needsPerson": [{k: f.segments[i][k] for k in ("segmentId", "partition", "class", "why")} for i in f.person]},
    }


# ---------------------------------------------------------------------------------------------- delete
def execute(first: Finding, again: Callable[[], Finding], store: Any, journal: Path, yes: bool,
            head: bool = False) -> Dict[str, Any]:
    """``--delete``: a dry run unless ``yes``; else re-lists and re-reads (``again``) and deletes
    only objects both plans call safe, unchanged in size and time, journaling each deletion.
    ``head``: the listing is an inventory (up to a day old): each key both plans call safe is
    also read from the store itself (``store.head``) and deleted only if it is still there with
    the inventory's size and last-modified second."""
    planned = {first.objects[i]["key"]: first.objects[i] for i in first.safe}
    if not yes:
        return {"dryRun": True, "wouldDelete": sorted(planned), "bytes": sum(o["size"] for o in planned.values())}
    second = again()
    now_safe = {second.objects[i]["key"]: second.objects[i] for i in second.safe}
    keys = sorted(k for k, o in planned.items()
                  if k in now_safe and (now_safe[k]["size"], now_safe[k]["lastModifiedMs"]) == (o["size"], o["lastModifiedMs"]))
    if head:
        def unchanged(k: str) -> bool:
            now = store.head(k)
            return now is not None and (now[0], now[1] // 1000) == (planned[k]["size"], planned[k]["lastModifiedMs"] // 1000)

        keys = [k for k in keys if unchanged(k)]
    skipped = sorted(set(planned) - set(keys))
    deleted, failed = [], []
    with open(journal, "a", encoding="utf-8") as j:
        for k, err in store.delete(keys):
            o = now_safe[k]
            if err is None:
                deleted.append(k)
                j.write(json.dumps({"deletedAtMs": int(time.time() * 1000), "store": store.name, "key": k, "size": o["size"],
                                    "lastModifiedMs": o["lastModifiedMs"], "class": o["class"], "segmentId": o["segmentId"],
                                    "partition": o["partition"]}) + "\n")
                j.flush()
            else:
                failed.append({"key": k, "error": err})
    return {"dryRun": False, "deleted": deleted, "bytes": sum(now_safe[k]["size"] for k in deleted),
            "skippedChangedSinceFirstRun": skipped, "failed": failed, "journal": str(journal)}


def parse_duration_ms(text: str) -> int:
    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    t = text.strip().lower()
    for u in ("ms", "s", "m", "h", "d"):
        if t.endswith(u) and t[: -len(u)].strip().replace(".", "", 1).isdigit():
            return int(float(t[: -len(u)]) * units[u])
    if t.isdigit():
        return int(t)
    raise ValueError(f"not a duration: {text!r} (e.g. 24h, 30m, 90s, 500ms)")


def layouts_help() -> str:
    lines = ["layouts (--layout NAME, or a template spec TEMPLATE[|TEMPLATE...][;size=FILE][;require=FILE,...]",
             "with fields {topic} {topic_id} {partition} {segment_id} {start_offset} {start_offset:N} {file}):"]
    for name, desc, spec in _native.layout_presets():
        lines.append(f"  {name}: {desc}")
        lines.append(f"      {spec}")
    return "\n".join(lines)
