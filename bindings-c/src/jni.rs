//! JNI entry points of `dev.rlmeta.RlMeta` (feature `jni`, on by default), in the same shared
//! library as the C ABI.
//!
//! Each entry point converts Java types, calls the core and converts back. A core error becomes
//! a `dev.rlmeta.RlMetaException` (the subclass of its kind, made by the Java factory
//! `RlMetaException.create`), a null argument a `NullPointerException`, a panic in the core an
//! `RlMetaException` with code 99; anything left (a JNI failure, a panic in this glue) becomes a
//! `RuntimeException` through jni's `ThrowRuntimeExAndDefault`. Nothing unwinds into the JVM.

use std::panic::{AssertUnwindSafe, catch_unwind};

use jni::errors::{Error as JniError, Result as JniResult, ThrowRuntimeExAndDefault};
use jni::objects::{
    JByteArray, JClass, JIntArray, JObject, JObjectArray, JString, JThrowable, JValue,
};
use jni::strings::JNIString;
use jni::sys::{jboolean, jint, jlong};
use jni::{Env, EnvUnowned, jni_sig, jni_str};
use rlmeta::json::{Int64Style, decode_value_to_json, encode_value_from_json};
use rlmeta::{ErrorKind, RecordKey};

use crate::error::panic_error;

mod store;

/// Runs an entry point's body with an `Env`, turning errors and panics into Java exceptions.
fn call<'l, T: Default>(
    mut env: EnvUnowned<'l>,
    body: impl FnOnce(&mut Env<'l>) -> JniResult<T>,
) -> T {
    env.with_env(body).resolve::<ThrowRuntimeExAndDefault>()
}

/// Runs a core call with panics caught; a core error is thrown as an `RlMetaException`.
fn core<T>(env: &mut Env<'_>, f: impl FnOnce() -> rlmeta::Result<T>) -> JniResult<T> {
    match catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p))) {
        Ok(v) => Ok(v),
        Err(e) => Err(throw_core(env, &e)),
    }
}

/// Throws the `RlMetaException` of a core error; returns the error to propagate.
fn throw_core(env: &mut Env<'_>, e: &rlmeta::Error) -> JniError {
    let mut throw = || -> JniResult<()> {
        let kind = JString::from_str(env, e.kind().name())?;
        let description = JString::from_str(env, e.to_string())?;
        let message = JString::from_str(env, e.message())?;
        let field = match e.field_name() {
            Some(f) => JObject::from(JString::from_str(env, f)?),
            None => JObject::null(),
        };
        let offset = e.offset().and_then(|o| jlong::try_from(o).ok());
        let ex = env
            .call_static_method(
                jni_str!("dev/rlmeta/RlMetaException"),
                jni_str!("create"),
                jni_sig!("(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;JLjava/lang/String;)Ldev/rlmeta/RlMetaException;"),
                &[
                    JValue::Int(jint::try_from(e.code()).unwrap_or(jint::MAX)),
                    JValue::Object(&kind),
                    JValue::Object(&description),
                    JValue::Object(&message),
                    JValue::Long(offset.unwrap_or(-1)),
                    JValue::Object(&field),
                ],
            )?
            .l()?;
        let ex = env.cast_local::<JThrowable>(ex)?;
        env.throw(ex)
    };
    throw().err().unwrap_or(JniError::JavaException)
}

/// Throws a `NullPointerException` when `obj` is null.
fn required<'a>(env: &mut Env<'_>, obj: &impl AsRef<JObject<'a>>, name: &str) -> JniResult<()> {
    if obj.as_ref().is_null() {
        let msg = JNIString::from(format!("{name} must not be null"));
        env.throw_new(jni_str!("java/lang/NullPointerException"), msg)?;
    }
    Ok(())
}

fn string(env: &mut Env<'_>, s: &JString<'_>, name: &str) -> JniResult<String> {
    required(env, s, name)?;
    s.try_to_string(env)
}

fn bytes(env: &mut Env<'_>, a: &JByteArray<'_>, name: &str) -> JniResult<Vec<u8>> {
    required(env, a, name)?;
    env.convert_byte_array(a)
}

/// A `dev.rlmeta.RecordKey` of a core key.
fn record_key<'l>(env: &mut Env<'l>, k: &RecordKey) -> JniResult<JObject<'l>> {
    let topic_id = JString::from_str(env, k.topic_id.to_string())?;
    let topic = JString::from_str(env, &k.topic)?;
    env.new_object(
        jni_str!("dev/rlmeta/RecordKey"),
        jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJIZ)V"),
        &[
            JValue::Object(&topic_id),
            JValue::Object(&topic),
            JValue::Int(k.partition),
            JValue::Long(k.end_offset),
            JValue::Int(k.broker_leader_epoch),
            JValue::Bool(k.update),
        ],
    )
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_version<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JString<'l> {
    call(env, |env| JString::from_str(env, rlmeta::VERSION))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_decodeValueJson<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    value: JByteArray<'l>,
) -> JString<'l> {
    call(env, |env| {
        let value = bytes(env, &value, "value")?;
        let json = core(env, || decode_value_to_json(&value, Int64Style::Number))?;
        JString::from_str(env, json)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_encodeValueJson<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    json: JString<'l>,
) -> JByteArray<'l> {
    call(env, |env| {
        let json = string(env, &json, "json")?;
        let value = core(env, || encode_value_from_json(&json))?;
        env.byte_array_from_slice(&value)
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_keyFormat<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    topic_id: JString<'l>,
    topic: JString<'l>,
    partition: jint,
    end_offset: jlong,
    broker_leader_epoch: jint,
    update: jboolean,
) -> JString<'l> {
    call(env, |env| {
        let (topic_id, topic) = (
            string(env, &topic_id, "topicId")?,
            string(env, &topic, "topic")?,
        );
        let key = core(env, || {
            Ok(RecordKey::from_text(
                &topic_id,
                &topic,
                partition,
                end_offset,
                broker_leader_epoch,
                update,
            )?
            .format())
        })?;
        JString::from_str(env, key)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_keyParse<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    key: JString<'l>,
) -> JObject<'l> {
    call(env, |env| {
        let key = string(env, &key, "key")?;
        let key = core(env, || RecordKey::parse(&key))?;
        record_key(env, &key)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_keyParseBytes<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    key: JByteArray<'l>,
) -> JObject<'l> {
    call(env, |env| {
        let key = bytes(env, &key, "key")?;
        let key = core(env, || RecordKey::parse_bytes(&key))?;
        record_key(env, &key)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_keyForValue<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    value: JByteArray<'l>,
) -> JString<'l> {
    call(env, |env| {
        let value = bytes(env, &value, "value")?;
        let key = core(env, || {
            Ok(RecordKey::for_value(&rlmeta::decode_value(&value)?)?.format())
        })?;
        JString::from_str(env, key)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_metadataPartition<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    topic_id: JString<'l>,
    partition: jint,
    num_partitions: jint,
) -> jint {
    call(env, |env| {
        let topic_id = string(env, &topic_id, "topicId")?;
        core(env, || {
            rlmeta::partitioner::metadata_partition_of(&topic_id, partition, num_partitions)
        })
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_errorKindForKafkaMessage<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    text: JString<'l>,
) -> jint {
    call(env, |env| {
        let text = string(env, &text, "text")?;
        let code = ErrorKind::from_kafka_message(&text).map_or(0, ErrorKind::code);
        Ok(jint::try_from(code).unwrap_or(jint::MAX))
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_errorCodes<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
) -> JIntArray<'l> {
    call(env, |env| {
        let codes: Vec<jint> = ErrorKind::ALL
            .into_iter()
            .map(|k| jint::try_from(k.code()).unwrap_or(jint::MAX))
            .collect();
        let array = JIntArray::new(env, codes.len())?;
        array.set_region(env, 0, &codes)?;
        Ok(array)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_errorKindName<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    code: jint,
) -> JString<'l> {
    call(env, |env| {
        let kind = u32::try_from(code).ok().and_then(ErrorKind::from_code);
        match kind {
            Some(k) => JString::from_str(env, k.name()),
            None => Ok(JString::default()),
        }
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_writeLevel<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    finalized: jint,
    record_level: jint,
    cleanup_policy: JString<'l>,
) -> jint {
    call(env, |env| {
        let policy = if cleanup_policy.is_null() {
            None
        } else {
            Some(string(env, &cleanup_policy, "cleanupPolicy")?)
        };
        core(env, || {
            crate::write_level(finalized, record_level, policy.as_deref())
        })
    })
}

/// Core `feature::fresh_topic_plan`: the topic configs as `[name, value, name, value, ...]`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_freshTopicConfigs<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    finalized: jint,
    metadata_topic_retention_ms: jlong,
) -> JObjectArray<'l, JString<'l>> {
    call(env, |env| {
        let plan = core(env, || fresh_plan(finalized, metadata_topic_retention_ms))?;
        let pairs: Vec<&str> = plan
            .configs
            .iter()
            .flat_map(|(k, v)| [*k, v.as_str()])
            .collect();
        let array = JObjectArray::<JString>::new(env, pairs.len(), JString::default())?;
        for (i, text) in pairs.into_iter().enumerate() {
            let s = JString::from_str(env, text)?;
            array.set_element(env, i, &s)?;
            env.delete_local_ref(s);
        }
        Ok(array)
    })
}

/// Core `feature::fresh_topic_plan`: the level record value every partition gets, null when the
/// finalized feature carries the level.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_rlmeta_RlMeta_freshTopicLevelRecord<'l>(
    env: EnvUnowned<'l>,
    _class: JClass<'l>,
    finalized: jint,
) -> JByteArray<'l> {
    call(env, |env| {
        let plan = core(env, || fresh_plan(finalized, -1))?;
        match plan.level_record {
            Some(v) => env.byte_array_from_slice(v),
            None => Ok(JByteArray::default()),
        }
    })
}

fn fresh_plan(
    finalized: jint,
    retention_ms: i64,
) -> rlmeta::Result<rlmeta::feature::FreshTopicPlan> {
    // -1: the cluster finalizes none; an out-of-range level is refused by the core
    let finalized = (finalized != -1).then(|| i16::try_from(finalized).unwrap_or(i16::MAX));
    rlmeta::feature::fresh_topic_plan(finalized, retention_ms)
}
