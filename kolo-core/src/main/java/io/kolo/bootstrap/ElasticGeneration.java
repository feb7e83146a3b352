package io.kolo.bootstrap;

import io.kolo.Topology;
import io.kolo.launch.JobSecret;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;

/**
 * How the launcher of an elastic job ({@code kolo run --min-np}) and its workers agree on each of its successive jobs
 * (generations) through the one rendezvous store the launcher serves for its whole life:
 * <ul>
 *   <li>{@value #LATEST}: the newest generation, written last, once its assignments are all in place;</li>
 *   <li>{@code elastic/<g>/worker/<id>}: worker {@code id}'s place in generation {@code g} (an {@link Assignment});
 *       a worker without one is no longer part of the job;</li>
 *   <li>{@code elastic/<g>/why}: what started generation {@code g} (a failure, hosts added or removed);</li>
 *   <li>every key a job of ranks uses ({@code addr/<rank>}, {@code failure}, ...) under {@code g<g>/}
 *       ({@link #scope}), and each generation's data connections prove a secret derived for it ({@link #secret}),
 *       so that one generation's leftovers (a half-built mesh, a dead rank's segment) never meet the next.</li>
 * </ul>
 */
public final class ElasticGeneration {
    /** The newest generation's number. */
    public static final String LATEST = "elastic/generation";
    /** Set once a worker has finished: the launcher publishes no generation after that, and says here why. */
    public static final String FINISHED = "elastic/finished";

    private ElasticGeneration() {
    }

    /** Where worker {@code worker}'s place in generation {@code generation} is published. */
    public static String assignmentKey(int generation, String worker) {
        return "elastic/" + generation + "/worker/" + worker;
    }

    /** Where the reason for generation {@code generation} is published. */
    public static String reasonKey(int generation) {
        return "elastic/" + generation + "/why";
    }

    /** The generation the environment names ({@code KOLO_ELASTIC_GENERATION}), if any. */
    public static Optional<Integer> of(Map<String, String> env) {
        return KoloSettings.ELASTIC_GENERATION.ifSet(env);
    }

    /**
     * Generation {@code generation}'s view of {@code store}: its keys, nobody else's; a wait in it ends with a {@link
     * GenerationReplacedException} once the launcher has published a newer generation.
     */
    public static KeyValueStore scope(KeyValueStore store, int generation) {
        return new GenerationStore(store, generation);
    }

    /** The secret generation {@code generation}'s data connections (and shared-memory segment names) use. */
    public static JobSecret secret(JobSecret jobSecret, int generation) {
        byte[] derived = jobSecret.mac(("kolo elastic generation " + generation).getBytes(StandardCharsets.UTF_8));
        return JobSecret.fromHex(HexFormat.of().formatHex(derived));
    }

    /**
     * One worker's place in one generation, the values of the {@code KOLO_*} placement variables.
     *
     * @param host the host name the launcher knows the worker's host by
     */
    public record Assignment(Topology topology, String host) {
        /** As stored: the topology's six numbers and the host, separated by spaces. */
        public String encode() {
            return topology.rank() + " " + topology.size() + " " + topology.localRank() + " " + topology.localSize()
                    + " " + topology.crossRank() + " " + topology.crossSize() + " " + host;
        }

        /** @throws IllegalArgumentException naming the value when it is not seven fields */
        public static Assignment parse(String value) {
            String[] f = value.strip().split(" ");
            if (f.length != 7) {
                throw new IllegalArgumentException("malformed elastic assignment '" + value + "'");
            }
            return new Assignment(new Topology(Integer.parseInt(f[0]), Integer.parseInt(f[1]),
                    Integer.parseInt(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4]), Integer.parseInt(f[5])),
                    f[6]);
        }

        /** {@code env} with this assignment's placement variables and {@code generation}. */
        public Map<String, String> applyTo(Map<String, String> env, int generation) {
            return RankVariables.of(topology, host).generation(generation).over(env);
        }
    }
}
