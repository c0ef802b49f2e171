package dev.rlmeta.cluster;

import java.time.Duration;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Test;

/**
 * The harness itself, on stock TBRLMM: 3 brokers upload segments, delete local copies, and serve
 * every record from offset 0. If this fails, the cluster scenarios of the plugin mean nothing.
 */
class StockClusterTest {
    @Test
    void stockBrokersTierAndServeFromOffsetZero() throws Exception {
        try (KafkaCluster c = new KafkaCluster("stock", 3, Map.of(), Map.of()).start();
             Admin admin = c.admin()) {
            String topic = "stock-a";
            Tiered.create(admin, topic, 3, 2, Tiered.topicConfigs());
            Tiered.produce(c.bootstrap(), topic, 3, 0, 600);
            Tiered.awaitTiered(c, admin, topic, 3, 2, Duration.ofSeconds(120));
            int n = Tiered.consumeAllAndCheck(c.bootstrap(), topic, 3, 0, 600, Duration.ofSeconds(120));
            KafkaCluster.log("stock: %d uploads, %d records read back from offset 0 (local logs start above 0)",
                    Tiered.journalCount(c, "COPY", topic), n);
        }
    }
}
