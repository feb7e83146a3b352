package io.kolo;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seeded, reproducible fuzz of the engine (issue 16): random batches of named and unnamed collectives of every kind,
 * type and reduction, sizes straddling every threshold, names reused with new shapes and types, async ops awaited out
 * of order, joins, and requests deliberately mismatched on one rank, each result checked against a reference computed
 * element by element, with the eager path, the response cache and fusion each switched off in turn. The normal suite runs
 * a bounded share from a fixed seed; {@code -Dkolo.fuzz.minutes=30} runs {@link #longRun} for that long from a random
 * seed it prints, and {@code -Dkolo.fuzz.seed=S} starts from seed S. A failure names its seed, batch, rank and op.
 */
class EngineFuzzTest {
    private static final long SEED = Long.getLong("kolo.fuzz.seed", 20261123L);

    /** Settings that change which path an op takes; every configuration runs every op kind. */
    static final Map<String, Map<String, String>> CONFIGS = configs();

    private static Map<String, Map<String, String>> configs() {
        Map<String, Map<String, String>> c = new LinkedHashMap<>();
        c.put("defaults", Map.of());
        c.put("no eager payload", Map.of("KOLO_EAGER_ALLREDUCE_BYTES", "0"));
        c.put("no response cache", Map.of("KOLO_CACHE_CAPACITY", "0"));
        c.put("no fusion", Map.of("KOLO_FUSION_THRESHOLD", "0"));
        c.put("small everything", Map.of("KOLO_CACHE_CAPACITY", "3", "KOLO_FUSION_THRESHOLD", "65536",
                "KOLO_EAGER_ALLREDUCE_BYTES", "1024", "KOLO_SMALL_ALLREDUCE_BYTES", "4096",
                "KOLO_SHM_RING_BYTES", "65536"));
        return c;
    }

    private static Map<String, String> withTimeouts(Map<String, String> settings) {
        Map<String, String> s = new LinkedHashMap<>(settings);
        s.put("KOLO_TIMEOUT_SECONDS", "60");
        s.putIfAbsent("KOLO_START_TIMEOUT_SECONDS", "60");
        return s;
    }

    /** Ranks as threads of this JVM, every configuration, 2 to 4 ranks and two hosts of two. */
    @Test
    void ranksAsThreads() {
        int i = 0;
        for (Map.Entry<String, Map<String, String>> c : CONFIGS.entrySet()) {
            for (int size = 2; size <= 4; size++) {
                FuzzRank.Coverage seen = threads(SEED + 101L * i++, 1, size, c.getValue(), 60, false);
                if (c.getKey().equals("defaults")) {
                    // The program must reach what it is meant to fuzz, or its passing means nothing.
                    assertTrue(seen.engine().eagerOps() > 0 && seen.engine().cachedOps() > seen.engine().eagerOps()
                            && seen.engine().fusedBuffers() > 0 && seen.mismatches() > 0 && seen.joins() > 0,
                            "the fuzz program missed a path: " + seen);
                }
            }
            threads(SEED + 101L * i++, 2, 2, c.getValue(), 60, false);
        }
    }

    /** A few batches with sizes up to 3 MiB: the ring, direct reads and the fusion buffer's limit. */
    @Test
    void largeTensorsAsThreads() {
        threads(SEED + 7, 1, 3, Map.of(), 30, true);
        threads(SEED + 8, 1, 2, CONFIGS.get("small everything"), 30, true);
    }

    /** Ranks as processes over shared memory and over TCP. */
    @Test
    void ranksAsProcesses() throws Exception {
        processes(SEED + 11, 3, withTransport(CONFIGS.get("defaults"), "shm"), 40, true);
        processes(SEED + 12, 3, withTransport(CONFIGS.get("small everything"), "shm"), 40, true);
        processes(SEED + 13, 2, withTransport(CONFIGS.get("no eager payload"), "tcp"), 40, true);
        processes(SEED + 14, 3, withTransport(CONFIGS.get("no response cache"), "tcp"), 40, false);
    }

    /** The long run: {@code -Dkolo.fuzz.minutes=N}, every configuration and mode in turn over fresh seeds. */
    @Test
    @EnabledIfSystemProperty(named = "kolo.fuzz.minutes", matches = "\\d+")
    void longRun() throws Exception {
        long end = System.currentTimeMillis() + 60_000L * Long.getLong("kolo.fuzz.minutes");
        long seed = longRunSeed(System.getProperty("kolo.fuzz.seed"), new SecureRandom());
        System.out.println("engine fuzz: starting from seed " + seed + " (re-run: -Dkolo.fuzz.seed=" + seed + ")");
        List<String> configs = new ArrayList<>(CONFIGS.keySet());
        for (int round = 0; System.currentTimeMillis() < end; round++) {
            String name = configs.get(round % configs.size());
            Map<String, String> settings = CONFIGS.get(name);
            System.out.println("engine fuzz round " + round + ": seed " + seed + ", " + name);
            threads(seed++, 1, 2 + round % 3, settings, 300, round % 2 == 0);
            threads(seed++, 2, 2, settings, 200, false);
            processes(seed++, 2 + round % 2, withTransport(settings, round % 2 == 0 ? "shm" : "tcp"), 300, true);
        }
    }

    /** The long run's first seed: the one given, else a fresh one, so that every long run explores new programs. */
    static long longRunSeed(String given, Random random) {
        return given == null || given.isBlank() ? random.nextLong() : Long.parseLong(given.strip());
    }

    @Test
    void longRunStartsFromAFreshSeedUnlessOneIsGiven() {
        Random random = new Random(1);
        long first = longRunSeed(null, random);
        long second = longRunSeed(null, random);
        assertTrue(first != second && first != SEED && second != SEED, first + ", " + second);
        assertEquals(42L, longRunSeed("42", random));
    }

    private static Map<String, String> withTransport(Map<String, String> settings, String transport) {
        Map<String, String> s = new LinkedHashMap<>(settings);
        s.put("KOLO_TRANSPORT", transport);
        return s;
    }

    /** Runs the program on ranks as threads; returns rank 0's coverage. */
    private static FuzzRank.Coverage threads(long seed, int hosts, int perHost, Map<String, String> settings,
                                             int batches, boolean large) {
        List<Communicator> comms = hosts == 1 ? Communicator.local(perHost, withTimeouts(settings))
                : Communicator.localHosts(hosts, perHost, withTimeouts(settings));
        List<Ranks.Outcome<FuzzRank.Coverage>> outcomes = Ranks.outcomes(comms, comm -> {
            try {
                FuzzRank fuzz = new FuzzRank(comm, new FuzzProgram(seed, comm.size(), large));
                return fuzz.coverage(fuzz.run(batches, Long.MAX_VALUE));
            } catch (AssertionError | RuntimeException e) {
                comm.close();   // the others fail fast instead of waiting out the timeout
                throw e;
            }
        });
        String where = "ranks as threads, " + hosts + " x " + perHost + ", settings " + settings
                + " (re-run: -Dkolo.fuzz.seed=" + seed + ")";
        for (Ranks.Outcome<FuzzRank.Coverage> o : outcomes) {
            if (o.error() != null && !(o.error() instanceof KoloException)) {
                throw new AssertionError(o.error().getMessage() + "\n  " + where, o.error());
            }
        }
        for (Ranks.Outcome<FuzzRank.Coverage> o : outcomes) {
            if (o.error() != null) {
                throw new AssertionError(o.error().getMessage() + "\n  " + where, o.error());
            }
            assertEquals(batches, o.value().batches(), where);
        }
        return outcomes.getFirst().value();
    }

    private static void processes(long seed, int size, Map<String, String> settings, int batches, boolean large)
            throws Exception {
        List<ProcessRanks.Exit> exits = ProcessRanks.run(size, FuzzRank.Main.class,
                List.of(Long.toString(seed), Integer.toString(batches), Boolean.toString(large), "100000"),
                withTimeouts(settings), 600);
        String where = "ranks as processes, " + size + ", settings " + settings + " (re-run: -Dkolo.fuzz.seed="
                + seed + ")";
        for (ProcessRanks.Exit e : exits) {
            if (e.code() != 0 && e.output().contains("engine fuzz failed")) {
                throw new AssertionError("rank " + e.rank() + ": " + e.output() + "\n  " + where);
            }
        }
        for (ProcessRanks.Exit e : exits) {
            assertEquals(0, e.code(), "rank " + e.rank() + " exited with " + e.code() + ":\n" + e.output() + "\n  "
                    + where);
            assertTrue(e.output().contains("fuzz ok: " + batches + " batches"), e.output());
        }
    }
}
