"""The keyed-records verification before level 2 (the core's ``keyed::verify_keyed``) on the
metadata segments a real Kafka 4.4.0 broker wrote with stock TopicBasedRemoteLogMetadataManager
(tests/fixtures/broker: null keys only, live segments equal to its remote storage's listing):
every live segment fails until the backfill the core plans is appended, then it holds; a later
null-key deletion resurrects a segment, and the verdict says so with offsets."""

import dataclasses
import re
from pathlib import Path

import rlmeta
from rlmeta import MetadataLevel, SegmentState

REPO = Path(__file__).resolve().parents[2]
BROKER = REPO / "tests" / "fixtures" / "broker"
META_DIRS = sorted((BROKER / "remote_log_metadata").glob("__remote_log_metadata-*"))


def partition_records(d):
    out = []
    for path in sorted(d.glob("*.log")):
        out += [(r.offset, r.timestamp, r.key, r.value) for r in rlmeta.read_records(path)]
    return out


def test_a_stock_history_fails_for_every_live_segment_and_holds_after_the_backfill():
    listing = (BROKER / "remote-listing.txt").read_text()
    remote_ids = set(re.findall(r"/([A-Za-z0-9_-]{22}):", listing))
    failing = set()
    live_total = 0
    for d in META_DIRS:
        recs = partition_records(d)
        v = rlmeta.verify_keyed(recs)
        live_total += v.live_segments
        assert v.null_key_records == v.records == len(recs)
        assert v.records_after_compaction == 0, "the cleaner drops every null-key record"
        for u in v.unheld:
            assert u.why == "lost" and u.held is None and u.state is SegmentState.COPY_SEGMENT_FINISHED
            # the offsets are those of the records naming the segment, all null-key here
            assert u.offsets and u.offsets == u.null_key_offsets
            named = [o for o, _, _, value in recs if value and rlmeta.decode_value(value).record.remote_log_segment_id.id == u.segment_id]
            assert list(u.offsets) == named
            failing.add(u.segment_id)
        assert len(v.unheld) == v.live_segments
        # The backfill planned by the core (what the broker plugin writes at level 1) makes it hold.
        store = rlmeta.Store()
        store.apply_many([(o, k, val) for o, _, k, val in recs])
        nxt = recs[-1][0] + 1 if recs else 0
        for tp in store.partitions():
            for p in store.plan_backfill(tp, 0, MetadataLevel.V1):
                recs.append((nxt, 0, p.key.encode(), p.value))
                nxt += 1
        after = rlmeta.verify_keyed(recs)
        assert after.holds and after.live_segments == v.live_segments, after.unheld
        assert after.records_after_compaction == nxt - len(partition_records(d))
    assert failing == remote_ids and live_total == len(remote_ids)
    print(f"verify_keyed: {live_total} live segments of a stock Kafka 4.4.0 history fail, then hold after the backfill")


def test_a_null_key_deletion_after_the_backfill_is_reported_as_a_resurrection():
    d = next(d for d in META_DIRS if rlmeta.verify_keyed(partition_records(d)).live_segments)
    recs = partition_records(d)
    store = rlmeta.Store()
    store.apply_many([(o, k, v) for o, _, k, v in recs])
    tp = next(tp for tp in store.partitions() if store.all_segments(tp))
    nxt = recs[-1][0] + 1
    for part in store.partitions():
        for p in store.plan_backfill(part, 0, MetadataLevel.V1):
            recs.append((nxt, 0, p.key.encode(), p.value))
            nxt += 1
    assert rlmeta.verify_keyed(recs).holds
    seg = store.all_segments(tp)[0]
    # A stock broker, still running, deletes the segment with null-key updates: its own finish
    # record with the state changed.
    finished = next(rlmeta.decode_value(v) for _, _, k, v in recs if k is None and v
                    and rlmeta.decode_value(v).record.remote_log_segment_id.id == seg.id
                    and isinstance(rlmeta.decode_value(v).record, rlmeta.SegmentMetadataUpdateRecord))
    for state in (SegmentState.DELETE_SEGMENT_STARTED, SegmentState.DELETE_SEGMENT_FINISHED):
        record = dataclasses.replace(finished.record, remote_log_segment_state=state)
        recs.append((nxt, 0, None, rlmeta.encode_value(rlmeta.Value(finished.api_key, finished.version, record))))
        nxt += 1
    v = rlmeta.verify_keyed(recs)
    (u,) = v.unheld
    assert (u.segment_id, u.why, u.state, u.held) == (seg.id, "resurrected", None, SegmentState.COPY_SEGMENT_FINISHED)
    assert u.null_key_offsets[-2:] == (nxt - 2, nxt - 1)


def test_a_second_upload_attempt_of_one_range_is_superseded_not_a_failure():
    """Stock Kafka 4.4.0 uploaded one range twice in one leader epoch (the journey test met it):
    a real history with one finished segment uploaded again under a new id, finished later. Kafka
    serves the later attempt; after the core's backfill the verdict holds and names the earlier
    one as superseded, served by the later one."""
    d = next(d for d in META_DIRS if rlmeta.verify_keyed(partition_records(d)).live_segments)
    recs = partition_records(d)
    decoded = [(o, rlmeta.decode_value(v)) for o, _, _, v in recs if v]
    before = rlmeta.Store()
    before.apply_many([(o, k, v) for o, _, k, v in recs])
    live = {m.id for tp in before.partitions() for m in before.all_segments(tp)
            if m.state == SegmentState.COPY_SEGMENT_FINISHED}
    first, seg = next((o, v) for o, v in decoded if isinstance(v.record, rlmeta.SegmentMetadataRecord)
                      and v.record.remote_log_segment_id.id in live)
    old_id = seg.record.remote_log_segment_id.id
    fin = next(v for o, v in decoded if isinstance(v.record, rlmeta.SegmentMetadataUpdateRecord)
               and v.record.remote_log_segment_id.id == old_id
               and v.record.remote_log_segment_state == SegmentState.COPY_SEGMENT_FINISHED)
    new_id = "AAAAAAAAQACAAAAAAAAAAQ"  # a second attempt, as Kafka names one: a fresh random UUID
    assert new_id not in {v.record.remote_log_segment_id.id for _, v in decoded}
    nxt = recs[-1][0] + 1
    for v in (seg, fin):
        sid = dataclasses.replace(v.record.remote_log_segment_id, id=new_id)
        again = rlmeta.Value(v.api_key, v.version, dataclasses.replace(v.record, remote_log_segment_id=sid))
        recs.append((nxt, 0, None, rlmeta.encode_value(again)))
        nxt += 1
    store = rlmeta.Store()
    store.apply_many([(o, k, v) for o, _, k, v in recs])
    for part in store.partitions():
        for p in store.plan_backfill(part, 0, MetadataLevel.V1):
            recs.append((nxt, 0, p.key.encode(), p.value))
            nxt += 1
    v = rlmeta.verify_keyed(recs)
    assert v.holds, v.unheld
    (s,) = v.superseded
    assert (s.segment_id, s.served_by) == (old_id, new_id)
    assert (s.start_offset, s.end_offset) == (seg.record.start_offset, seg.record.end_offset)
    assert first in s.offsets
