package dev.rlmeta.cluster;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * The lines one logger (and its children) writes in this JVM at INFO and above, as "LEVEL message",
 * from {@link #start} until {@link #close}: what an operator would read in a broker's log of the
 * plugin an in-process test drives.
 */
final class LogCapture extends AbstractAppender implements AutoCloseable {
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final String logger;

    private LogCapture(String logger) {
        super("capture-" + logger, null, null, true, Property.EMPTY_ARRAY);
        this.logger = logger;
    }

    static LogCapture start(String logger) {
        LogCapture c = new LogCapture(logger);
        c.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration cfg = ctx.getConfiguration();
        cfg.addAppender(c);
        LoggerConfig lc = new LoggerConfig(logger, Level.INFO, true);
        lc.addAppender(c, Level.INFO, null);
        cfg.addLogger(logger, lc);
        ctx.updateLoggers();
        return c;
    }

    @Override
    public void append(LogEvent e) {
        lines.add(e.getLevel() + " " + e.getMessage().getFormattedMessage());
    }

    List<String> lines() {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    @Override
    public void close() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(logger);
        ctx.updateLoggers();
        stop();
    }
}
