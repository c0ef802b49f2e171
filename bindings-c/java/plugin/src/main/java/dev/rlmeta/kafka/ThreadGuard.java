package dev.rlmeta.kafka;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin's threads other than the metadata consumer (which restarts itself with a rebuild):
 * initialization, cleanup-policy refresh, backfill, dump. Each runs its work under this guard,
 * which catches whatever the work dies of ({@link Error} included), logs it at ERROR with the
 * thread's name, counts it (the ThreadDeaths metric), and runs the work again on the same thread
 * after a backoff (200 ms, doubling with each death in a row, up to 30 s), for as long as the
 * plugin is open. Work that returns (done, or stopped by close()) ends the thread.
 *
 * <p>Never: decides what the work does, retries work that returned, or outlives close() (the
 * backoff is interrupted by close()'s interrupt and ends the thread).
 */
final class ThreadGuard {
    private static final Logger log = LoggerFactory.getLogger(ThreadGuard.class);
    static final long BACKOFF_MS = 200;
    static final long MAX_BACKOFF_MS = 30_000;
    /** Work that ran this long before it died starts its backoff again from {@link #BACKOFF_MS}. */
    static final long HEALTHY_NANOS = 60_000_000_000L;

    private final BooleanSupplier closed;
    private final AtomicLong deaths = new AtomicLong();
    private volatile String lastDeath;
    // test hooks (RlmetaRemoteLogMetadataManager.TestHooks, -Drlmeta.test.hooks=true only): by thread name
    private final Map<String, AtomicBoolean> armed = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> fired = new ConcurrentHashMap<>();

    ThreadGuard(BooleanSupplier closed) {
        this.closed = closed;
    }

    /** A daemon thread named {@code name} that runs {@code work} under this guard (not started). */
    Thread newThread(String name, Runnable work) {
        Thread t = new Thread(() -> guard(name, work), name);
        t.setDaemon(true);
        return t;
    }

    private void guard(String name, Runnable work) {
        int inARow = 0;
        while (!closed.getAsBoolean()) {
            long started = System.nanoTime();
            try {
                work.run();
                return;
            } catch (Throwable t) {
                if (closed.getAsBoolean()) {
                    return;
                }
                long n = deaths.incrementAndGet();
                inARow = System.nanoTime() - started >= HEALTHY_NANOS ? 1 : inARow + 1;
                long backoff = Math.min(MAX_BACKOFF_MS, BACKOFF_MS << Math.min(inARow - 1, 10));
                lastDeath = "thread " + name + " died: " + t;
                log.error("rlmeta RLMM thread {} died of {}; its work starts again in {} ms ({} death(s) in a row, {} "
                        + "of the plugin's threads in all)", name, t, backoff, inARow, n, t);
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException e) {
                    return; // close()
                }
            }
        }
    }

    /**
     * An Error the thread's work caught itself and went on from (the backfill's round of one
     * partition): logged by the work, counted here as a death (ThreadDeaths, LastError) all the same.
     */
    void caught(String name, Throwable t) {
        deaths.incrementAndGet();
        lastDeath = "thread " + name + " caught: " + t;
    }

    /** Deaths of guarded threads since configure(). */
    long deaths() {
        return deaths.get();
    }

    /** The last death ("thread NAME died: ..."), or null. */
    String lastDeath() {
        return lastDeath;
    }

    /** Called by a guarded thread's work at each round: throws the Error a test armed for it, once. */
    void checkpoint(String name) {
        AtomicBoolean a = armed.get(name);
        if (a != null && a.getAndSet(false)) {
            fired.computeIfAbsent(name, k -> new AtomicLong()).incrementAndGet();
            throw new Error("an Error injected by a test into thread " + name);
        }
    }

    /** Test hook: the thread's next checkpoint throws an Error. */
    void arm(String name) {
        armed.computeIfAbsent(name, k -> new AtomicBoolean()).set(true);
    }

    /** Test hook: how many armed Errors the thread has thrown. */
    long fired(String name) {
        AtomicLong f = fired.get(name);
        return f == null ? 0 : f.get();
    }
}
