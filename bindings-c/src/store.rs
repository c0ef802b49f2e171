//! The replay store and write planner of the C ABI: `rlmeta_store_*` over an opaque handle,
//! the same shapes as the JNI `MetadataStore` (topic ids as two 64-bit halves, a poll batch in
//! one call, segment metadata as the version-0 serde value of the segment's current state).

use std::ffi::c_char;
use std::ptr;
use std::sync::RwLock;

use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::plan::current_segment_value;
use rlmeta::{Error, ErrorKind, TopicIdPartition, Uuid};

use crate::error::{guard, null_argument};
use crate::{RlmetaBuf, RlmetaError, out_arg, str_arg, write_out};

/// `rlmeta_store_highest_offset_for_epoch` when the epoch has no offset (Java's Long.MIN_VALUE).
pub const RLMETA_NO_OFFSET: i64 = i64::MIN;

/// The replayed state of one `__remote_log_metadata` partition. Opaque; made by
/// `rlmeta_store_new`, released by `rlmeta_store_free`. Safe to use from many threads at once
/// (applies are serialized, queries run in parallel).
pub struct RlmetaStore {
    store: RwLock<Store>,
}

/// A list of owned buffers; free it with `rlmeta_buf_list_free`. An item whose `data` is NULL is
/// a null entry (a tombstone, in `RlmetaPlanned.values`).
#[repr(C)]
pub struct RlmetaBufList {
    pub items: *mut RlmetaBuf,
    pub len: usize,
}

/// The records the planner asks the host to produce, in order: `keys.items[i]` is the UTF-8
/// KIP-1266 key text of record i, `values.items[i]` its value (`data` NULL: a tombstone). Free
/// with `rlmeta_planned_free`.
#[repr(C)]
pub struct RlmetaPlanned {
    pub keys: RlmetaBufList,
    pub values: RlmetaBufList,
}

impl RlmetaBufList {
    fn new(items: Vec<Option<Vec<u8>>>) -> RlmetaBufList {
        let items: Box<[RlmetaBuf]> = items
            .into_iter()
            .map(|b| {
                b.map_or(
                    RlmetaBuf {
                        data: ptr::null_mut(),
                        len: 0,
                    },
                    RlmetaBuf::new,
                )
            })
            .collect();
        let len = items.len();
        RlmetaBufList {
            items: Box::into_raw(items).cast::<RlmetaBuf>(),
            len,
        }
    }
}

fn poisoned() -> Error {
    Error::new(
        ErrorKind::Internal,
        "the store is unusable after an earlier internal error",
    )
}

/// The store behind a handle.
///
/// # Safety
/// `s` is NULL or a live handle from `rlmeta_store_new`.
unsafe fn store_arg<'a>(s: *const RlmetaStore) -> rlmeta::Result<&'a RlmetaStore> {
    // SAFETY: the caller's promise.
    unsafe { s.as_ref() }.ok_or_else(|| null_argument("store"))
}

/// Runs `f` on the store under its read lock.
///
/// # Safety
/// As `store_arg`.
unsafe fn read<T>(
    s: *const RlmetaStore,
    f: impl FnOnce(&Store) -> rlmeta::Result<T>,
) -> rlmeta::Result<T> {
    // SAFETY: the caller's promise.
    let s = unsafe { store_arg(s) }?;
    f(&*s.store.read().map_err(|_| poisoned())?)
}

/// Runs `f` on the store under its write lock.
///
/// # Safety
/// As `store_arg`.
unsafe fn write<T>(
    s: *const RlmetaStore,
    f: impl FnOnce(&mut Store) -> rlmeta::Result<T>,
) -> rlmeta::Result<T> {
    // SAFETY: the caller's promise.
    let s = unsafe { store_arg(s) }?;
    f(&mut *s.store.write().map_err(|_| poisoned())?)
}

/// `n` elements at `p`, which may be NULL only when `n` is 0.
///
/// # Safety
/// A non-NULL `p` points to `n` readable elements.
unsafe fn slice_arg<'a, T>(p: *const T, n: usize, name: &str) -> rlmeta::Result<&'a [T]> {
    if p.is_null() {
        return if n == 0 {
            Ok(&[])
        } else {
            Err(null_argument(name))
        };
    }
    if n > isize::MAX as usize / size_of::<T>().max(1) {
        return Err(Error::field(
            ErrorKind::InvalidArgument,
            name,
            format!("{name}: count {n} is too large"),
        ));
    }
    // SAFETY: non-NULL, size checked, validity promised by the caller.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

fn partition_of(s: &Store, msb: i64, lsb: i64, p: i32) -> rlmeta::Result<TopicIdPartition> {
    s.partition_of_id(Uuid::new(msb, lsb), p)
}

fn segment_buf(tp: &TopicIdPartition, m: Option<&SegmentMetadata>) -> rlmeta::Result<RlmetaBuf> {
    Ok(match m {
        Some(m) => RlmetaBuf::new(current_segment_value(tp, m)?),
        None => RlmetaBuf {
            data: ptr::null_mut(),
            len: 0,
        },
    })
}

/// A new, empty store that keeps every user partition a record names. NULL only if memory runs
/// out.
#[unsafe(no_mangle)]
pub extern "C" fn rlmeta_store_new() -> *mut RlmetaStore {
    boxed(Store::new())
}

/// A new, empty store that keeps only the user partitions loaded into it, as a broker's consumer
/// does: a record of any other partition is skipped (RLMETA_OUTCOME_NOT_HELD) and leaves no
/// trace. NULL only if memory runs out.
#[unsafe(no_mangle)]
pub extern "C" fn rlmeta_store_new_held() -> *mut RlmetaStore {
    boxed(Store::held())
}

fn boxed(store: Store) -> *mut RlmetaStore {
    let mut out = ptr::null_mut();
    guard(ptr::null_mut(), || {
        out = Box::into_raw(Box::new(RlmetaStore {
            store: RwLock::new(store),
        }));
        Ok(())
    });
    out
}

/// Releases a store. NULL is accepted.
///
/// # Safety
/// `store` is NULL or a live handle, not used afterwards (and not in use by another thread).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_free(store: *mut RlmetaStore) {
    if !store.is_null() {
        // SAFETY: from `Box::into_raw` in `rlmeta_store_new`.
        drop(unsafe { Box::from_raw(store) });
    }
}

/// Applies `count` consumed records in one call. `data` (`data_len` bytes) holds each record's
/// key bytes then value bytes, records back to back; `key_lengths[i]` / `value_lengths[i]` are
/// -1 for a null key / value. Writes one `RLMETA_OUTCOME_*` code per record to
/// `out_outcomes[0..count]`. A layout that does not add up fails with RLMETA_INVALID_ARGUMENT
/// before any record is applied.
///
/// # Safety
/// `store` is a live handle; `offsets`, `key_lengths`, `value_lengths` and `out_outcomes` point
/// to `count` elements (readable, and writable for the outcomes); `data` to `data_len` bytes;
/// each may be NULL when its count is 0. `err` is NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rlmeta_store_apply(
    store: *mut RlmetaStore,
    offsets: *const i64,
    data: *const u8,
    data_len: usize,
    key_lengths: *const i32,
    value_lengths: *const i32,
    count: usize,
    out_outcomes: *mut u8,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        // SAFETY: the caller's promises on every pointer and count.
        unsafe {
            let offsets = slice_arg(offsets, count, "offsets")?;
            let data = slice_arg(data, data_len, "data")?;
            let keys = slice_arg(key_lengths, count, "key_lengths")?;
            let values = slice_arg(value_lengths, count, "value_lengths")?;
            if out_outcomes.is_null() && count > 0 {
                return Err(null_argument("out_outcomes"));
            }
            let mut outcomes = vec![0u8; count];
            write(store, |s| {
                s.apply_packed(offsets, data, keys, values, &mut outcomes)
            })?;
            if count > 0 {
                ptr::copy_nonoverlapping(outcomes.as_ptr(), out_outcomes, count);
            }
        }
        Ok(())
    })
}

/// Kafka's `maybeLoadPartition`: starts holding a user partition (no-op if held).
/// `*out_fresh` (if not NULL) is true when it was not held: it starts empty, and its metadata
/// partition must be replayed from the beginning before it is marked initialized.
///
/// # Safety
/// `store` is a live handle; `topic` a NUL-terminated string; `out_fresh` NULL or writable;
/// `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_load_partition(
    store: *mut RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    topic: *const c_char,
    partition: i32,
    out_fresh: *mut bool,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        // SAFETY: the caller's promises.
        let topic = unsafe { str_arg(topic, "topic") }?;
        let tp = TopicIdPartition {
            topic_id: Uuid::new(topic_id_msb, topic_id_lsb),
            topic: topic.to_owned(),
            partition,
        };
        // SAFETY: the caller's promise on `store`.
        let fresh = unsafe { write(store, |s| Ok(s.load_partition(&tp))) }?;
        if !out_fresh.is_null() {
            // SAFETY: the caller's promise on `out_fresh`.
            unsafe { *out_fresh = fresh };
        }
        Ok(())
    })
}

/// Marks a user partition initialized (replay caught up); `*out_done` is false if the partition
/// was deleted (DELETE_PARTITION_FINISHED).
///
/// # Safety
/// `store` is a live handle; `topic` a NUL-terminated string; `out_done` writable; `err` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_mark_initialized(
    store: *mut RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    topic: *const c_char,
    partition: i32,
    out_done: *mut bool,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_done, "out_done")?;
        // SAFETY: the caller's promises.
        let topic = unsafe { str_arg(topic, "topic") }?;
        let tp = TopicIdPartition {
            topic_id: Uuid::new(topic_id_msb, topic_id_lsb),
            topic: topic.to_owned(),
            partition,
        };
        // SAFETY: the caller's promises on `store` and `out_done`.
        unsafe {
            let done = write(store, |s| Ok(s.mark_initialized(&tp)))?;
            write_out(out_done, done);
        }
        Ok(())
    })
}

/// Whether a user partition is held and initialized, into `*out_initialized`.
///
/// # Safety
/// `store` is a live handle; `out_initialized` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_is_initialized(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    out_initialized: *mut bool,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_initialized, "out_initialized")?;
        // SAFETY: the caller's promises.
        unsafe {
            let init = read(store, |s| {
                Ok(
                    s.partition_by_id(Uuid::new(topic_id_msb, topic_id_lsb), partition)
                        .and_then(|tp| s.partition_cache(tp))
                        .is_some_and(|c| c.is_initialized()),
                )
            })?;
            write_out(out_initialized, init);
        }
        Ok(())
    })
}

/// Stops holding a user partition (Kafka's `onStopPartitions`); a later load starts it empty.
///
/// # Safety
/// `store` is a live handle; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_unload_partition(
    store: *mut RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        // SAFETY: the caller's promise on `store`.
        unsafe {
            write(store, |s| {
                if let Some(tp) = s
                    .partition_by_id(Uuid::new(topic_id_msb, topic_id_lsb), partition)
                    .cloned()
                {
                    s.unload_partition(&tp);
                }
                Ok(())
            })
        }
    })
}

/// Kafka's `remoteLogSegmentMetadata(tp, epoch, offset)`: the segment's value into
/// `*out_segment`, or `{NULL, 0}` when none. RLMETA_NOT_FOUND for a partition not held,
/// RLMETA_NOT_INITIALIZED for one not initialized (as every query below).
///
/// # Safety
/// `store` is a live handle; `out_segment` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rlmeta_store_segment_for(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    leader_epoch: i32,
    offset: i64,
    out_segment: *mut RlmetaBuf,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_segment, "out_segment")?;
        // SAFETY: the caller's promises.
        unsafe {
            let buf = read(store, |s| {
                let tp = partition_of(s, topic_id_msb, topic_id_lsb, partition)?;
                segment_buf(&tp, s.segment_for(&tp, leader_epoch, offset)?)
            })?;
            write_out(out_segment, buf);
        }
        Ok(())
    })
}

/// Kafka's `highestOffsetForEpoch` into `*out_offset`; RLMETA_NO_OFFSET when none.
///
/// # Safety
/// `store` is a live handle; `out_offset` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_highest_offset_for_epoch(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    leader_epoch: i32,
    out_offset: *mut i64,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_offset, "out_offset")?;
        // SAFETY: the caller's promises.
        unsafe {
            let o = read(store, |s| {
                let tp = partition_of(s, topic_id_msb, topic_id_lsb, partition)?;
                Ok(s.highest_offset_for_epoch(&tp, leader_epoch)?
                    .unwrap_or(RLMETA_NO_OFFSET))
            })?;
            write_out(out_offset, o);
        }
        Ok(())
    })
}

/// Kafka's `listRemoteLogSegments(tp)` (by start offset), or with `for_epoch` true
/// `listRemoteLogSegments(tp, leader_epoch)`: the segments' values into `*out_segments`.
///
/// # Safety
/// `store` is a live handle; `out_segments` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rlmeta_store_segments(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    for_epoch: bool,
    leader_epoch: i32,
    out_segments: *mut RlmetaBufList,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_segments, "out_segments")?;
        // SAFETY: the caller's promises.
        unsafe {
            let values = read(store, |s| {
                let tp = partition_of(s, topic_id_msb, topic_id_lsb, partition)?;
                let list = if for_epoch {
                    s.segments_for_epoch(&tp, leader_epoch)?
                } else {
                    s.segments(&tp)?
                };
                list.into_iter()
                    .map(|m| current_segment_value(&tp, m).map(Some))
                    .collect::<rlmeta::Result<Vec<_>>>()
            })?;
            write_out(out_segments, RlmetaBufList::new(values));
        }
        Ok(())
    })
}

/// Kafka's `nextSegmentWithTxnIndex(tp, epoch, offset)` into `*out_segment`, `{NULL, 0}` when none.
///
/// # Safety
/// `store` is a live handle; `out_segment` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rlmeta_store_next_segment_with_txn_index(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    leader_epoch: i32,
    offset: i64,
    out_segment: *mut RlmetaBuf,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_segment, "out_segment")?;
        // SAFETY: the caller's promises.
        unsafe {
            let buf = read(store, |s| {
                let tp = partition_of(s, topic_id_msb, topic_id_lsb, partition)?;
                segment_buf(
                    &tp,
                    s.next_segment_with_txn_index(&tp, leader_epoch, offset)?,
                )
            })?;
            write_out(out_segment, buf);
        }
        Ok(())
    })
}

/// Kafka's `remoteLogSize(tp, epoch)` into `*out_size`.
///
/// # Safety
/// `store` is a live handle; `out_size` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_remote_log_size(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    leader_epoch: i32,
    out_size: *mut i64,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_size, "out_size")?;
        // SAFETY: the caller's promises.
        unsafe {
            let size = read(store, |s| {
                s.remote_log_size(
                    &partition_of(s, topic_id_msb, topic_id_lsb, partition)?,
                    leader_epoch,
                )
            })?;
            write_out(out_size, size);
        }
        Ok(())
    })
}

/// The partition's delete state into `*out_state`: -1 for none, else Kafka's
/// `RemotePartitionDeleteState` id (2 once the partition is deleted).
///
/// # Safety
/// `store` is a live handle; `out_state` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_partition_delete_state(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    out_state: *mut i32,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_state, "out_state")?;
        // SAFETY: the caller's promises.
        unsafe {
            let state = read(store, |s| {
                Ok(
                    s.partition_by_id(Uuid::new(topic_id_msb, topic_id_lsb), partition)
                        .and_then(|tp| s.partition_delete_state(tp))
                        .map_or(-1, |st| i32::from(st.id())),
                )
            })?;
            write_out(out_state, state);
        }
        Ok(())
    })
}

/// A segment's state as Kafka's listing shows it into `*out_state`: -1 if unknown, else Kafka's
/// `RemoteLogSegmentState` id.
///
/// # Safety
/// `store` is a live handle; `out_state` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rlmeta_store_segment_state(
    store: *const RlmetaStore,
    topic_id_msb: i64,
    topic_id_lsb: i64,
    partition: i32,
    segment_id_msb: i64,
    segment_id_lsb: i64,
    out_state: *mut i32,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_state, "out_state")?;
        // SAFETY: the caller's promises.
        unsafe {
            let state = read(store, |s| {
                let tp = partition_of(s, topic_id_msb, topic_id_lsb, partition)?;
                Ok(
                    s.segment_state(&tp, Uuid::new(segment_id_msb, segment_id_lsb))?
                        .map_or(-1, |st| i32::from(st.id())),
                )
            })?;
            write_out(out_state, state);
        }
        Ok(())
    })
}

/// The write planner. `event` (`len` bytes) is the value Kafka 4.4.0's RemoteLogMetadataSerde
/// writes for the broker's object (a RemoteLogSegmentMetadata in COPY_SEGMENT_STARTED, a
/// RemoteLogSegmentMetadataUpdate, or a RemotePartitionDeleteMetadata); `broker_leader_epoch` is
/// the writer's current leader epoch of the partition; `level` the metadata partition's feature
/// level (0, 1, 2). The records to produce go to `*out_planned`, in order. A refusal is
/// RLMETA_INVALID_STATE (retriable for the broker).
///
/// # Safety
/// `store` is a live handle; `event` points to `len` bytes; `out_planned` writable; `err` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_plan(
    store: *const RlmetaStore,
    event: *const u8,
    len: usize,
    broker_leader_epoch: i32,
    level: i32,
    out_planned: *mut RlmetaPlanned,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_planned, "out_planned")?;
        // SAFETY: the caller's promises.
        unsafe {
            let event = slice_arg(event, len, "event")?;
            let level = i16::try_from(level).map_err(|_| {
                Error::field(
                    ErrorKind::InvalidArgument,
                    "level",
                    format!("no feature level {level}"),
                )
            })?;
            let planned = read(store, |s| s.plan_value(event, broker_leader_epoch, level))?;
            let keys = planned
                .iter()
                .map(|r| Some(r.key.format().into_bytes()))
                .collect();
            let values = planned.into_iter().map(|r| r.value).collect();
            write_out(
                out_planned,
                RlmetaPlanned {
                    keys: RlmetaBufList::new(keys),
                    values: RlmetaBufList::new(values),
                },
            );
        }
        Ok(())
    })
}

/// A diagnostic dump of everything the store holds (JSON text, NUL-terminated) into `*out_json`.
///
/// # Safety
/// `store` is a live handle; `out_json` writable; `err` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_store_dump_json(
    store: *const RlmetaStore,
    out_json: *mut RlmetaBuf,
    err: *mut *mut RlmetaError,
) -> u32 {
    guard(err, || {
        out_arg(out_json, "out_json")?;
        // SAFETY: the caller's promises.
        unsafe {
            // the snapshot under the read lock, the text encoded after it is released
            let text = read(store, |s| Ok(s.dump_json()))?.to_string();
            write_out(out_json, RlmetaBuf::new(text.into_bytes()));
        }
        Ok(())
    })
}

/// Whether a record with this outcome code would have stopped a stock (pre-KIP-1266) broker's
/// metadata consumer. False for codes that name no outcome.
#[unsafe(no_mangle)]
pub extern "C" fn rlmeta_outcome_fatal_to_kafka(code: u8) -> bool {
    rlmeta::host::fatal_to_kafka(code)
}

/// Releases a buffer list and resets it to `{NULL, 0}`. NULL is accepted; freeing twice is harmless.
///
/// # Safety
/// `list` is NULL or points to a list that rlmeta filled (or that is `{NULL, 0}`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_buf_list_free(list: *mut RlmetaBufList) {
    // SAFETY: the caller's promise.
    let Some(list) = (unsafe { list.as_mut() }) else {
        return;
    };
    if !list.items.is_null() {
        let items = ptr::slice_from_raw_parts_mut(list.items, list.len);
        // SAFETY: `items` came from `Box<[RlmetaBuf]>` of `len` items in `RlmetaBufList::new`.
        let mut items = unsafe { Box::from_raw(items) };
        for b in items.iter_mut() {
            // SAFETY: each item came from `RlmetaBuf::new` or is `{NULL, 0}`.
            unsafe { crate::rlmeta_buf_free(b) };
        }
    }
    list.items = ptr::null_mut();
    list.len = 0;
}

/// Releases planned records and resets them. NULL is accepted; freeing twice is harmless.
///
/// # Safety
/// `planned` is NULL or points to records that rlmeta filled (or that are zeroed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rlmeta_planned_free(planned: *mut RlmetaPlanned) {
    // SAFETY: the caller's promise.
    if let Some(p) = unsafe { planned.as_mut() } {
        // SAFETY: both lists were filled by rlmeta (or are zeroed).
        unsafe {
            rlmeta_buf_list_free(&mut p.keys);
            rlmeta_buf_list_free(&mut p.values);
        }
    }
}
