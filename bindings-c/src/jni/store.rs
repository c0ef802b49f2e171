//! JNI entry points of `dev.rlmeta.MetadataStore`: a replay store behind a `long` handle.
//!
//! The handle is a boxed `RwLock<Store>`: apply takes the write lock, queries the read lock, so
//! the Java object may be used from many threads. The Java side guarantees the handle is live
//! for the whole call (a read-write lock against `close`, and a reachability fence). No JNI call
//! is made while the store's lock is held, and the lock is taken before the batch's bytes are
//! pinned, so a thread waiting for the lock never holds up the garbage collector.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::RwLock;

use jni::errors::Result as JniResult;
use jni::objects::{
    JByteArray, JClass, JIntArray, JLongArray, JObject, JObjectArray, JString, JValue,
};
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned, jni_sig, jni_str};
use rlmeta::cache::{SegmentMetadata, Store};
use rlmeta::feature::MetadataLevel;
use rlmeta::plan::{Planned, Writer, current_segment_value};
use rlmeta::{Error, ErrorKind, TopicIdPartition, Uuid};

use super::{call, core, required, string, throw_core};

/// A `NullPointerException` (and an error to return at once) when `obj` is null.
fn non_null<'a>(env: &mut Env<'_>, obj: &impl AsRef<JObject<'a>>, name: &str) -> JniResult<()> {
    required(env, obj, name)?;
    if obj.as_ref().is_null() {
        return Err(jni::errors::Error::JavaException);
    }
    Ok(())
}
use crate::error::panic_error;

type Handle = RwLock<Store>;

/// The store behind a handle (a live `Box<Handle>` pointer from `nativeNew`, or 0).
fn handle<'a>(h: jlong) -> rlmeta::Result<&'a Handle> {
    let p = h as usize as *const Handle;
    if p.is_null() {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            "the MetadataStore is closed",
        ));
    }
    // SAFETY: non-zero handles come from `Box::into_raw` in `nativeNew`, and the Java class
    // keeps them alive (not yet freed) for the duration of every call.
    Ok(unsafe { &*p })
}

fn poisoned() -> Error {
    Error::new(
        ErrorKind::Internal,
        "the store is unusable after an earlier internal error",
    )
}

/// Runs `f` on the store under its read lock, panics caught; a core error is thrown.
fn read<T>(
    env: &mut Env<'_>,
    h: jlong,
    f: impl FnOnce(&Store) -> rlmeta::Result<T>,
) -> JniResult<T> {
    core(env, || f(&*handle(h)?.read().map_err(|_| poisoned())?))
}

/// Runs `f` on the store under its write lock, panics caught; a core error is thrown.
fn write<T>(
    env: &mut Env<'_>,
    h: jlong,
    f: impl FnOnce(&mut Store) -> rlmeta::Result<T>,
) -> JniResult<T> {
    core(env, || {
        f(&mut *handle(h)?.write().map_err(|_| poisoned())?)
    })
}

fn partition(store: &Store, msb: jlong, lsb: jlong, p: jint) -> rlmeta::Result<TopicIdPartition> {
    store.partition_of_id(Uuid::new(msb, lsb), p)
}

fn named(
    env: &mut Env<'_>,
    msb: jlong,
    lsb: jlong,
    topic: &JString<'_>,
    p: jint,
) -> JniResult<TopicIdPartition> {
    Ok(TopicIdPartition {
        topic_id: Uuid::new(msb, lsb),
        topic: {
            non_null(env, topic, "topic")?;
            string(env, topic, "topic")?
        },
        partition: p,
    })
}

fn encoded(tp: &TopicIdPartition, m: Option<&SegmentMetadata>) -> rlmeta::Result<Option<Vec<u8>>> {
    m.map(|m| current_segment_value(tp, m)).transpose()
}

fn as_jbytes(b: &[u8]) -> &[i8] {
    // SAFETY: u8 and i8 have the same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<i8>(), b.len()) }
}

fn byte_array<'l>(env: &mut Env<'l>, b: Option<&[u8]>) -> JniResult<JByteArray<'l>> {
    match b {
        None => Ok(JByteArray::default()),
        Some(b) => {
            let a = JByteArray::new(env, b.len())?;
            a.set_region(env, 0, as_jbytes(b))?;
            Ok(a)
        }
    }
}

fn byte_arrays<'l>(
    env: &mut Env<'l>,
    items: &[Option<Vec<u8>>],
) -> JniResult<JObjectArray<'l, JByteArray<'l>>> {
    let array = JObjectArray::<JByteArray>::new(env, items.len(), JByteArray::default())?;
    for (i, item) in items.iter().enumerate() {
        let b = byte_array(env, item.as_deref())?;
        array.set_element(env, i, &b)?;
        env.delete_local_ref(b);
    }
    Ok(array)
}

fn segment_list<'l>(
    env: &mut Env<'l>,
    h: jlong,
    list: impl for<'s> FnOnce(&'s Store, &TopicIdPartition) -> rlmeta::Result<Vec<&'s SegmentMetadata>>,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> JniResult<JObjectArray<'l, JByteArray<'l>>> {
    let values = read(env, h, |s| {
        let tp = partition(s, msb, lsb, p)?;
        list(s, &tp)?
            .into_iter()
            .map(|m| current_segment_value(&tp, m).map(Some))
            .collect::<rlmeta::Result<Vec<_>>>()
    })?;
    byte_arrays(env, &values)
}

/// The most bytes a chunk of a packed listing holds (unless one value is larger): a chunk stays a
/// small young-generation array (a 5,000-segment listing in one array, ~850 KB, is a humongous
/// G1 allocation), and a listing still takes a handful of JNI allocations, not one per segment.
const PACKED_CHUNK: usize = 64 * 1024;

/// `list`'s values packed into a few arrays (the store's read lock held only while the listed
/// segments are copied; they are encoded, and the Java arrays made, after it is released).
/// `dev.rlmeta.PackedValues` reads them.
fn packed_segment_list<'l>(
    env: &mut Env<'l>,
    h: jlong,
    list: impl for<'s> FnOnce(&'s Store, &TopicIdPartition) -> rlmeta::Result<Vec<&'s SegmentMetadata>>,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> JniResult<JObjectArray<'l, JByteArray<'l>>> {
    let (tp, segments) = read(env, h, |s| {
        let tp = partition(s, msb, lsb, p)?;
        let segments: Vec<SegmentMetadata> = list(s, &tp)?.into_iter().cloned().collect();
        Ok((tp, segments))
    })?;
    let chunks = core(env, || packed(&tp, &segments))?;
    byte_arrays(env, &chunks)
}

/// Each segment's current value (Kafka's serde bytes), its length as 4 bytes big-endian before it,
/// back to back in chunks of at most [`PACKED_CHUNK`] bytes (a larger value alone in its own),
/// in the listing's order, none split across chunks.
fn packed(
    tp: &TopicIdPartition,
    segments: &[SegmentMetadata],
) -> rlmeta::Result<Vec<Option<Vec<u8>>>> {
    let mut chunks = Vec::new();
    let mut chunk = Vec::new();
    for m in segments {
        let v = current_segment_value(tp, m)?;
        let len = u32::try_from(v.len())
            .ok()
            .filter(|&n| i32::try_from(n as usize + 4).is_ok())
            .ok_or_else(|| Error::new(ErrorKind::Internal, "a segment value over 2 GiB"))?;
        if !chunk.is_empty() && chunk.len() + 4 + v.len() > PACKED_CHUNK {
            chunks.push(Some(std::mem::take(&mut chunk)));
        }
        if chunk.is_empty() {
            chunk.reserve(PACKED_CHUNK.max(4 + v.len()));
        }
        chunk.extend_from_slice(&len.to_be_bytes());
        chunk.extend_from_slice(&v);
    }
    if !chunk.is_empty() {
        chunks.push(Some(chunk));
    }
    Ok(chunks)
}

/// A byte array pinned with `GetPrimitiveArrayCritical` (raw calls: jni's wrapper makes other
/// JNI calls inside the critical region, which `-Xcheck:jni` reports). Between `new` and drop
/// no JNI function may be called.
struct Pinned {
    env: *mut jni::sys::JNIEnv,
    array: jni::sys::jarray,
    ptr: *mut std::ffi::c_void,
    len: usize,
}

impl Pinned {
    /// `len` is the array's length; `None` (with an OutOfMemoryError pending) if it cannot be pinned.
    fn new(env: &Env<'_>, array: &JByteArray<'_>, len: usize) -> Option<Pinned> {
        let raw = env.get_raw();
        let array = array.as_raw();
        // SAFETY: a live env of this thread and a live local reference to a byte array.
        let ptr =
            unsafe { ((**raw).v1_2.GetPrimitiveArrayCritical)(raw, array, std::ptr::null_mut()) };
        (!ptr.is_null() || len == 0).then_some(Pinned {
            env: raw,
            array,
            ptr,
            len,
        })
    }

    fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: the VM gives `len` bytes at `ptr` until the release in drop.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<u8>(), self.len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: pinned in `new` on this thread; JNI_ABORT: nothing to copy back.
            unsafe {
                ((**self.env).v1_2.ReleasePrimitiveArrayCritical)(
                    self.env,
                    self.array,
                    self.ptr,
                    jni::sys::JNI_ABORT,
                )
            };
        }
    }
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeNew<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    held: jboolean,
) -> jlong {
    call(env, |env| {
        core(env, || {
            let store = if held { Store::held() } else { Store::new() };
            Ok(Box::into_raw(Box::new(Handle::new(store))) as usize as jlong)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeFree<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    call(env, |env| {
        core(env, || {
            let p = h as usize as *mut Handle;
            if !p.is_null() {
                // SAFETY: from `Box::into_raw` in `nativeNew`; the Java class frees it once.
                drop(unsafe { Box::from_raw(p) });
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeApply<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    offsets: JLongArray<'l>,
    data: JByteArray<'l>,
    key_lengths: JIntArray<'l>,
    value_lengths: JIntArray<'l>,
) -> JByteArray<'l> {
    call(env, |env| {
        non_null(env, &offsets, "offsets")?;
        non_null(env, &data, "data")?;
        non_null(env, &key_lengths, "keyLengths")?;
        non_null(env, &value_lengths, "valueLengths")?;
        let mut offs = vec![0; offsets.len(env)?];
        offsets.get_region(env, 0, &mut offs)?;
        let mut keys = vec![0; key_lengths.len(env)?];
        key_lengths.get_region(env, 0, &mut keys)?;
        let mut values = vec![0; value_lengths.len(env)?];
        value_lengths.get_region(env, 0, &mut values)?;
        let mut out = vec![0u8; offs.len()];
        let len = data.len(env)?;
        let result = {
            let store = match handle(h).and_then(|s| s.write().map_err(|_| poisoned())) {
                Ok(s) => s,
                Err(e) => return Err(throw_core(env, &e)),
            };
            let Some(pinned) = Pinned::new(env, &data, len) else {
                drop(store);
                return Err(jni::errors::Error::JavaException);
            };
            let bytes = pinned.bytes();
            // The guard moves into the closure: a panic mid-batch drops it while unwinding, which
            // poisons the lock, so no later call reads a half-applied batch (every call then
            // fails with an internal error and the host drops the store and rebuilds it).
            catch_unwind(AssertUnwindSafe(move || {
                let mut store = store;
                store.apply_packed(&offs, bytes, &keys, &values, &mut out)?;
                Ok(out)
            }))
            .unwrap_or_else(|p| Err(panic_error(p)))
        };
        match result {
            Ok(out) => byte_array(env, Some(&out)),
            Err(e) => Err(throw_core(env, &e)),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeLoadPartition<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    topic: JString<'l>,
    p: jint,
) -> jboolean {
    call(env, |env| {
        let tp = named(env, msb, lsb, &topic, p)?;
        write(env, h, |s| Ok(s.load_partition(&tp)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeResetPartition<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    topic: JString<'l>,
    p: jint,
) {
    call(env, |env| {
        let tp = named(env, msb, lsb, &topic, p)?;
        write(env, h, |s| {
            s.reset_partition(&tp);
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeRewindMetadataPartition<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    mp: jint,
    num_partitions: jint,
) -> jint {
    call(env, |env| {
        write(env, h, |s| {
            let reset = s.rewind_metadata_partition(mp, num_partitions)?;
            Ok(i32::try_from(reset.len()).unwrap_or(i32::MAX))
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeMarkInitialized<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    topic: JString<'l>,
    p: jint,
) -> jboolean {
    call(env, |env| {
        let tp = named(env, msb, lsb, &topic, p)?;
        write(env, h, |s| Ok(s.mark_initialized(&tp)))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeIsInitialized<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> jboolean {
    call(env, |env| {
        read(env, h, |s| {
            Ok(s.partition_by_id(Uuid::new(msb, lsb), p)
                .and_then(|tp| s.partition_cache(tp))
                .is_some_and(|c| c.is_initialized()))
        })
    })
}

/// The native bytes the store holds by its own account (`Store::memory`, allocator overhead
/// excluded): what the plugin reports as its off-heap cache.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeMemoryBytes<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> jlong {
    call(env, |env| {
        read(env, h, |s| {
            Ok(jlong::try_from(s.memory().total()).unwrap_or(jlong::MAX))
        })
    })
}

/// How many deleted segments of a partition came back (`Store::resurrections`); 0 if not held.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeResurrections<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> jint {
    call(env, |env| {
        read(env, h, |s| {
            let n = s
                .partition_by_id(Uuid::new(msb, lsb), p)
                .map_or(0, |tp| s.resurrections(tp).len());
            Ok(jint::try_from(n).unwrap_or(jint::MAX))
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeUnloadPartition<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) {
    call(env, |env| {
        write(env, h, |s| {
            if let Some(tp) = s.partition_by_id(Uuid::new(msb, lsb), p).cloned() {
                s.unload_partition(&tp);
            }
            Ok(())
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeSegmentFor<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
    offset: jlong,
) -> JByteArray<'l> {
    call(env, |env| {
        let v = read(env, h, |s| {
            let tp = partition(s, msb, lsb, p)?;
            encoded(&tp, s.segment_for(&tp, epoch, offset)?)
        })?;
        byte_array(env, v.as_deref())
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeHighestOffsetForEpoch<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
) -> jlong {
    call(env, |env| {
        read(env, h, |s| {
            let tp = partition(s, msb, lsb, p)?;
            Ok(s.highest_offset_for_epoch(&tp, epoch)?.unwrap_or(i64::MIN))
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeSegments<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> JObjectArray<'l, JByteArray<'l>> {
    call(env, |env| {
        segment_list(env, h, |s, tp| s.segments(tp), msb, lsb, p)
    })
}

/// How many segments `nativeSegments` would list (`Store::segment_count`), none of them encoded.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeSegmentCount<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> jint {
    call(env, |env| {
        read(env, h, |s| {
            let n = s.segment_count(&partition(s, msb, lsb, p)?)?;
            Ok(jint::try_from(n).unwrap_or(jint::MAX))
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeSegmentsForEpoch<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
) -> JObjectArray<'l, JByteArray<'l>> {
    call(env, |env| {
        segment_list(env, h, |s, tp| s.segments_for_epoch(tp, epoch), msb, lsb, p)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePackedSegments<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> JObjectArray<'l, JByteArray<'l>> {
    call(env, |env| {
        packed_segment_list(env, h, |s, tp| s.segments(tp), msb, lsb, p)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePackedSegmentsForEpoch<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
) -> JObjectArray<'l, JByteArray<'l>> {
    call(env, |env| {
        packed_segment_list(env, h, |s, tp| s.segments_for_epoch(tp, epoch), msb, lsb, p)
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeNextSegmentWithTxnIndex<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
    offset: jlong,
) -> JByteArray<'l> {
    call(env, |env| {
        let v = read(env, h, |s| {
            let tp = partition(s, msb, lsb, p)?;
            encoded(&tp, s.next_segment_with_txn_index(&tp, epoch, offset)?)
        })?;
        byte_array(env, v.as_deref())
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeRemoteLogSize<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    epoch: jint,
) -> jlong {
    call(env, |env| {
        read(env, h, |s| {
            s.remote_log_size(&partition(s, msb, lsb, p)?, epoch)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePartitionDeleteState<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
) -> jint {
    call(env, |env| {
        read(env, h, |s| {
            let state = s
                .partition_by_id(Uuid::new(msb, lsb), p)
                .and_then(|tp| s.partition_delete_state(tp));
            Ok(state.map_or(-1, |st| jint::from(st.id())))
        })
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeSegmentState<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    id_msb: jlong,
    id_lsb: jlong,
) -> JByteArray<'l> {
    call(env, |env| {
        let state = read(env, h, |s| {
            s.segment_state(&partition(s, msb, lsb, p)?, Uuid::new(id_msb, id_lsb))
        })?;
        byte_array(
            env,
            state.map(|st| [st.id() as u8]).as_ref().map(|b| &b[..]),
        )
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePlan<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    event: JByteArray<'l>,
    broker_leader_epoch: jint,
    level: jint,
) -> JObject<'l> {
    call(env, |env| {
        plan_with(env, h, &event, |s, ev| {
            s.plan_value(ev, broker_leader_epoch, level_arg(level)?)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePlanAsWriter<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    event: JByteArray<'l>,
    leads: jboolean,
    known_epoch: jint,
    level: jint,
) -> JObject<'l> {
    call(env, |env| {
        let writer = Writer { leads, known_epoch };
        plan_with(env, h, &event, |s, ev| {
            s.plan_for_writer(ev, writer, level_arg(level)?)
        })
    })
}

/// The planner's records for a serde value `event` (not null), as `f` plans them with the store.
fn plan_with<'l>(
    env: &mut Env<'l>,
    h: jlong,
    event: &JByteArray<'l>,
    f: impl FnOnce(&Store, &[u8]) -> rlmeta::Result<Vec<Planned>>,
) -> JniResult<JObject<'l>> {
    non_null(env, event, "event")?;
    let event = env.convert_byte_array(event)?;
    let planned = read(env, h, |s| f(s, &event))?;
    planned_records(env, planned)
}

fn level_arg(level: jint) -> rlmeta::Result<i16> {
    i16::try_from(level).map_err(|_| {
        Error::field(
            ErrorKind::InvalidArgument,
            "level",
            format!("no feature level {level}"),
        )
    })
}

/// A `dev.rlmeta.PlannedRecords` of the planner's records: key texts and values (null: tombstone).
fn planned_records<'l>(env: &mut Env<'l>, planned: Vec<Planned>) -> JniResult<JObject<'l>> {
    let keys: Vec<Option<Vec<u8>>> = planned
        .iter()
        .map(|r| Some(r.key.format().into_bytes()))
        .collect();
    let values: Vec<Option<Vec<u8>>> = planned.into_iter().map(|r| r.value).collect();
    let keys = byte_arrays(env, &keys)?;
    let values = byte_arrays(env, &values)?;
    env.new_object(
        jni_str!("dev/rlmeta/PlannedRecords"),
        jni_sig!("([[B[[B)V"),
        &[JValue::Object(&keys), JValue::Object(&values)],
    )
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePlanBackfill<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
    msb: jlong,
    lsb: jlong,
    p: jint,
    writer_epoch: jint,
    level: jint,
) -> JObject<'l> {
    call(env, |env| {
        let planned = read(env, h, |s| {
            let level = i16::try_from(level)
                .map_err(|_| {
                    Error::field(
                        ErrorKind::InvalidArgument,
                        "level",
                        format!("no feature level {level}"),
                    )
                })
                .and_then(MetadataLevel::from_level)?;
            s.plan_backfill(&partition(s, msb, lsb, p)?, writer_epoch, level)
        })?;
        planned_records(env, planned)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativeDumpJson<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) -> JString<'l> {
    call(env, |env| {
        // the snapshot (the JSON tree) under the read lock, its text encoded after it is released:
        // an apply waits for the first only
        let tree = read(env, h, |s| Ok(s.dump_json()))?;
        JString::from_str(env, tree.to_string())
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_Outcome_nativeFatalToKafka<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    code: jint,
) -> jboolean {
    call(env, |_| {
        Ok(u8::try_from(code).is_ok_and(rlmeta::host::fatal_to_kafka))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_Outcome_nativeName<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    code: jint,
) -> JString<'l> {
    call(env, |env| {
        match u8::try_from(code)
            .ok()
            .and_then(rlmeta::host::outcome::name)
        {
            Some(name) => JString::from_str(env, name),
            None => Ok(JString::default()),
        }
    })
}

/// A fault-injection hook for the plugin's tests: panics while holding the store's write lock,
/// which poisons it exactly as a bug in the core would. The Java side refuses to call it unless
/// the JVM runs with `-Drlmeta.test.hooks=true` (`MetadataStore.panicForTest`); the panic is
/// caught here like any other, so nothing unwinds into the JVM.
#[unsafe(no_mangle)]
#[allow(clippy::panic)] // the panic is this entry point's whole purpose (a test's fault injection)
pub extern "system" fn Java_dev_rlmeta_MetadataStore_nativePanicForTest<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    h: jlong,
) {
    call(env, |env| {
        write(env, h, |_| -> rlmeta::Result<()> {
            panic!("a panic injected by a test (MetadataStore.panicForTest)")
        })
    })
}
