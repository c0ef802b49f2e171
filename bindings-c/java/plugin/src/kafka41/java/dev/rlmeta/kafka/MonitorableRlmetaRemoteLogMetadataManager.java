package dev.rlmeta.kafka;

import java.util.LinkedHashMap;

import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin for Kafka 4.1+ that also reports through Kafka's own metrics (KIP-877): the same
 * RemoteLogMetadataManager, plus {@link Monitorable}, whose {@code withPluginMetrics} Kafka calls
 * right after {@code configure} (RemoteLogManager.configAndWrapRlmmPlugin, Plugin.wrapInstance) when
 * the broker instantiated this class itself: with the jar in {@code libs/} and no
 * {@code remote.log.metadata.manager.class.path}. Through a class path Kafka wraps the instance in
 * ClassLoaderAwareRemoteLogMetadataManager, which is not Monitorable, and passes nothing (the
 * plugin's MBean reports either way). It registers {@code PluginMetrics.gauges()}, the MBean's own
 * table, and decides nothing.
 *
 * <p>Compiled apart against kafka-clients 4.1 (Monitorable does not exist before 4.1) and referenced
 * by no other class of the jar, so the jar still loads on Kafka 3.7..4.0, where this class is simply
 * never named. Kafka removes the metrics when it closes the plugin.
 */
public class MonitorableRlmetaRemoteLogMetadataManager extends RlmetaRemoteLogMetadataManager implements Monitorable {
    private static final Logger log = LoggerFactory.getLogger(MonitorableRlmetaRemoteLogMetadataManager.class);

    public MonitorableRlmetaRemoteLogMetadataManager() {}

    @Override
    public void withPluginMetrics(PluginMetrics kafkaMetrics) {
        dev.rlmeta.kafka.PluginMetrics ours = pluginMetrics();
        if (ours == null) { // Kafka configures first; anything else gets the MBean only, and says so
            log.warn("rlmeta RLMM: withPluginMetrics before configure; Kafka's metrics get nothing (the MBean reports)");
            return;
        }
        for (dev.rlmeta.kafka.PluginMetrics.Gauge g : ours.gauges()) {
            Gauge<Object> gauge = (config, now) -> g.value.get();
            kafkaMetrics.addMetric(kafkaMetrics.metricName(g.name, g.description, new LinkedHashMap<>(g.tags)), gauge);
        }
    }
}
