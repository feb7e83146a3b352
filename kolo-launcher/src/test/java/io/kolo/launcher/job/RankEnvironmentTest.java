package io.kolo.launcher.job;

import io.kolo.launcher.Main;

import io.kolo.Topology;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.RankVariables;
import io.kolo.launch.JobSecret;
import io.kolo.launch.WorkerEnvironment;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RankEnvironmentTest {

    @Test
    void koloVarsForOneRank() throws Exception {
        JobSecret secret = JobSecret.generate();
        Map<String, String> env = RankEnvironment.koloVars(new RankMap.Slot(new Topology(3, 5, 0, 2, 2, 3), "localhost"),
                new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 4242), secret, 90).toMap();
        assertEquals(Map.ofEntries(
                Map.entry("KOLO_RANK", "3"), Map.entry("KOLO_SIZE", "5"),
                Map.entry("KOLO_LOCAL_RANK", "0"), Map.entry("KOLO_LOCAL_SIZE", "2"),
                Map.entry("KOLO_CROSS_RANK", "2"), Map.entry("KOLO_CROSS_SIZE", "3"),
                Map.entry("KOLO_HOSTNAME", "localhost"),
                Map.entry("KOLO_RENDEZVOUS_ADDR", "127.0.0.1"), Map.entry("KOLO_RENDEZVOUS_PORT", "4242"),
                Map.entry("KOLO_RENDEZVOUS_SERVER", "launcher"),
                Map.entry("KOLO_SECRET", secret.toHex()),
                Map.entry("KOLO_START_TIMEOUT_SECONDS", "90")), env);
        assertEquals(RankEnvironment.LAUNCHER_VARS, env.keySet());

        String verbose = RankEnvironment.describe(3, List.of("java", "-cp", "a b", "Main"), env, Map.of("FOO", "s3cr3t"));
        assertFalse(verbose.contains(secret.toHex()), verbose);
        assertFalse(verbose.contains("KOLO_SECRET"), verbose);
        assertTrue(verbose.contains("kolo: rank 3: java -cp 'a b' Main"), verbose);
        assertTrue(verbose.contains("KOLO_RENDEZVOUS_PORT=4242"), verbose);
        assertTrue(verbose.contains("FOO=(from -x)"), verbose);
        assertFalse(verbose.contains("s3cr3t"), verbose);
        String settings = RankEnvironment.describe(0, List.of("true"), env, Map.of("KOLO_CYCLE_TIME", "2.5"));
        assertTrue(settings.contains("KOLO_CYCLE_TIME=2.5"), "Kolo's own settings show their values: " + settings);
    }

    /**
     * kolo run and an embedder (WorkerEnvironment, kolo-spark) write a rank's variables with one writer: for the same
     * hosts, store, secret and start timeout every rank gets the same variables from both, and every one is a setting
     * the rank reads.
     */
    @Test
    void kolosRunAndAnEmbedderGiveARankTheSameVariables() throws Exception {
        JobSecret secret = JobSecret.generate();
        InetSocketAddress store = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 29500);
        List<Hosts.Host> hosts = List.of(new Hosts.Host("b", 2), new Hosts.Host("a", 1), new Hosts.Host("c", 3));
        for (RankMap.Mapping mapping : RankMap.Mapping.values()) {
            List<RankMap.Slot> slots = RankMap.assign(hosts, 7, mapping, true);
            List<String> hostOfEachRank = slots.stream().map(RankMap.Slot::host).toList();
            for (RankMap.Slot slot : slots) {
                Map<String, String> launcher = RankEnvironment.koloVars(slot, store, secret, 45).toMap();
                Map<String, String> embedder = WorkerEnvironment.forRank(slot.rank(), hostOfEachRank)
                        .rendezvous(store).secret(secret).startTimeout(Duration.ofSeconds(45))
                        .build();
                assertEquals(launcher, embedder, mapping + " rank " + slot.rank());
                assertEquals(RankEnvironment.LAUNCHER_VARS, launcher.keySet());
            }
        }
        Set<String> settings = new HashSet<>();
        KoloSettings.all().forEach(s -> settings.add(s.name()));
        Map<String, String> elastic = RankVariables.of(new Topology(0, 1, 0, 1, 0, 1), "h")
                .rendezvous("h", 1).secret(secret).startTimeoutSeconds(1).timeoutSeconds(1).networkInterface("lo")
                .elastic("w0", 0, 1).toMap();
        assertTrue(settings.containsAll(elastic.keySet()), "not settings: " + elastic.keySet().stream()
                .filter(k -> !settings.contains(k)).toList());
        assertTrue(elastic.keySet().containsAll(RankEnvironment.ELASTIC_VARS), elastic.keySet().toString());
    }

    @Test
    void exports() {
        List<String> warnings = new ArrayList<>();
        Map<String, String> env = RankEnvironment.exports(List.of("A=1", "B", "C=x=y", "MISSING", "EMPTY="),
                Map.of("B", "from-launcher"), warnings);
        assertEquals(Map.of("A", "1", "B", "from-launcher", "C", "x=y", "EMPTY", ""), env);
        assertEquals(List.of("kolo: -x MISSING: not set in the launcher's environment; not forwarded"), warnings);
        assertThrows(UsageException.class, () -> RankEnvironment.exports(List.of("=1"), Map.of(), warnings));
        assertThrows(UsageException.class, () -> RankEnvironment.exports(List.of("1A=1"), Map.of(), warnings));
        assertTrue(assertThrows(UsageException.class,
                () -> RankEnvironment.exports(List.of("KOLO_RANK=0"), Map.of(), warnings)).getMessage()
                .contains("set by kolo run"));
    }
}
