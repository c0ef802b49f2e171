package dev.rlmeta.kafka;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The test-only faults of the metadata consumer, in one place: a failure or an Error injected into
 * the next apply, a hook run right before each call into the store's apply, and a gate that holds
 * rebuilds, replays and restarts before they read again.
 *
 * <p>It owns nothing the plugin needs: a consumer has none until {@link TestHooks} (which needs
 * {@code -Drlmeta.test.hooks=true}, never set on a broker) asks for one, and the consumer's loop
 * consults it with one volatile read per apply. It never reads records, the store or the clients.
 */
final class TestFaults {
    /** What the next apply does instead of applying. */
    enum Fault { APPLY_THROWS, APPLY_ERROR }

    /** A test's view of an apply about to run: records from..from+chunk of a batch of `batch` records. */
    @FunctionalInterface
    interface ApplyHook {
        void before(int metadataPartition, int from, int batch);
    }

    final AtomicReference<Fault> nextFault = new AtomicReference<>();
    private volatile CountDownLatch recoveryGate; // a rebuild or a replay waits for it before reading again
    volatile ApplyHook beforeApply;               // runs on the consumer thread right before each store.apply

    /**
     * Right before an apply of {@code n} records of {@code topic}-{@code mp} (from {@code from} of a
     * batch of {@code batch}): runs the hook, then throws the fault armed for it, if any.
     */
    void beforeApply(String topic, int mp, int from, int n, int batch) {
        ApplyHook hook = beforeApply;
        if (hook != null) {
            hook.before(mp, from, batch);
        }
        Fault fault = nextFault.getAndSet(null);
        if (fault == Fault.APPLY_THROWS) {
            throw new IllegalStateException("a failure injected by a test (apply of " + n + " record(s) of " + topic
                    + "-" + mp + ")");
        } else if (fault == Fault.APPLY_ERROR) {
            throw new Error("an Error injected by a test (apply of " + n + " record(s) of " + topic + "-" + mp + ")");
        }
    }

    /** Rebuilds and restarts wait (not reading again) until {@link #releaseRecovery()}. */
    void holdRecovery() {
        recoveryGate = new CountDownLatch(1);
    }

    void releaseRecovery() {
        CountDownLatch g = recoveryGate;
        recoveryGate = null;
        if (g != null) {
            g.countDown();
        }
    }

    /** Whether recovery is held now (a replay due waits). */
    boolean recoveryHeld() {
        CountDownLatch g = recoveryGate;
        return g != null && g.getCount() > 0;
    }

    /** Waits while recovery is held. */
    void awaitRecovery() throws InterruptedException {
        CountDownLatch g = recoveryGate;
        if (g != null) {
            g.await();
        }
    }

    /** Lets a held recovery go on (close()), the gate kept. */
    void openGate() {
        CountDownLatch g = recoveryGate;
        if (g != null) {
            g.countDown();
        }
    }
}
