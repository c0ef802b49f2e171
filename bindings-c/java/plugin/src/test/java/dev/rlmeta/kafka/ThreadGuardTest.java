package dev.rlmeta.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** The guard of the plugin's threads, without a broker: what ends a thread's work, and what does not. */
class ThreadGuardTest {

    @Test
    void anErrorIsCountedAndTheWorkRunsAgainUntilItReturns() throws Exception {
        ThreadGuard guard = new ThreadGuard(() -> false);
        AtomicInteger runs = new AtomicInteger();
        Thread t = guard.newThread("test-guarded", () -> {
            if (runs.incrementAndGet() <= 2) {
                throw new StackOverflowError("run " + runs.get());
            }
        });
        assertTrue(t.isDaemon());
        t.start();
        t.join(10_000);
        assertFalse(t.isAlive(), "work that returned ends its thread");
        assertEquals(3, runs.get(), "run again after each of the two Errors, not after it returned");
        assertEquals(2, guard.deaths());
        assertEquals("thread test-guarded died: java.lang.StackOverflowError: run 2", guard.lastDeath());
    }

    @Test
    void aClosedPluginEndsTheThreadInsteadOfRestartingIt() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        ThreadGuard guard = new ThreadGuard(closed::get);
        CountDownLatch died = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Thread t = guard.newThread("test-closing", () -> {
            runs.incrementAndGet();
            died.countDown();
            throw new IllegalStateException("always");
        });
        t.start();
        assertTrue(died.await(10, TimeUnit.SECONDS));
        closed.set(true);
        t.interrupt(); // as close() does: the backoff ends at once
        t.join(10_000);
        assertFalse(t.isAlive());
        assertEquals(1, runs.get(), "restarted after close");
    }

    @Test
    void anArmedCheckpointThrowsOnceAndCounts() {
        ThreadGuard guard = new ThreadGuard(() -> false);
        guard.checkpoint("x"); // nothing armed
        guard.arm("x");
        Error e = assertThrows(Error.class, () -> guard.checkpoint("x"));
        assertTrue(e.getMessage().contains("thread x"), e.getMessage());
        guard.checkpoint("x"); // once
        guard.checkpoint("y");
        assertEquals(1, guard.fired("x"));
        assertEquals(0, guard.fired("y"));
        assertNull(guard.lastDeath());
    }
}
