package io.kolo.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every object {@code kolo k8s submit --dry-run} prints is checked against a schema: the MPIJob against the MPI
 * Operator's own CRD (its OpenAPI v3 schema, made strict: a field the schema does not know is an error, where the API
 * server would silently drop it), the core objects by reading them into fabric8's typed model of the Kubernetes API
 * with no field left over.
 */
class SchemaTest {
    /** The checkout's ../shared, seen from this module's directory (where the tests run). */
    static final Path CRD = Path.of("..", "..", "shared", "k8s", "kubeflow.org_mpijobs.yaml");
    /** The Kubeflow training operator v1.9.0's MPIJob CRD ({@code kubeflow.org/v1}), beside it. */
    static final Path V1_CRD = Path.of("..", "..", "shared", "k8s", "kubeflow.org_v1_mpijobs.yaml");
    static final ObjectMapper YAML = new YAMLMapper();

    static List<JsonNode> dryRun(String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "train", "--image", "registry.example.com/train:1.0",
                "--workers", "3", "--slots", "2", "--cpu", "4", "--memory", "16Gi", "--gpu", "2", "--limit-cpu", "8",
                "--env", "EPOCHS=3", "--backoff-limit", "1", "--active-deadline", "7200", "--ttl-after-finished",
                "600", "--dry-run"));
        args.addAll(List.of(extra));
        args.addAll(List.of("--", "-cp", "/app/app.jar", "com.example.Train"));
        CliRun r = CliRun.run(null, args.toArray(String[]::new));
        assertEquals(0, r.code(), r.toString());
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = new YAMLFactory().createParser(r.out())) {
            YAML.readValues(parser, JsonNode.class).forEachRemaining(docs::add);
        }
        return docs;
    }

    static JsonSchema mpiJobSchema() throws Exception {
        return mpiJobSchema(CRD);
    }

    /** The strict schema of the CRD's first version; the test is skipped, saying so, where the file is missing. */
    static JsonSchema mpiJobSchema(Path crd) throws Exception {
        if (!Files.isReadable(crd)) {
            System.out.println("SKIPPED MPIJob schema validation: no ../shared/k8s/" + crd.getFileName()
                    + " beside the checkout");
        }
        Assumptions.assumeTrue(Files.isReadable(crd), "no ../shared/k8s/" + crd.getFileName());
        JsonNode schema = YAML.readTree(crd.toFile()).at("/spec/versions/0/schema/openAPIV3Schema");
        strict(schema);
        return JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V4).getSchema(schema);
    }

    /** An object schema that lists its properties allows no others (unless it says it keeps unknown fields). */
    static void strict(JsonNode node) {
        if (node instanceof ObjectNode o) {
            if (o.has("properties") && !o.has("additionalProperties")
                    && !o.path("x-kubernetes-preserve-unknown-fields").asBoolean(false)) {
                o.put("additionalProperties", false);
            }
            o.forEach(SchemaTest::strict);
        } else if (node != null && node.isArray()) {
            node.forEach(SchemaTest::strict);
        }
    }

    @Test
    void theMpiJobIsValidAgainstTheMpiOperatorsCrd() throws Exception {
        JsonSchema schema = mpiJobSchema();
        List<JsonNode> docs = dryRun("--mode", "mpijob");
        assertEquals(1, docs.size());
        JsonNode mpi = docs.getFirst();
        assertEquals("MPIJob", mpi.path("kind").asText());
        Set<ValidationMessage> errors = schema.validate(mpi);
        assertEquals(Set.of(), errors);
        assertEquals("WaitForWorkersReady", mpi.at("/spec/launcherCreationPolicy").asText());
        assertEquals(2, mpi.at("/spec/slotsPerWorker").asInt());
        assertEquals(3, mpi.at("/spec/mpiReplicaSpecs/Worker/replicas").asInt());

        // The check can fail: a misspelt field, and a wrong type, are both caught.
        ObjectNode typo = mpi.deepCopy();
        ((ObjectNode) typo.get("spec")).put("slotPerWorker", 2);
        assertFalse(schema.validate(typo).isEmpty(), "a misspelt field must not validate");
        ObjectNode wrongType = mpi.deepCopy();
        ((ObjectNode) wrongType.at("/spec/mpiReplicaSpecs/Worker")).put("replicas", "three");
        assertFalse(schema.validate(wrongType).isEmpty(), "a string for replicas must not validate");
    }

    @Test
    void theOperatorFreeObjectsReadIntoTheTypedKubernetesModelWithNothingLeftOver() throws Exception {
        List<JsonNode> docs = dryRun();
        Map<String, Class<? extends KubernetesResource>> kinds = Map.of("Secret", Secret.class, "Service",
                Service.class, "Job", Job.class);
        assertEquals(List.of("Secret", "Service", "Job"), docs.stream().map(d -> d.path("kind").asText()).toList());
        for (JsonNode doc : docs) {
            KubernetesResource typed = Serialization.unmarshal(doc.toString(), kinds.get(doc.path("kind").asText()));
            List<String> unknown = new ArrayList<>();
            leftOver(typed, doc.path("kind").asText(), unknown, new IdentityHashMap<>());
            assertEquals(List.of(), unknown, "fields the Kubernetes API does not have");
            // Nothing lost either: the typed object writes back the same document.
            assertEquals(doc, YAML.readTree(Serialization.asJson(typed)));
        }
        // The check can fail: an unknown field is found.
        Job bad = Serialization.unmarshal(((ObjectNode) docs.get(2).deepCopy()).put("specs", 1).toString(), Job.class);
        List<String> unknown = new ArrayList<>();
        leftOver(bad, "Job", unknown, new IdentityHashMap<>());
        assertEquals(List.of("Job.specs"), unknown);
    }

    /** Every field fabric8 kept aside as unknown ({@code additionalProperties}), anywhere in the object. */
    static void leftOver(Object o, String path, List<String> unknown, IdentityHashMap<Object, Boolean> seen)
            throws Exception {
        if (o == null || seen.put(o, true) != null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                leftOver(e, path + "[" + i++ + "]", unknown, seen);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                leftOver(e.getValue(), path + "." + e.getKey(), unknown, seen);
            }
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method m : o.getClass().getMethods()) {
            if (m.getParameterCount() != 0 || !m.getName().startsWith("get") || m.getName().equals("getClass")) {
                continue;
            }
            Object v = m.invoke(o);
            if (m.getName().equals("getAdditionalProperties")) {
                ((Map<?, ?>) v).keySet().forEach(k -> unknown.add(path + "." + k));
            } else {
                leftOver(v, path + "." + m.getName().substring(3), unknown, seen);
            }
        }
    }

    /** Kubernetes expands $(VAR) only from variables listed before it, so --env keeps the order given. */
    @Test
    void envVariablesKeepTheOrderGivenSoOneMayReferToAnEarlierOne() throws Exception {
        List<String> names = List.of("DATA", "CKPT", "ZETA", "ALPHA", "B", "OUT", "MID", "A1");
        List<String> args = new ArrayList<>();
        for (String n : names) {
            args.addAll(List.of("--env", n + "=$(DATA)/" + n));
        }
        List<JsonNode> docs = dryRun(args.toArray(String[]::new));
        List<String> inJob = new ArrayList<>();
        docs.get(2).at("/spec/template/spec/containers/0/env").forEach(e -> inJob.add(e.get("name").asText()));
        List<String> expected = new ArrayList<>(List.of("KOLO_SECRET", "EPOCHS"));
        expected.addAll(names);
        assertEquals(expected, inJob);
        List<String> inLauncher = new ArrayList<>();
        dryRun(withMode(args)).getFirst().at("/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0/env")
                .forEach(e -> inLauncher.add(e.get("name").asText()));
        assertEquals(expected.subList(1, expected.size()), inLauncher);
    }

    private static String[] withMode(List<String> args) {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of("--mode", "mpijob"));
        return all.toArray(String[]::new);
    }

    @Test
    void theObjectsCarryTheSecretAStableNameForPodsNotReadyYetAndAnIndexedJob() throws Exception {
        List<JsonNode> docs = dryRun();
        assertTrue(docs.get(0).at("/stringData/secret").asText().matches("[0-9a-f]{64}"));
        assertTrue(docs.get(1).at("/spec/publishNotReadyAddresses").asBoolean());
        assertEquals("Indexed", docs.get(2).at("/spec/completionMode").asText());
    }
}
