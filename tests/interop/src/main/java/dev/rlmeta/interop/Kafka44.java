package dev.rlmeta.interop;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.serialization.BytesApiMessageSerde;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;

/** Shared helpers: Kafka 4.4.0's serdes, hex, error descriptions and JSON file I/O. */
final class Kafka44 {
    private Kafka44() {}

    static final String KAFKA = "org.apache.kafka:kafka-storage:4.4.0, org.apache.kafka:kafka-storage-api:4.4.0,"
            + " org.apache.kafka:kafka-server-common:4.4.0, org.apache.kafka:kafka-clients:4.4.0";

    /** Kafka's object-level serde (RemoteLogMetadata objects <-> value bytes). */
    static final RemoteLogMetadataSerde SERDE = new RemoteLogMetadataSerde();

    /** Exposes RemoteLogMetadataSerde.newApiMessage, the api-key -> generated-record factory. */
    private static final class Factory extends RemoteLogMetadataSerde {
        ApiMessage make(short apiKey) {
            return newApiMessage(apiKey);
        }
    }

    private static final Factory FACTORY = new Factory();

    /**
     * The wire-level serde, built the way RemoteLogMetadataSerde builds its own private one
     * (a BytesApiMessageSerde whose apiMessageFor is RemoteLogMetadataSerde.newApiMessage).
     */
    static final BytesApiMessageSerde WIRE = new BytesApiMessageSerde() {
        @Override
        public ApiMessage apiMessageFor(short apiKey) {
            return FACTORY.make(apiKey);
        }
    };

    static ApiMessageAndVersion readWire(byte[] value) {
        return WIRE.deserialize(value);
    }

    static byte[] writeWire(ApiMessage message, short version) {
        return WIRE.serialize(new ApiMessageAndVersion(message, version));
    }

    static final HexFormat HEX = HexFormat.of();

    static String hex(byte[] b) {
        return HEX.formatHex(b);
    }

    static byte[] unhex(String s) {
        return HEX.parseHex(s);
    }

    static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) n += p.length;
        byte[] out = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    /** Kafka's unsigned varint (LEB128), written here only to build malformed inputs. */
    static byte[] uvarint(long v) {
        byte[] tmp = new byte[10];
        int n = 0;
        while ((v & ~0x7FL) != 0) {
            tmp[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        tmp[n++] = (byte) v;
        byte[] out = new byte[n];
        System.arraycopy(tmp, 0, out, 0, n);
        return out;
    }

    static List<String> causes(Throwable t) {
        List<String> out = new ArrayList<>();
        for (Throwable c = t.getCause(); c != null && c != t; c = c.getCause()) {
            out.add(c.toString());
            if (out.size() > 20) break;
        }
        return out;
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder(t.toString());
        for (String c : causes(t)) sb.append(" <- ").append(c);
        return sb.toString();
    }

    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    static JsonNode readJson(Path p) throws IOException {
        return JSON.readTree(p.toFile());
    }

    /** Writes {"source": ..., "cases": [...]} with one compact case per line. */
    static void writeVectorFile(Path path, String source, List<ObjectNode> cases) throws IOException {
        ObjectMapper m = JSON.copy();
        m.getFactory().disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        try (Writer w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            w.write("{\n  \"source\": ");
            w.write(m.writeValueAsString(source));
            w.write(",\n  \"cases\": [\n");
            for (int i = 0; i < cases.size(); i++) {
                w.write("    ");
                w.write(m.writeValueAsString(cases.get(i)));
                w.write(i + 1 < cases.size() ? ",\n" : "\n");
            }
            w.write("  ]\n}\n");
        }
    }

    static ArrayNode strings(List<String> xs) {
        ArrayNode a = NODES.arrayNode();
        xs.forEach(a::add);
        return a;
    }
}
