package dev.rlmeta.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentId;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate;
import org.apache.kafka.server.log.remote.storage.RemoteLogSegmentState;
import org.apache.kafka.server.log.remote.storage.RetriableRemoteStorageException;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import dev.rlmeta.kafka.RlmetaRemoteLogMetadataManager;

/**
 * The plugin on a secured Kafka 4.4.0 (SecureKafka: SASL_SSL SCRAM-SHA-512 and mTLS listeners,
 * StandardAuthorizer, allow.everyone.if.no.acl.found=false) under least privilege: its principals
 * hold only Describe, Create, Write and Read on __remote_log_metadata (LITERAL), nothing on user
 * topics, nothing on the cluster.
 *
 * <ol>
 * <li>The broker's own plugin (SASL_SSL, by remote.log.metadata.manager.listener.name plus
 *     rlmm.config.remote.log.metadata.common.client.* SASL/SSL settings) starts with no ACL: it
 *     names the missing Describe once; with Describe, Create and Read it creates the topic and
 *     names the missing Write (its level records) once; with Write it initializes without a
 *     restart, tiers a topic, which reads back from offset 0, and deletes by retention.</li>
 * <li>A plugin instance (mTLS, by common.client.* prefixes, PKCS12 keystore, JKS truststore)
 *     with Describe and Read but no Write: ready (reads are allowed), a copy with no known leader
 *     epoch refused retriably, copies refused retriably naming the missing Write once; granted
 *     Write, the same copy goes through and is read back.</li>
 * <li>Wrong password: the authentication error named as such, once; not ready; the credential
 *     fixed on the cluster, the plugin starts without a restart.</li>
 * </ol>
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SecurePluginTest {
    static final String META = MetaTopic.NAME;
    static final String TOPIC = "sec-t";
    static final String RLMM = "rlmm";
    static final String RLMM_PASSWORD = "rlmm-secret";
    static final String MTLS_CN = "rlmm-mtls";
    static final String PW_USER = "rlmm-pw";
    static SecureKafka kafka;
    static Admin admin;
    static final List<String> captured = Collections.synchronizedList(new ArrayList<>());
    static CaptureAppender appender;
    static int passed;

    /** The plugin's log lines in this JVM ("LEVEL message"). */
    static final class CaptureAppender extends AbstractAppender {
        CaptureAppender() {
            super("rlmeta-capture", null, null, true, Property.EMPTY_ARRAY);
        }

        @Override
        public void append(LogEvent e) {
            captured.add(e.getLevel() + " " + e.getMessage().getFormattedMessage());
        }
    }

    @BeforeAll
    static void start() throws Exception {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration cfg = ctx.getConfiguration();
        appender = new CaptureAppender();
        appender.start();
        cfg.addAppender(appender);
        LoggerConfig lc = new LoggerConfig("dev.rlmeta", Level.INFO, false);
        lc.addAppender(appender, Level.INFO, null);
        cfg.addLogger("dev.rlmeta", lc);
        ctx.updateLoggers();

        Map<String, String> rlmm = new HashMap<>();
        rlmm.put("remote.log.metadata.manager.listener.name", "SECURE");
        String p = "rlmm.config.remote.log.metadata.common.client.";
        rlmm.put(p + "sasl.mechanism", "SCRAM-SHA-512");
        rlmm.put(p + "sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                + RLMM + "\" password=\"" + RLMM_PASSWORD + "\";");
        Map<String, String> users = Map.of(RLMM, RLMM_PASSWORD, PW_USER, "right-password");
        kafka = new SecureKafka("secure", users, rlmm);
        kafka.identity(MTLS_CN);
        rlmm.put(p + "ssl.truststore.location", kafka.truststore().toString());
        rlmm.put(p + "ssl.truststore.type", "JKS");
        rlmm.put(p + "ssl.truststore.password", SecureKafka.PASSWORD);
        kafka.start();
        admin = kafka.admin();
    }

    @AfterAll
    static void stop() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (kafka != null) {
            kafka.close();
        }
        System.out.printf("secure-test: %d passed%n", passed);
    }

    static void grant(String principal, AclOperation... ops) throws Exception {
        List<AclBinding> acls = new ArrayList<>();
        for (AclOperation op : ops) {
            acls.add(new AclBinding(new ResourcePattern(ResourceType.TOPIC, META, PatternType.LITERAL),
                    new AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW)));
        }
        admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
        System.out.printf("[secure] granted %s %s on Topic:%s (LITERAL)%n", principal, List.of(ops), META);
    }

    static Set<String> aclsOf(String principal) throws Exception {
        Set<String> out = new TreeSet<>();
        for (AclBinding b : admin.describeAcls(new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter(principal, null, AclOperation.ANY, AclPermissionType.ANY))).values()
                .get(30, TimeUnit.SECONDS)) {
            out.add(b.entry().operation() + " " + b.entry().permissionType() + " " + b.pattern().resourceType() + ":"
                    + b.pattern().name() + " " + b.pattern().patternType());
        }
        return out;
    }

    /** The broker log's WARN lines that contain `text`. */
    static List<String> warnings(String text) {
        return kafka.logLines(text).stream().filter(l -> l.contains("] WARN ")).toList();
    }

    static long captureCount(String level, String text) {
        synchronized (captured) {
            return captured.stream().filter(l -> l.startsWith(level + " ") && l.contains(text)).count();
        }
    }

    static Map<String, Object> pluginConfig(Map<String, Object> client, String name) throws Exception {
        Map<String, Object> c = new HashMap<>();
        client.forEach((k, v) -> c.put("remote.log.metadata.common.client." + k, v));
        Path dir = Files.createDirectories(kafka.work().resolve("rlmm-" + name));
        c.put("broker.id", "201");
        c.put("node.id", "201");
        c.put("log.dir", dir.toString());
        c.put("remote.log.metadata.topic.num.partitions", "3");
        c.put("remote.log.metadata.topic.replication.factor", "1");
        c.put("remote.log.metadata.topic.min.isr", "1");
        c.put("remote.log.metadata.consume.wait.ms", "20000");
        c.put(RlmetaRemoteLogMetadataManager.POLICY_REFRESH_MS, "1000");
        return c;
    }

    static RemoteLogSegmentMetadata copyStarted(TopicIdPartition tp, Uuid id, long start, long end, int dataEpoch) {
        return new RemoteLogSegmentMetadata(new RemoteLogSegmentId(tp, id), start, end, 1_700_000_000_000L, 201,
                System.currentTimeMillis(), 4096, Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_STARTED,
                Map.of(dataEpoch, start));
    }

    static Throwable failure(CompletableFuture<Void> f) throws Exception {
        try {
            f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        return null;
    }

    @Test
    @Order(1)
    void brokerPluginStartsOnceGrantedAndTiersUnderLeastPrivilege() throws Exception {
        String principal = "User:" + RLMM;
        // no ACL at all: Describe on the metadata topic is named, once
        String noDescribe = "missing permission: Describe on Topic:" + META + " for " + principal;
        KafkaCluster.await("the plugin naming the missing Describe", Duration.ofSeconds(90),
                () -> !kafka.logLines(noDescribe).isEmpty());
        grant(principal, AclOperation.DESCRIBE, AclOperation.CREATE, AclOperation.READ);
        // it creates the topic, and its level records need Write: named, once
        String noWrite = "missing permission: Write on Topic:" + META + " for " + principal;
        KafkaCluster.await("the plugin naming the missing Write", Duration.ofSeconds(90),
                () -> !kafka.logLines(noWrite).isEmpty());
        assertTrue(kafka.isAlive(), "the broker stopped while the plugin lacked permissions");
        // the broker serves what it can meanwhile: an ordinary topic
        Uuid plainId = Tiered.create(admin, "sec-plain", 1, 1, Map.of());
        Tiered.produce(kafka.adminClient(), "sec-plain", 1, 0, 20);
        assertEquals(20, Tiered.consumeAllAndCheck(kafka.adminClient(), "sec-plain", 1, 0, 20, Duration.ofSeconds(60)));
        grant(principal, AclOperation.WRITE);
        KafkaCluster.await("the plugin initialized without a restart", Duration.ofSeconds(90),
                () -> !kafka.logLines("rlmeta RLMM initialized on broker").isEmpty());
        assertEquals(1, warnings(noDescribe).size(), "the missing Describe not logged exactly once at WARN: "
                + kafka.logLines(noDescribe));
        assertEquals(1, warnings(noWrite).size(), "the missing Write not logged exactly once at WARN: "
                + kafka.logLines(noWrite));
        assertFalse(kafka.logLines("works again after").isEmpty(), "no line says the steps work again");
        System.out.printf("[secure] broker plugin as %s: missing Describe named %d time(s), missing Write %d time(s) "
                + "(WARN), initialized once granted, no restart (plain topic %s served meanwhile)%n", principal,
                warnings(noDescribe).size(), warnings(noWrite).size(), plainId);

        // tiering under exactly Describe, Create, Write, Read on the metadata topic
        assertEquals(Set.of("CREATE ALLOW TOPIC:" + META + " LITERAL", "DESCRIBE ALLOW TOPIC:" + META + " LITERAL",
                "READ ALLOW TOPIC:" + META + " LITERAL", "WRITE ALLOW TOPIC:" + META + " LITERAL"), aclsOf(principal));
        Tiered.create(admin, TOPIC, 1, 1, Tiered.topicConfigs());
        int n = 200;
        Tiered.produce(kafka.adminClient(), TOPIC, 1, 0, n);
        KafkaCluster.await(TOPIC + " tiered", Duration.ofSeconds(120), () -> {
            try (Admin a = kafka.admin()) {
                long copies = kafka.journal().stream().filter(l -> l.startsWith("COPY ") && l.contains(":" + TOPIC + "-0 "))
                        .count();
                return copies >= 3 && Tiered.offsets(a, TOPIC, 1, OffsetSpec.earliestLocal()).get(
                        new org.apache.kafka.common.TopicPartition(TOPIC, 0)) > 0;
            } catch (Exception e) {
                return false;
            }
        });
        assertEquals(n, Tiered.consumeAllAndCheck(kafka.adminClient(), TOPIC, 1, 0, n, Duration.ofSeconds(90)));
        List<MetaTopic.Rec> recs = MetaTopic.read(kafka.adminClient());
        Set<Integer> keyEpochs = new TreeSet<>();
        recs.stream().filter(r -> r.key() != null && !r.levelRecord()).forEach(r -> keyEpochs.add(r.keyEpoch()));
        assertEquals(Set.of(0), keyEpochs, "the keys of " + TOPIC + "'s uploads carry its leader epoch 0");
        System.out.printf("[secure] %d records tiered (%d uploads) and read back from offset 0; keys carry leader epoch %s%n",
                n, kafka.journal().stream().filter(l -> l.startsWith("COPY ")).count(), keyEpochs);
        // retention deletes from remote storage under the same ACLs
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, TOPIC);
        admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("retention.bytes", "20000"),
                AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        KafkaCluster.await("retention deleting uploads", Duration.ofSeconds(90),
                () -> kafka.journal().stream().anyMatch(l -> l.startsWith("DELETE ") && l.contains(":" + TOPIC + "-0 ")));
        KafkaCluster.await("a DELETE_SEGMENT_FINISHED in the metadata topic", Duration.ofSeconds(60),
                () -> MetaTopic.read(kafka.adminClient()).stream().anyMatch(x -> x.state() == 3));
        assertTrue(kafka.isAlive());
        assertEquals(List.of(), kafka.logLines(" ERROR ").stream().filter(l -> l.contains("rlmeta")).toList(),
                "the plugin logged errors");
        long deleted = kafka.journal().stream().filter(l -> l.startsWith("DELETE ")).count();
        System.out.printf("[secure] retention deleted %d upload(s); DELETE_SEGMENT_FINISHED written; ACLs of %s: %s%n",
                deleted, principal, aclsOf(principal));
        passed++;
    }

    @Test
    @Order(2)
    void missingWriteFailsCopiesRetriablyOnceThenGrantedGoesThrough() throws Exception {
        String principal = "User:CN=" + MTLS_CN;
        grant(principal, AclOperation.DESCRIBE, AclOperation.READ);
        TopicIdPartition tp = new TopicIdPartition(Uuid.randomUuid(), 0, "sec-fake");
        RlmetaRemoteLogMetadataManager rlmm = new RlmetaRemoteLogMetadataManager();
        try {
            rlmm.configure(pluginConfig(kafka.mtlsClient(MTLS_CN), "mtls"));
            rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of());
            KafkaCluster.await(tp + " ready (Read and Describe are enough to read)", Duration.ofSeconds(90),
                    () -> rlmm.isReady(tp));
            Uuid seg = Uuid.randomUuid();
            // no leader epoch known yet (Kafka has not used one with this manager): refused, retriably
            Throwable unknown = failure(rlmm.addRemoteLogSegmentMetadata(copyStarted(tp, seg, 0, 99, 3)));
            assertInstanceOf(RetriableRemoteStorageException.class, unknown);
            assertTrue(unknown.getMessage().contains("leader epoch"), unknown.getMessage());
            // as a new leader's copy task does before copying: the newest epoch of its cache
            assertEquals(Optional.empty(), rlmm.highestOffsetForEpoch(tp, 3));
            assertEquals(3, rlmm.knownLeaderEpoch(tp));
            String noWrite = "missing permission: Write on Topic:" + META + " for " + principal;
            int attempts = 3;
            for (int i = 0; i < attempts; i++) {
                Throwable t = failure(rlmm.addRemoteLogSegmentMetadata(copyStarted(tp, seg, 0, 99, 3)));
                assertInstanceOf(RetriableRemoteStorageException.class, t, "attempt " + i + ": " + t);
                assertTrue(rlmm.isReady(tp), "reads still work");
            }
            assertEquals(1, captureCount("WARN", noWrite), "the missing Write not logged exactly once over "
                    + attempts + " copies: " + captured);
            grant(principal, AclOperation.WRITE);
            long t0 = System.nanoTime();
            Throwable last = null;
            boolean done = false;
            while (!done && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(60)) {
                last = failure(rlmm.addRemoteLogSegmentMetadata(copyStarted(tp, seg, 0, 99, 3)));
                done = last == null;
                if (!done) {
                    assertInstanceOf(RetriableRemoteStorageException.class, last);
                    Thread.sleep(500);
                }
            }
            assertTrue(done, "the copy never went through once Write was granted: " + last);
            rlmm.updateRemoteLogSegmentMetadata(new RemoteLogSegmentMetadataUpdate(new RemoteLogSegmentId(tp, seg),
                    System.currentTimeMillis(), Optional.empty(), RemoteLogSegmentState.COPY_SEGMENT_FINISHED, 201))
                    .get(30, TimeUnit.SECONDS);
            RemoteLogSegmentMetadata got = rlmm.remoteLogSegmentMetadata(tp, 3, 50).orElseThrow();
            assertEquals(RemoteLogSegmentState.COPY_SEGMENT_FINISHED, got.state());
            assertEquals(1, captureCount("WARN", noWrite), "the missing Write logged again");
            assertTrue(captureCount("INFO", "works again after") >= 1, "no line says writing works again");
            // what is left: at most the optional DescribeConfigs (this principal was not granted it)
            assertEquals(Set.of(), rlmm.accessProblems().keySet().stream().filter(k -> !k.contains("cleanup.policy"))
                    .collect(java.util.stream.Collectors.toSet()), "problems left: " + rlmm.accessProblems());
            assertEquals(0, captureCount("WARN", "DescribeConfigs"), "the optional DescribeConfigs logged at WARN");
            List<MetaTopic.Rec> mine = MetaTopic.read(kafka.adminClient()).stream()
                    .filter(r -> r.key() != null && r.key().startsWith(tp.topicId() + ":")).toList();
            assertTrue(mine.stream().allMatch(r -> r.keyEpoch() == 3), "keys: " + mine);
            System.out.printf("[secure] mTLS %s with Describe+Read: ready; copy with no known epoch refused retriably; "
                    + "%d copies refused retriably, missing Write logged %d time(s); granted Write: the copy went "
                    + "through (key epoch 3) and reads back FINISHED%n", principal, attempts, captureCount("WARN", noWrite));
        } finally {
            rlmm.close();
        }
        passed++;
    }

    @Test
    @Order(3)
    void wrongPasswordIsNamedAsAuthenticationAndRecoversOnceFixed() throws Exception {
        String principal = "User:" + PW_USER;
        grant(principal, AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE);
        TopicIdPartition tp = new TopicIdPartition(Uuid.randomUuid(), 0, "sec-pw");
        RlmetaRemoteLogMetadataManager rlmm = new RlmetaRemoteLogMetadataManager();
        try {
            rlmm.configure(pluginConfig(SecureKafka.scramClient(kafka.secureBootstrap(), kafka.truststore(), PW_USER,
                    "wrong-password"), "pw"));
            rlmm.onPartitionLeadershipChanges(Set.of(tp), Set.of());
            String authFailed = "authentication of " + principal;
            KafkaCluster.await("the authentication error named", Duration.ofSeconds(60),
                    () -> captureCount("WARN", authFailed) > 0);
            // several attempts fail (the start retries with backoff), and the error is still logged once
            KafkaCluster.await("3 failed attempts to start", Duration.ofSeconds(60),
                    () -> rlmm.accessProblemAttempts().values().stream().anyMatch(n -> n >= 3));
            assertEquals(1, captureCount("WARN", authFailed), "the authentication error not logged exactly once: "
                    + rlmm.accessProblemAttempts());
            assertFalse(rlmm.isReady(tp), "ready without being able to read");
            String line = captured.stream().filter(l -> l.contains(authFailed)).findFirst().orElseThrow();
            assertTrue(line.contains("SaslAuthenticationException") || line.contains("AuthenticationException"), line);
            // the cluster now holds the password the plugin uses: it starts, no restart
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(PW_USER,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "wrong-password"))).all()
                    .get(30, TimeUnit.SECONDS);
            KafkaCluster.await(tp + " ready once the credential matches", Duration.ofSeconds(90), () -> rlmm.isReady(tp));
            assertEquals(1, captureCount("WARN", authFailed), "the authentication error logged more than once");
            String recovered = captured.stream().filter(l -> l.contains("works again after") && l.contains(authFailed))
                    .findFirst().orElse(null);
            if (recovered == null) {
                fail("no line says the plugin works again: " + captured);
            }
            System.out.printf("[secure] wrong password for %s: authentication error logged once (WARN), not ready; "
                    + "credential fixed on the cluster: ready without a restart (%s)%n", principal,
                    recovered.replaceAll(".*(works again after \\d+ failed attempt\\(s\\)).*", "$1"));
        } finally {
            rlmm.close();
        }
        passed++;
    }
}
