package dev.rlmeta.kafka;

import java.util.ArrayList;
import java.util.List;

/**
 * When each step of the plugin's start happened, in milliseconds since configure(): client
 * creation, the Admin round trips, the consumer's assignment and offsets, its first polls, and the
 * moment every held partition was initialized. A diagnostic (logged once and readable by tests and
 * the bootstrap benchmark); it decides nothing. Bounded: steps past {@link #MAX_STEPS} are dropped.
 */
final class StartupTimeline {
    static final int MAX_STEPS = 64;

    private final long startNanos = System.nanoTime();
    private final List<String> names = new ArrayList<>();
    private final List<Double> millis = new ArrayList<>();

    /** Milliseconds since configure(). */
    double now() {
        return (System.nanoTime() - startNanos) / 1e6;
    }

    synchronized void mark(String step) {
        if (names.size() < MAX_STEPS) {
            names.add(step);
            millis.add(now());
        }
    }

    /** The first time `step` was marked (ms since configure), or -1. */
    synchronized double at(String step) {
        int i = names.indexOf(step);
        return i < 0 ? -1 : millis.get(i);
    }

    /** "step @ms" entries in the order they happened. */
    synchronized String summary() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < names.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(names.get(i)).append(String.format(" @%.1f", millis.get(i)));
        }
        return sb.toString();
    }
}
