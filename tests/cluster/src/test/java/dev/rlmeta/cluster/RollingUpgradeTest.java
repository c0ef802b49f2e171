package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.junit.jupiter.api.Test;

import dev.rlmeta.cluster.KafkaCluster.Rlmm;
import dev.rlmeta.cluster.MetaTopic.Rec;

/**
 * A rolling upgrade at level 0: broker 1 runs stock TBRLMM and creates __remote_log_metadata
 * (cleanup.policy=delete, no level record); brokers 2 and 3 then join with the plugin. The
 * plugin must see level 0 and write only what the stock broker reads (keyed version-0 values, no
 * tombstones, no level records), uploads and retention deletions included; the stock broker,
 * left alone, serves every record from offset 0 out of segments the plugin brokers uploaded.
 */
class RollingUpgradeTest {
    static void say(String fmt, Object... args) {
        System.out.printf("[scenario] " + fmt + "%n", args);
    }

    @Test
    void levelZeroTopicSharedWithAStockBroker() throws Exception {
        try (KafkaCluster c = new KafkaCluster("upgrade", 3,
                Map.of(1, Rlmm.STOCK, 2, Rlmm.PLUGIN_CLASS_PATH, 3, Rlmm.PLUGIN_CLASS_PATH),
                // the stock broker creates the topic alone, before the others start
                Map.of("rlmm.config.remote.log.metadata.topic.replication.factor", "1",
                        "rlmm.config.remote.log.metadata.topic.min.isr", "1")).start(List.of(1));
             Admin admin = c.admin()) {
            KafkaCluster.await("stock TBRLMM created " + MetaTopic.NAME, Duration.ofSeconds(60), () -> {
                try {
                    return admin.listTopics(new org.apache.kafka.clients.admin.ListTopicsOptions().listInternal(true))
                            .names().get().contains(MetaTopic.NAME);
                } catch (Exception e) {
                    return false;
                }
            });
            Config cfg = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, MetaTopic.NAME)))
                    .all().get(30, TimeUnit.SECONDS).values().iterator().next();
            assertEquals("delete", cfg.get("cleanup.policy").value());
            c.restartBroker(2);
            c.restartBroker(3);
            for (int b : List.of(2, 3)) {
                KafkaCluster.await("broker " + b + " plugin initialized", Duration.ofSeconds(60),
                        () -> !c.logLines(b, "rlmeta RLMM initialized on broker " + b).isEmpty());
            }
            String topic = "up-a";
            Tiered.create(admin, topic, 3, 3, Tiered.topicConfigs());
            String gone = "up-b";
            Map<String, String> retained = new java.util.HashMap<>(Tiered.topicConfigs());
            retained.put("retention.bytes", "32768");
            Tiered.create(admin, gone, 3, 3, retained);
            Tiered.produce(c.bootstrap(), topic, 3, 0, 600);
            Tiered.produce(c.bootstrap(), gone, 3, 0, 600);
            Tiered.awaitTiered(c, admin, topic, 3, 2, Duration.ofSeconds(120));
            KafkaCluster.await(gone + ": remote deletions in every partition", Duration.ofSeconds(120), () -> {
                for (int p = 0; p < 3; p++) {
                    if (Tiered.journalCount(c, "DELETE", gone, p) < 1) {
                        return false;
                    }
                }
                return true;
            });
            Thread.sleep(3000);
            // everything in the topic is readable by Kafka 4.4.0's own serde, nothing is a tombstone
            RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
            int keyed = 0;
            int nullKeys = 0;
            List<Rec> all = MetaTopic.read(c.bootstrap());
            for (Rec r : all) {
                assertFalse(r.levelRecord(), "a level record at level 0: " + r.partition() + "/" + r.offset());
                assertFalse(r.tombstone(), "a tombstone at level 0: " + r.partition() + "/" + r.offset() + " key " + r.key());
                serde.deserialize(r.value());
                assertEquals(0, r.decoded().get("version").asInt(), "a value of version > 0 at level 0");
                if (r.key() == null) {
                    nullKeys++;
                } else {
                    keyed++;
                }
            }
            assertTrue(keyed > 0, "the plugin brokers wrote nothing");
            assertTrue(nullKeys > 0, "the stock broker wrote nothing");
            for (int b : List.of(2, 3)) {
                JsonNode d = MetaTopic.json(java.nio.file.Files.readString(c.dumpFile(b)));
                for (int p = 0; p < 3; p++) {
                    if (d.get("positions").get(p).asLong() >= 0) {
                        assertEquals(0, d.get("levels").get(p).asInt(), "broker " + b + " level of partition " + p);
                    }
                }
            }
            List<String> consumerErrors = c.logLines(1, "ConsumerTask");
            assertTrue(consumerErrors.stream().noneMatch(l -> l.contains("ERROR")), "stock consumer errors: " + consumerErrors);
            // the stock broker alone serves everything, from segments the plugin brokers uploaded too
            assertTrue(c.stopBroker(2));
            assertTrue(c.stopBroker(3));
            KafkaCluster.await("broker 1 leads every partition of " + topic, Duration.ofSeconds(60), () -> {
                try {
                    return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().stream()
                            .allMatch(p -> p.leader() != null && p.leader().id() == 1);
                } catch (Exception e) {
                    return false;
                }
            });
            int n = Tiered.consumeAllAndCheck(c.bootstrap(1), topic, 3, 0, 600, Duration.ofSeconds(120));
            say("(h) level 0 shared with a stock broker: %s created by stock TBRLMM (cleanup.policy=delete); "
                    + "%d keyed records (plugin) and %d null-key records (stock), all version 0, all read by Kafka's "
                    + "serde, no tombstone, no level record (retention deletions included); plugins at level 0; "
                    + "the stock broker alone served %d records from offset 0", MetaTopic.NAME, keyed, nullKeys, n);
        }
    }
}
