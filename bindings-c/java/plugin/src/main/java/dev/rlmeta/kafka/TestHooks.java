package dev.rlmeta.kafka;

import java.util.List;
import java.util.function.BooleanSupplier;

import dev.rlmeta.RlMetaException;

/**
 * Fault injection for tests, from {@link RlmetaRemoteLogMetadataManager#testHooks()} (refused unless
 * the JVM runs with {@code -Drlmeta.test.hooks=true}, which a broker never sets): Errors in the
 * guarded threads, failures and Errors in the consumer's apply, a panic in the store, holding
 * recovery, and views of the consumer's state.
 *
 * <p>It owns no state of its own: it arms the consumer's {@link TestFaults} and the {@link ThreadGuard}.
 * It never runs on a plugin thread and is never reached by the plugin's own code.
 */
public final class TestHooks {
    private final MetadataConsumer c;
    private final TestFaults faults;
    private final ThreadGuard guard;
    private final BooleanSupplier ready;

    TestHooks(MetadataConsumer c, ThreadGuard guard, BooleanSupplier ready) {
        this.c = c;
        this.faults = c.testFaults();
        this.guard = guard;
        this.ready = ready;
    }

    /** See {@link TestHooks#beforeApply}. */
    @FunctionalInterface
    public interface ApplyHook {
        void before(int metadataPartition, int from, int batch);
    }

    /** Whether the initialization is done (clients up, threads started): writes are taken. */
    public boolean initialized() {
        return ready.getAsBoolean();
    }

    /** The names of the threads {@link #errorInThread} reaches (the consumer's: {@link #errorOnNextApply}). */
    public static final List<String> GUARDED_THREADS = List.of(RlmetaRemoteLogMetadataManager.INIT_THREAD,
            RlmetaRemoteLogMetadataManager.POLICY_THREAD, RlmetaRemoteLogMetadataManager.BACKFILL_THREAD,
            RlmetaRemoteLogMetadataManager.DUMP_THREAD);

    /**
     * The thread's next round throws an Error (initialization: right before it starts the policy and
     * backfill threads and marks the manager ready; the others: at the top of each round).
     */
    public void errorInThread(String name) {
        if (!GUARDED_THREADS.contains(name)) {
            throw new IllegalArgumentException("no guarded thread " + name + " (" + GUARDED_THREADS + ")");
        }
        guard.arm(name);
    }

    /** How many Errors {@link #errorInThread} made the thread throw. */
    public long errorsThrown(String name) {
        return guard.fired(name);
    }

    /** The next apply of consumed records throws (a RuntimeException) instead of applying them. */
    public void failNextApply() {
        faults.nextFault.set(TestFaults.Fault.APPLY_THROWS);
    }

    /** The next apply throws an Error, which ends the consumer thread. */
    public void errorOnNextApply() {
        faults.nextFault.set(TestFaults.Fault.APPLY_ERROR);
    }

    /** A panic inside the native store, holding its write lock: it is poisoned from now on. */
    public void panicInStore() {
        try {
            c.store().panicForTest();
        } catch (RlMetaException.Internal expected) {
            // the panic, caught at the JNI boundary
        }
    }

    /** Rebuilds and restarts wait (not reading again) until {@link #releaseRecovery()}. */
    public void holdRecovery() {
        faults.holdRecovery();
    }

    public void releaseRecovery() {
        faults.releaseRecovery();
    }

    /**
     * Runs on the consumer thread right before each call into the store's apply, with the
     * metadata partition, the index of the chunk's first record in its poll batch, and the
     * batch's size (null: none).
     */
    public void beforeApply(ApplyHook hook) {
        faults.beforeApply = hook == null ? null : hook::before;
    }

    /** Metadata partitions stopped after their records failed to apply again and again. */
    public List<Integer> stoppedPartitions() {
        return c.stoppedPartitions();
    }

    /** The records per call into the store's apply. */
    public int applyChunk() {
        return MetadataConsumer.APPLY_CHUNK;
    }

    /** Whether lookups are served (false while a rebuild or a restart is under way). */
    public boolean serving() {
        return c.serving();
    }

    /** The consumer thread now (a restart replaces it). */
    public String consumerThread() {
        return String.valueOf(c.threadName());
    }
}
