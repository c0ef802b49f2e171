package dev.rlmeta.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The manager's Admin and producer (the consumer is {@link MetadataConsumer}'s): made with Kafka's
 * settings for TBRLMM's clients, a producer refused by the cluster replaced by a fresh one, both
 * closed by close(). The initialization makes them; writes and the backfill use them.
 *
 * <p>It never decides what to write or when, and never retries: its callers do.
 */
final class Clients {
    private final PluginConfig config;
    private final BooleanSupplier closed;
    volatile Admin admin;
    private volatile KafkaProducer<byte[], byte[]> producer;

    Clients(PluginConfig config, BooleanSupplier closed) {
        this.config = config;
        this.closed = closed;
    }

    /** Makes the Admin if there is none yet (the initialization, on its thread); true if it made one. */
    boolean ensureAdmin() {
        if (admin != null) {
            return false;
        }
        admin = Admin.create(KafkaCompat.adminProperties(config.kafka));
        return true;
    }

    /** Makes the producer if there is none yet (the initialization, on its thread); true if it made one. */
    boolean ensureProducer() {
        if (producer != null) {
            return false;
        }
        producer = newProducer();
        return true;
    }

    /**
     * The producer: Kafka's settings for TBRLMM's producer, and max.block.ms 10 s unless set, since
     * send() runs on Kafka's remote-log threads (it blocks only while the topic's metadata is missing).
     */
    private KafkaProducer<byte[], byte[]> newProducer() {
        Map<String, Object> props = new HashMap<>(config.kafka.producerProperties());
        props.putIfAbsent("max.block.ms", 10_000);
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    synchronized KafkaProducer<byte[], byte[]> currentProducer() {
        if (producer == null) {
            producer = newProducer();
        }
        return producer;
    }

    synchronized void replaceProducer(KafkaProducer<byte[], byte[]> failed) {
        if (producer == failed && !closed.getAsBoolean()) {
            producer = null; // the next write creates a fresh one
            Thread t = new Thread(() -> failed.close(Duration.ZERO), "RlmetaRLMMProducerClose");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Closes the producer, then the Admin, each within what is left of `deadline` (at most 5 s each). */
    void close(long deadline) {
        KafkaProducer<byte[], byte[]> p = producer;
        if (p != null) {
            p.close(left(deadline, Duration.ofSeconds(5)));
        }
        Admin a = admin;
        if (a != null) {
            a.close(left(deadline, Duration.ofSeconds(5)));
        }
    }

    /** What is left of a deadline ({@link System#nanoTime}), at most {@code cap}, at least 0. */
    static Duration left(long deadline, Duration cap) {
        long nanos = Math.max(0, Math.min(cap.toNanos(), deadline - System.nanoTime()));
        return Duration.ofNanos(nanos);
    }
}
