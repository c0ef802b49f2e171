package dev.rlmeta.kafka;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;

import org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManagerConfig;

import org.apache.kafka.server.log.remote.storage.RemoteStorageException;

/**
 * The seams between one plugin jar and the Kafka versions it runs on (3.7.x to 4.4.x). The plugin
 * is compiled against the oldest API (storage-api 3.7); whatever a later version added is found
 * here at run time, in the class loader the broker's own storage-api classes come from, with a
 * fallback that older brokers handle the same way. (Versions as javap shows the released jars.)
 *
 * <p>{@code RetriableRemoteStorageException} (storage-api 4.2+): a write that cannot be done yet
 * (not initialized, metadata partition not read to its end, no leader epoch, consumer lag) fails
 * with it on brokers that have it. On older brokers the fallback is {@link RetryLaterException}, a
 * plain {@link RemoteStorageException}: Kafka 3.7-4.1's RemoteLogManager waits on the future of
 * {@code addRemoteLogSegmentMetadata}/{@code updateRemoteLogSegmentMetadata} with {@code get()},
 * so whatever the future fails with reaches it as an {@code ExecutionException}; the copy task
 * logs it, counts a failed copy, keeps its copied offset and tries the same segment again on its
 * next run (and the expiration task the same deletion). See docs/PLUGIN.md.
 *
 * <p>TopicBasedRemoteLogMetadataManagerConfig (kafka-storage, not an API: checked with javap on
 * every version): 4.3+ has {@code adminProperties()} (the common client properties with the
 * {@code remote.log.metadata.admin.} ones over them) and {@code metadataTopicMinIsr()}; 3.7-4.2
 * have neither: the plugin's Admin then takes {@code commonProperties()} and the topic's
 * min.insync.replicas is remote.log.metadata.topic.min.isr when given, else the broker default.
 */
final class KafkaCompat {
    static final String RETRIABLE_CLASS = "org.apache.kafka.server.log.remote.storage.RetriableRemoteStorageException";

    /** (String, Throwable) -> RetriableRemoteStorageException, or null where storage-api has no such class. */
    private static final MethodHandle RETRIABLE = retriableConstructor(RemoteStorageException.class.getClassLoader());

    /** remote.log.metadata.topic.min.isr: 4.3+'s config (TopicBasedRemoteLogMetadataManagerConfig knows it there). */
    static final String TOPIC_MIN_ISR = "remote.log.metadata.topic.min.isr";

    private static final MethodHandle ADMIN_PROPERTIES = configMethod("adminProperties", Map.class);
    private static final MethodHandle TOPIC_MIN_ISR_METHOD = configMethod("metadataTopicMinIsr", short.class);

    private KafkaCompat() {}

    private static MethodHandle configMethod(String name, Class<?> returns) {
        return method(TopicBasedRemoteLogMetadataManagerConfig.class, name, returns);
    }

    /** A public no-argument instance method of `c`, or null where `c` has none of that name and type. */
    static MethodHandle method(Class<?> c, String name, Class<?> returns) {
        try {
            return MethodHandles.publicLookup().findVirtual(c, name, MethodType.methodType(returns));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /** The properties of the plugin's Admin client: adminProperties() (4.3+), else commonProperties() (3.7-4.2). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> adminProperties(TopicBasedRemoteLogMetadataManagerConfig c) {
        if (ADMIN_PROPERTIES != null) {
            try {
                return (Map<String, Object>) ADMIN_PROPERTIES.invoke(c);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("adminProperties() failed", t);
            }
        }
        return c.commonProperties();
    }

    /**
     * The metadata topic's min.insync.replicas to create it with, or -1 for the broker default:
     * metadataTopicMinIsr() where the config class has it (4.3+), else the value of
     * remote.log.metadata.topic.min.isr when given (a 3.7-4.2 config class ignores it), else -1.
     */
    static int metadataTopicMinIsr(TopicBasedRemoteLogMetadataManagerConfig c, Map<String, ?> configs) {
        if (TOPIC_MIN_ISR_METHOD != null) {
            try {
                return (short) TOPIC_MIN_ISR_METHOD.invoke(c);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException("metadataTopicMinIsr() failed", t);
            }
        }
        Object v = configs.get(TOPIC_MIN_ISR);
        if (v == null || v.toString().trim().isEmpty()) {
            return -1;
        }
        try {
            int n = Integer.parseInt(v.toString().trim());
            if (n < 1) {
                throw new NumberFormatException("below 1");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new org.apache.kafka.common.config.ConfigException(TOPIC_MIN_ISR, v,
                    "must be an integer of at least 1 (" + e.getMessage() + ")");
        }
    }

    /** The plugin's retriable error on storage-api before 4.2 (see the class comment). */
    public static final class RetryLaterException extends RemoteStorageException {
        private static final long serialVersionUID = 1L;

        RetryLaterException(String message, Throwable cause) {
            super(message + " (retriable)", cause);
        }
    }

    /** The (String, Throwable) constructor of RetriableRemoteStorageException as `loader` sees it, or null. */
    static MethodHandle retriableConstructor(ClassLoader loader) {
        Class<?> c;
        try {
            c = Class.forName(RETRIABLE_CLASS, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
        if (!RemoteStorageException.class.isAssignableFrom(c)) {
            return null;
        }
        try {
            return MethodHandles.publicLookup().findConstructor(c,
                    MethodType.methodType(void.class, String.class, Throwable.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /** true where the broker's storage-api has RetriableRemoteStorageException (4.2+). */
    static boolean hasRetriableRemoteStorageException() {
        return RETRIABLE != null;
    }

    static RemoteStorageException retriable(String message) {
        return retriable(message, null);
    }

    /** A RetriableRemoteStorageException where the broker has one, else a {@link RetryLaterException}. */
    static RemoteStorageException retriable(String message, Throwable cause) {
        if (RETRIABLE != null) {
            try {
                return (RemoteStorageException) RETRIABLE.invoke(message, cause);
            } catch (Throwable t) {
                // a constructor of an exception that throws: report the fallback instead, with the reason
                RetryLaterException e = new RetryLaterException(message, cause);
                e.addSuppressed(t);
                return e;
            }
        }
        return new RetryLaterException(message, cause);
    }
}
