package io.kolo.launcher.tools;

import io.kolo.launcher.Main;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kolo.bench.BenchHosts;
import io.kolo.bench.BenchSuite;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class BenchCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int kolo(String... args) {
        return Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    private void assertUsage(String expected, String... args) {
        err.reset();
        assertEquals(Main.USAGE, kolo(args), String.join(" ", args));
        String message = err();
        assertEquals(1, message.lines().count(), "one line: " + message);
        assertTrue(message.startsWith("kolo: ") && message.contains(expected), message);
    }

    @Test
    void benchScaleRunsJobsAsThreadsAndWritesItsTableAndJson(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("scale.json");
        assertEquals(0, kolo("bench", "scale", "--max-ranks", "2", "--mode", "threads", "--json", json.toString()),
                err());
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("2 threads"), out.toString(StandardCharsets.UTF_8));
        JsonNode steps = new ObjectMapper().readTree(json.toFile()).path("steps");
        assertEquals(1, steps.size(), steps.toString());
        assertEquals("ok", steps.get(0).path("status").asText(), steps.toString());
        assertEquals("./kolo bench scale --max-ranks 2 --mode threads",
                new ObjectMapper().readTree(json.toFile()).path("command").asText());
    }

    @Test
    void benchScaleBadInputIsOneLine() {
        assertUsage("--mode everywhere: use processes, threads or auto", "bench", "scale", "--mode", "everywhere");
        assertUsage("--max-ranks must be at least 2, got 1", "bench", "scale", "--max-ranks", "1");
        assertUsage("--step-timeout must be at least 1 second", "bench", "scale", "--step-timeout", "0");
        assertUsage("--transport rdma: use tcp, shm or auto", "bench", "scale", "--transport", "rdma");
        assertUsage("use a file name ending in .svg or .png", "bench", "scale", "--plot", "x.pdf");
    }

    @Test
    void badInputIsOneLineNamingTheProblem() {
        assertUsage("unknown collective 'allreduse'", "bench", "allreduse");
        assertUsage("COLLECTIVE", "bench");
        assertUsage("-np must be at least 1", "bench", "allreduce", "-np", "0");
        assertUsage("say KiB, MiB or GiB", "bench", "allreduce", "--sizes", "4MB");
        assertUsage("runs backwards", "bench", "allreduce", "--sizes", "1MiB..1KiB");
        assertUsage("--sizes is empty", "bench", "allreduce", "--sizes", ",,");
        assertUsage("unknown --dtype 'int8'", "bench", "allreduce", "--dtype", "int8");
        assertUsage("unknown --memory 'gpu'; use native or heap", "bench", "allreduce", "--memory", "gpu");
        assertUsage("--iters must be at least 1", "bench", "allreduce", "--iters", "0");
        assertUsage("--warmup must be 0 or more", "bench", "allreduce", "--warmup", "-1");
        assertUsage("--slices must be at least 1, got 0", "bench", "allreduce", "--compare", "--slices", "0");
        assertUsage("--transport udp: use auto, shm or tcp", "bench", "allreduce", "--transport", "udp");
        assertUsage(".svg or .png", "bench", "allreduce", "--plot", "out.pdf");
        assertUsage("smaller than one f32 element per rank", "bench", "allgather", "-np", "3", "--sizes", "8B");
        assertUsage("-x KOLO_TRANSPORT: use --transport", "bench", "allreduce", "-x", "KOLO_TRANSPORT=tcp",
                "--sizes", "1KiB", "--iters", "1");
        assertUsage("Unknown option", "bench", "allreduce", "--frobnicate");
        assertUsage("--fresh-input is for Kolo's own runs", "bench", "broadcast", "--fresh-input", "--compare");
    }

    /**
     * An output file that cannot be written fails before any rank starts: before, the whole sweep ran first (minutes
     * with --compare), then the results were lost with "cannot write results: DIR: it already exists".
     */
    @Test
    void anOutputFileThatCannotBeWrittenFailsBeforeAnythingRuns(@TempDir Path dir) throws Exception {
        Path file = Files.createFile(dir.resolve("results"));
        long start = System.nanoTime();
        assertUsage("--json " + file + "/bench.json: cannot write there: " + file + ": not a directory",
                "bench", "allreduce", "--json", file + "/bench.json");
        assertUsage("--plot " + file + "/bench.svg: cannot write there: " + file + ": not a directory",
                "bench", "allreduce", "--plot", file + "/bench.svg");
        Path directory = Files.createDirectory(dir.resolve("bench.json"));
        assertUsage("--json " + directory + ": cannot write there: " + directory + ": is a directory",
                "bench", "allreduce", "--json", directory.toString());
        assertTrue(System.nanoTime() - start < 5_000_000_000L, "checked before the ranks ran");
        assertFalse(Files.exists(dir.resolve("out.json")));
    }

    @Test
    void freshInputReachesTheRanksAndTheRecordedCommand(@TempDir Path dir) throws Exception {
        List<String> placement = parse("broadcast", "--fresh-input").placement();
        int x = placement.indexOf(io.kolo.bench.BenchWorker.FRESH_INPUT + "=1");
        assertTrue(x > 0 && placement.get(x - 1).equals("-x"), placement.toString());
        assertFalse(parse("broadcast").placement().contains(io.kolo.bench.BenchWorker.FRESH_INPUT + "=1"));

        Path json = dir.resolve("fresh.json");
        assertEquals(0, kolo("bench", "broadcast", "-np", "2", "--sizes", "64KiB", "--iters", "3", "--warmup", "1",
                "--fresh-input", "--memory", "heap", "--json", json.toString()), err());
        JsonNode doc = new ObjectMapper().readTree(Files.readString(json));
        assertTrue(doc.get("command").asText().contains(" --fresh-input"), doc.get("command").asText());
        assertEquals(65536L, doc.get("series").get(0).get("results").get(0).get("bytes").asLong());
    }

    @Test
    void helpListsTheCollectivesAndOptions() {
        assertEquals(0, kolo("bench", "--help"));
        String help = out.toString(StandardCharsets.UTF_8);
        for (String word : List.of("allreduce|allgather|broadcast|alltoall|reducescatter", "--sizes", "--compare",
                "--json", "--plot", "--transport", "2(N-1)/N")) {
            assertTrue(help.contains(word), word + " in\n" + help);
        }
    }

    @Test
    void transportsToRun() {
        assertEquals(List.of("auto"), parse("allreduce").transports());
        assertEquals(List.of("tcp"), parse("allreduce", "--transport", "tcp", "--compare").transports());
        List<String> compared = parse("allreduce", "--compare").transports();
        assertEquals("tcp", compared.getLast(), "TCP is always measured against Gloo and MPI over TCP");
        assertEquals(BenchCommand.shmAvailable(), compared.contains("shm"));
    }

    private static BenchCommand parse(String... args) {
        BenchCommand b = new BenchCommand();
        new CommandLine(b).parseArgs(args);
        return b;
    }

    @Test
    void realRunOfTwoProcessesWritesTableJsonAndPlot(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("out/bench.json");
        Path svg = dir.resolve("out/bench.svg");
        // Java arrays: the ranks check each size's first result, so the array path is checked end to end too.
        assertEquals(0, kolo("bench", "allreduce", "-np", "2", "--sizes", "1KiB,64KiB", "--iters", "3",
                "--warmup", "1", "--memory", "heap", "--json", json.toString(), "--plot", svg.toString()), err());
        String table = out.toString(StandardCharsets.UTF_8);
        assertTrue(table.contains("allreduce, 2 ranks, f32") && table.contains("Kolo auto heap"), table);
        assertTrue(table.lines().anyMatch(l -> l.trim().startsWith("1KiB")), table);
        assertTrue(table.lines().anyMatch(l -> l.trim().startsWith("64KiB")), table);
        JsonNode doc = new ObjectMapper().readTree(Files.readString(json));
        assertEquals("allreduce", doc.get("collective").asText());
        assertEquals(2, doc.get("ranks").asInt());
        assertTrue(doc.get("command").asText().startsWith("./kolo bench allreduce -np 2 --sizes 1KiB,64KiB --memory heap"),
                doc.get("command").asText());
        JsonNode results = doc.get("series").get(0).get("results");
        assertEquals(List.of(1024L, 65536L), results.valueStream().map(r -> r.get("bytes").asLong()).toList());
        for (JsonNode r : results) {
            assertTrue(r.get("busbw_gbps").asDouble() > 0, r.toString());
        }
        String plot = Files.readString(svg);
        assertTrue(plot.startsWith("<?xml") && plot.trim().endsWith("</svg>"), plot);
        assertTrue(plot.contains("series: Kolo auto heap</desc>") && plot.contains("stroke:rgb(31,119,180)"),
                "the Kolo series is named and drawn");
    }

    @Test
    void compareWithoutPeersInstalledReportsThemSkipped(@TempDir Path dir) throws Exception {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("PATH", Files.createDirectories(dir.resolve("bin")).toString());
        env.put("KOLO_BENCH_PYTHON", dir.resolve("python3").toString());
        env.put("XDG_CACHE_HOME", dir.toString());
        Path json = dir.resolve("compare.json");
        BenchCommand b = parse("allreduce", "--sizes", "4KiB", "--iters", "2", "--transport", "tcp", "--compare",
                "--json", json.toString());
        int code = b.execute(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false);
        assertEquals(0, code, err());
        String table = out.toString(StandardCharsets.UTF_8);
        assertTrue(table.contains("OMPI shm: skipped (Open MPI not found: no mpirun on PATH"), table);
        assertTrue(table.contains("OMPI tcp: skipped"), table);
        assertTrue(table.contains("Gloo: skipped"), table);
        assertFalse(table.contains("FAILED"), table);
        JsonNode series = new ObjectMapper().readTree(Files.readString(json)).get("series");
        assertEquals(List.of("ok", "skipped", "skipped", "skipped"),
                series.valueStream().map(s -> s.get("status").asText()).toList());
    }

    @Test
    void compareTakesTurnsWithOpenMpiOverSharedMemory(@TempDir Path dir) throws Exception {
        String path = System.getenv("PATH");
        boolean installed = path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d, "mpirun")) && Files.isExecutable(Path.of(d, "mpicc")));
        if (!installed) {
            System.out.println("BenchCommandTest: skipping the turns with Open MPI: no mpirun/mpicc on PATH"
                    + " (apt-get install openmpi-bin libopenmpi-dev)");
        }
        assumeTrue(installed, "Open MPI (mpirun, mpicc) not installed");
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("XDG_CACHE_HOME", dir.toString());
        // No Python: Gloo is skipped, this test is about Kolo and Open MPI over shared memory.
        env.put("KOLO_BENCH_PYTHON", dir.resolve("no-python3").toString());
        Path json = dir.resolve("turns.json");
        BenchCommand b = parse("allreduce", "--sizes", "1KiB,64KiB", "--iters", "3", "--warmup", "1", "--transport",
                "shm", "--compare", "--slices", "3", "--json", json.toString());
        int code = b.execute(env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), false);
        assertEquals(0, code, err());
        assertTrue(err().contains("Kolo shm and OMPI shm taking turns, 3 slices each per size"), err());
        JsonNode doc = new ObjectMapper().readTree(Files.readString(json));
        assertTrue(doc.get("command").asText().contains("--compare --slices 3"), doc.get("command").asText());
        Map<String, JsonNode> byName = new HashMap<>();
        doc.get("series").forEach(s -> byName.put(s.get("name").asText(), s));
        for (String name : List.of("Kolo shm", "OMPI shm")) {
            JsonNode s = byName.get(name);
            assertEquals("ok", s.get("status").asText(), name + ": " + s);
            assertEquals(List.of(9, 9), s.get("results").valueStream().map(r -> r.get("iterations").asInt()).toList(),
                    name + " measured three slices of three iterations at each size");
        }
        assertEquals("ok", byName.get("OMPI tcp").get("status").asText(), "the TCP series still runs on its own");
    }

    @Test
    void badHostOptionsAreOneLineNamingTheProblem(@TempDir Path dir) throws Exception {
        assertUsage("-p and -i are for the hosts of -H or --hostfile", "bench", "allreduce", "-p", "2222");
        assertUsage("-p and -i are for the hosts of -H or --hostfile", "bench", "allreduce", "-i", "key");
        assertUsage("--transport shm: the ranks run on 2 hosts, which share no memory; use auto or tcp",
                "bench", "allreduce", "-H", "node-a:1,node-b:1", "--transport", "shm");
        assertUsage("-np 3 needs 3 slots but the hosts provide only 2", "bench", "allreduce",
                "-H", "node-a:1,node-b:1", "-np", "3");
        Path hostfile = Files.writeString(dir.resolve("hosts"), "node-a slots=1\n");
        assertUsage("use either -H or --hostfile, not both", "bench", "allreduce", "-H", "node-a:1",
                "--hostfile", hostfile.toString());
        assertUsage("cannot read hostfile", "bench", "allreduce", "--hostfile", dir.resolve("missing").toString());
        assertUsage("--ssh-port must be a TCP port", "bench", "allreduce", "-H", "node-a:1", "-p", "70000");
        assertUsage("Missing required parameter for option '-H'", "bench", "allreduce", "-H");
    }

    @Test
    void hostsPlaceTheRanksAndTheOpenMpiPeer(@TempDir Path dir) throws Exception {
        Map<String, String> env = Map.of("KOLO_SSH_COMMAND", "ssh -F /c/ssh_config", "PATH", "/usr/bin");
        BenchSuite.Config c = parse("allreduce", "-H", "node-a:1,node-b:1", "--compare", "-p", "2222", "-i",
                "/k/id", "--network-interface", "eth1").config(env);
        assertEquals(2, c.ranks(), "every slot when -np is not given, as kolo run");
        assertEquals(List.of("tcp"), c.transports(), "one rank per host: auto would be TCP too, so only tcp runs");
        BenchHosts hosts = c.hosts();
        assertEquals("node-a:1,node-b:1", hosts.hostList());
        assertEquals("eth1", hosts.networkInterface());
        assertEquals("ssh -F /c/ssh_config", hosts.sshAgent());
        assertEquals(List.of("-p", "2222", "-i", "/k/id"), hosts.sshArgs());
        assertEquals("core", hosts.bindTo());
        assertTrue(c.commandLine().startsWith("./kolo bench allreduce -np 2 -H node-a:1,node-b:1 -p 2222 -i /k/id"
                + " --network-interface eth1 --compare"), c.commandLine());

        // Two ranks per host: auto is shared memory inside each host, a series of its own beside tcp.
        Path hostfile = Files.writeString(dir.resolve("hosts"), "node-a slots=2\nnode-b slots=2\n");
        BenchSuite.Config two = parse("allreduce", "--hostfile", hostfile.toString(), "--compare").config(env);
        assertEquals(4, two.ranks());
        assertEquals(List.of("auto", "tcp"), two.transports());
        assertEquals("node-a:2,node-b:2", two.hosts().hostList());
        assertEquals(null, two.hosts().networkInterface());
        assertEquals(List.of(), two.hosts().sshArgs());
        assertEquals(List.of("auto"), parse("allreduce", "--hostfile", hostfile.toString(), "-np", "3")
                .config(env).transports(), "without --compare the chosen transport alone");
        assertEquals("node-a:2,node-b:1", parse("allreduce", "--hostfile", hostfile.toString(), "-np", "3")
                .config(env).hosts().hostList(), "ranks packed host by host, as kolo run places them");

        // An address is one host's own, so Open MPI is not restricted by it; no KOLO_SSH_COMMAND: mpirun's own ssh.
        BenchHosts byAddress = parse("allreduce", "-H", "node-a:1", "--network-interface", "10.0.0.1")
                .config(Map.of()).hosts();
        assertEquals(null, byAddress.networkInterface());
        assertEquals(null, byAddress.sshAgent());
        assertEquals(null, parse("allreduce").config(Map.of()).hosts(), "no hosts given: all on this machine");
    }
}
