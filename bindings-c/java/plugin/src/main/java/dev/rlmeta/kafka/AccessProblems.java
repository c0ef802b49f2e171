package dev.rlmeta.kafka;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the cluster refuses the plugin's clients, said once: each problem (a denied operation on
 * a resource, an authentication failure, any other failure of one step) is logged at WARN the
 * first time it happens, naming the operation, the resource and the principal the clients run
 * as; while it lasts, repeats are counted, not logged; once the step succeeds again one INFO line
 * says so (with the count), and a later recurrence is logged again.
 */
final class AccessProblems {
    private static final Logger log = LoggerFactory.getLogger(AccessProblems.class);
    private static final Pattern JAAS_USER = Pattern.compile("username\\s*=\\s*\"([^\"]*)\"");

    private final String principal;
    private final Map<String, long[]> open = new ConcurrentHashMap<>(); // step -> {repeats}
    private final Map<String, String> messages = new ConcurrentHashMap<>();
    private final Map<String, String> kinds = new ConcurrentHashMap<>();

    AccessProblems(Map<String, ?> clientProps) {
        this.principal = principal(clientProps);
    }

    /** How the cluster will know the clients: "User:NAME (how)", from the client settings. */
    String principal() { return principal; }

    static String principal(Map<String, ?> p) {
        String protocol = str(p.get("security.protocol"), "PLAINTEXT").toUpperCase(java.util.Locale.ROOT);
        if (protocol.startsWith("SASL")) {
            String mechanism = str(p.get("sasl.mechanism"), "GSSAPI");
            Matcher m = JAAS_USER.matcher(str(p.get("sasl.jaas.config"), ""));
            return "User:" + (m.find() ? m.group(1) : "?") + " (" + protocol + ", " + mechanism + ")";
        }
        if (protocol.equals("SSL")) {
            String dn = certificateSubject(p);
            return dn == null ? "User:ANONYMOUS (SSL without a client certificate)"
                    : "User:" + dn + " (SSL client certificate, before the broker's ssl.principal.mapping.rules)";
        }
        return "User:ANONYMOUS (" + protocol + ")";
    }

    private static String certificateSubject(Map<String, ?> p) {
        Object location = p.get("ssl.keystore.location");
        if (location == null || location.toString().isBlank()) {
            return null;
        }
        try (InputStream in = Files.newInputStream(Path.of(location.toString()))) {
            KeyStore ks = KeyStore.getInstance(str(p.get("ssl.keystore.type"), "JKS"));
            Object pw = p.get("ssl.keystore.password");
            ks.load(in, pw == null ? null : secret(pw).toCharArray());
            for (Enumeration<String> e = ks.aliases(); e.hasMoreElements(); ) {
                String alias = e.nextElement();
                if (ks.isKeyEntry(alias) && ks.getCertificate(alias) instanceof X509Certificate) {
                    return ((X509Certificate) ks.getCertificate(alias)).getSubjectX500Principal().getName();
                }
            }
        } catch (Exception e) {
            return "? (keystore " + location + " unreadable: " + e.getClass().getSimpleName() + ")";
        }
        return null;
    }

    private static String secret(Object o) {
        return o instanceof org.apache.kafka.common.config.types.Password
                ? ((org.apache.kafka.common.config.types.Password) o).value() : o.toString();
    }

    private static String str(Object o, String dflt) {
        return o == null || o.toString().isBlank() ? dflt : o.toString();
    }

    /** The root cause a client reports (futures wrap it). */
    static Throwable cause(Throwable t) {
        Throwable c = t;
        while ((c instanceof java.util.concurrent.ExecutionException
                || c instanceof java.util.concurrent.CompletionException
                || (c instanceof org.apache.kafka.common.KafkaException && !(c instanceof AuthorizationException)
                        && !(c instanceof AuthenticationException) && c.getCause() != null
                        && c.getClass() == org.apache.kafka.common.KafkaException.class))
                && c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    static boolean isAccess(Throwable t) {
        Throwable c = cause(t);
        return c instanceof AuthorizationException || c instanceof AuthenticationException;
    }

    /** The sentence for a failure of `operation` on `resource` (e.g. "Write", "Topic:__remote_log_metadata"). */
    String describe(Throwable t, String operation, String resource) {
        Throwable c = cause(t);
        if (c instanceof AuthenticationException) {
            return "authentication of " + principal + " failed (" + c.getClass().getSimpleName() + ": "
                    + c.getMessage() + "); check the credentials in remote.log.metadata.common.client.* "
                    + "(or the broker's SCRAM credentials / trusted certificates for this principal)";
        }
        if (c instanceof AuthorizationException) {
            String also = c instanceof ClusterAuthorizationException
                    ? " (Kafka refused a cluster-level request; for the idempotent producer's id, Write on any "
                    + "topic or IdempotentWrite on the cluster is needed)" : "";
            return "missing permission: " + operation + " on " + resource + " for " + principal + also
                    + " (" + c.getClass().getSimpleName() + ": " + c.getMessage() + "); grant it with "
                    + "kafka-acls --add --allow-principal " + principal.split(" ")[0] + " --operation "
                    + operation + " --topic " + resource.replaceFirst("^Topic:", "");
        }
        return operation + " on " + resource + " failed for " + principal + ": " + c;
    }

    /** Logs the problem of `step` once (WARN) while it lasts; returns the sentence. */
    String report(String step, Throwable t, String operation, String resource) {
        return report(step, t, operation, resource, null);
    }

    /**
     * As {@link #report(String, Throwable, String, String)}; a refused permission the plugin can do
     * without (`optional` says what it costs) is logged once at INFO instead.
     */
    String report(String step, Throwable t, String operation, String resource, String optional) {
        String msg = describe(t, operation, resource);
        if (optional != null && cause(t) instanceof AuthorizationException) {
            msg = msg + "; " + optional;
        }
        long[] n = open.computeIfAbsent(step, k -> new long[1]);
        messages.put(step, msg);
        // once per kind of problem while it lasts (the client's wording may vary between attempts)
        Throwable c = cause(t);
        String kind = c instanceof AuthenticationException ? "authentication"
                : c instanceof AuthorizationException ? "authorization" : c.getClass().getName();
        String kindBefore = kinds.put(step, kind);
        synchronized (n) {
            n[0]++;
            if (n[0] == 1 || !kind.equals(kindBefore)) {
                if (optional != null && cause(t) instanceof AuthorizationException) {
                    log.info("rlmeta RLMM: {}: {} (logged once; retrying)", step, msg);
                } else {
                    log.warn("rlmeta RLMM: {}: {} (logged once; retrying)", step, msg);
                }
            } else if (log.isDebugEnabled()) {
                log.debug("rlmeta RLMM: {}: still failing ({} times): {}", step, n[0], msg);
            }
        }
        return msg;
    }

    /** The step succeeded: an open problem of it is over (one INFO line). */
    void resolved(String step) {
        long[] n = open.remove(step);
        String msg = messages.remove(step);
        kinds.remove(step);
        if (n != null) {
            log.info("rlmeta RLMM: {}: works again after {} failed attempt(s) (was: {})", step, n[0], msg);
        }
    }

    /** The steps failing now and their sentences (for the dump and tests). */
    Map<String, String> open() { return Collections.unmodifiableMap(messages); }

    /** How many times each step failing now has failed in a row. */
    Map<String, Long> attempts() {
        Map<String, Long> out = new java.util.TreeMap<>();
        open.forEach((k, v) -> {
            synchronized (v) {
                out.put(k, v[0]);
            }
        });
        return out;
    }
}
