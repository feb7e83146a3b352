import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The chaos benchmark of elastic training (issue 20, "Proof"): runs elastic MNIST under the real launcher
 * ({@code ./kolo run -np 3 --min-np 2 -H localhost:3 ...}) again and again, SIGKILLs one random worker at a random
 * step of each run, and reports per run and in total: completed, resets, time from the kill to training resumed,
 * steps lost, lost commits, hangs and the held-out accuracy. Run through {@code elastic-chaos.sh} (see there for the
 * options); a single-file program so that it needs nothing but the JDK and the checkout's {@code ./kolo}.
 *
 * <p>Every line of the launcher is stamped with this program's clock as it arrives, so the kill and the lines that
 * follow it are timed on one clock. The example runs with {@code --log-steps}: rank 0 prints one line per step, which
 * is how the steps trained before the kill are counted.
 */
public final class ElasticChaos {
    private static final Pattern STEP = Pattern.compile(
            "^\\[\\d+\\]<stdout>:epoch (\\d+), batch (\\d+): (trained|committed) on (\\d+) ranks$");
    private static final Pattern START = Pattern.compile(
            "^\\[\\d+\\]<stdout>:training on (\\d+) ranks from epoch (\\d+), batch (\\d+) .*");
    private static final Pattern ACCURACY = Pattern.compile("^\\[\\d+\\]<stdout>:final test accuracy ([0-9.]+)%$");

    /** One line of the launcher's output and when it arrived. */
    record Line(long nanos, boolean err, String text) {
    }

    /** A position in the training: the epoch (from 1, as the example prints it) and the batch within it. */
    record Pos(int epoch, int batch) implements Comparable<Pos> {
        @Override
        public int compareTo(Pos o) {
            return epoch != o.epoch ? Integer.compare(epoch, o.epoch) : Integer.compare(batch, o.batch);
        }

        @Override
        public String toString() {
            return epoch + ":" + batch;
        }
    }

    /** What one run did. Times are milliseconds after the kill; null where the run did not get that far. */
    record Run(int index, int targetBatch, int killDelayMs, Integer killedRank, Long killedPid, Integer exitCode,
               boolean hang, boolean completed, int resets, Pos lastCommit, Pos lastTrained, Pos resumedAt,
               Long killToRejoinMs, Long killToResumeMs, Integer stepsLost, boolean lostCommit, Double accuracy,
               int segmentsLeft, int processesLeft, double seconds, String note) {
    }

    /** The value after option {@code args[i - 1]}. */
    private static String value(String[] args, int i) {
        if (i >= args.length) {
            throw new IllegalArgumentException(args[i - 1] + " needs a value");
        }
        return args[i];
    }

    private static long whole(String[] args, int i) {
        String v = value(args, i);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number, not '" + v + "'");
        }
    }

    private static int positive(String[] args, int i) {
        long v = whole(args, i);
        if (v < 1 || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(args[i - 1] + " needs a whole number >= 1, not '" + args[i] + "'");
        }
        return (int) v;
    }

    public static void main(String[] args) throws Exception {
        int runs = 50;
        long seed = System.currentTimeMillis();
        Path root = Path.of(System.getProperty("kolo.home", ".")).toAbsolutePath().normalize();
        Path data = root.resolveSibling("shared").resolve("data").resolve("mnist");
        Path out = root.resolve("target").resolve("elastic-chaos");
        int hangSeconds = 300;
        int commitEvery = 10;
        int maxBatch = 70;
        List<String> extra = new ArrayList<>();
        String options = " (options: --runs N, --seed S, --data DIR, --out DIR, --hang-timeout S, --commit-every K,"
                + " --max-kill-batch B, -- more mnist options)";
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--runs" -> runs = positive(args, ++i);
                    case "--seed" -> seed = whole(args, ++i);
                    case "--data" -> data = Path.of(value(args, ++i)).toAbsolutePath();
                    case "--out" -> out = Path.of(value(args, ++i)).toAbsolutePath();
                    case "--hang-timeout" -> hangSeconds = positive(args, ++i);
                    case "--commit-every" -> commitEvery = positive(args, ++i);
                    case "--max-kill-batch" -> maxBatch = positive(args, ++i);
                    case "--" -> {
                        extra.addAll(Arrays.asList(args).subList(i + 1, args.length));
                        i = args.length;
                    }
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
        } catch (IllegalArgumentException e) {
            System.err.println("elastic-chaos: " + e.getMessage() + options);
            System.exit(2);
        }
        Files.createDirectories(out);
        List<String> mnist = new ArrayList<>(List.of("--data", data.toString(), "--elastic", "--model", "mlp",
                "--epochs", "1", "--threads", "1", "--commit-every", Integer.toString(commitEvery), "--log-steps"));
        mnist.addAll(extra);
        List<String> command = new ArrayList<>(List.of(root.resolve("kolo").toString(), "run", "-np", "3",
                "--min-np", "2", "-H", "localhost:3", "--reset-limit", "3", "--start-timeout", "120",
                "--elastic-timeout", "120", "--example", "mnist", "--"));
        command.addAll(mnist);
        System.out.println("elastic-chaos: seed " + seed + ", " + runs + " runs, hang timeout " + hangSeconds
                + " s, logs and JSON in " + out);
        System.out.println("elastic-chaos: each run: " + String.join(" ", command));
        Random random = new Random(seed);
        List<Run> results = new ArrayList<>();
        for (int r = 1; r <= runs; r++) {
            int target = 1 + random.nextInt(maxBatch);
            int delayMs = random.nextInt(500);
            int pick = random.nextInt(3);
            Run run = runOnce(r, command, out.resolve(String.format(Locale.ROOT, "run-%03d.log", r)), target, delayMs,
                    pick, hangSeconds);
            results.add(run);
            System.out.println(describe(run));
            writeJson(out.resolve("elastic-chaos.json"), seed, command, results);
        }
        String table = table(results);
        System.out.println(table);
        Files.writeString(out.resolve("table.md"), table + "\n");
        System.out.println("JSON: " + out.resolve("elastic-chaos.json"));
    }

    private static Run runOnce(int index, List<String> command, Path log, int target, int delayMs, int pick,
                               int hangSeconds) throws Exception {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(hangSeconds);
        List<Line> lines = Collections.synchronizedList(new ArrayList<>());
        Process launcher = new ProcessBuilder(command).start();
        launcher.getOutputStream().close();
        Thread outReader = reader(launcher.getInputStream(), false, lines);
        Thread errReader = reader(launcher.getErrorStream(), true, lines);
        Set<Long> workerPids = ConcurrentHashMap.newKeySet();
        Integer killedRank = null;
        Long killedPid = null;
        long killNanos = -1;
        String note = "";
        boolean hang = false;
        try {
            // Wait for the target step of the first job, then a little more, so that the kill lands anywhere in a
            // step: in the forward pass, the allreduce, a commit.
            String want = "epoch 1, batch " + target + ": ";
            boolean reached = false;
            // Walking the process table is dearer than reading the lines: done every 25th look only.
            for (int look = 0; System.nanoTime() - deadline < 0 && launcher.isAlive(); look++) {
                if (look % 25 == 0) {
                    workerPids.addAll(workers(launcher).stream().map(ProcessHandle::pid).toList());
                }
                if (snapshot(lines).stream().anyMatch(l -> !l.err && l.text.contains(">:" + want))) {
                    reached = true;
                    break;
                }
                Thread.sleep(20);
            }
            if (reached) {
                Thread.sleep(delayMs);
                List<ProcessHandle> ws = workers(launcher);
                ws.forEach(w -> workerPids.add(w.pid()));
                if (ws.size() == 3 && launcher.isAlive()) {
                    ProcessHandle victim = ws.get(pick);
                    killedPid = victim.pid();
                    killedRank = environment(victim.pid()).map(ElasticChaos::rankOf).orElse(null);
                    killNanos = System.nanoTime();
                    victim.destroyForcibly();   // SIGKILL: no shutdown hook, no last words
                } else {
                    note = "no kill: " + ws.size() + " workers found at the target step";
                }
            } else if (launcher.isAlive()) {
                note = "no kill: the target step never came";
            } else {
                note = "no kill: the job ended before the target step";
            }
            // Wait for the end, noting each worker the launcher starts, whose segments are checked afterwards.
            while (launcher.isAlive() && System.nanoTime() - deadline < 0) {
                workerPids.addAll(workers(launcher).stream().map(ProcessHandle::pid).toList());
                launcher.waitFor(500, TimeUnit.MILLISECONDS);
            }
            if (launcher.isAlive()) {
                hang = true;
                note = (note.isEmpty() ? "" : note + "; ") + "hang: still running after " + hangSeconds + " s";
                // Keep the workers' stacks in the log: what each was waiting for when the run was declared hung.
                for (ProcessHandle w : workers(launcher)) {
                    lines.add(new Line(System.nanoTime(), true, "elastic-chaos: jstack of worker " + w.pid()));
                    jstack(w.pid(), lines);
                }
            }
        } finally {
            launcher.descendants().forEach(ProcessHandle::destroyForcibly);
            launcher.destroyForcibly();
            launcher.waitFor(30, TimeUnit.SECONDS);
            outReader.join(TimeUnit.SECONDS.toMillis(10));
            errReader.join(TimeUnit.SECONDS.toMillis(10));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Integer exit = launcher.isAlive() ? null : launcher.exitValue();
        // A hung run's workers were just killed here and may not be gone yet: only a launcher that ended by itself
        // is held to leaving no worker behind.
        int processesLeft = 0;
        for (long pid : workerPids) {
            Optional<ProcessHandle> p = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
            if (p.isPresent()) {
                processesLeft += hang ? 0 : 1;
                p.get().destroyForcibly();
                try {
                    p.get().onExit().get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                    note = (note.isEmpty() ? "" : note + "; ") + "worker " + pid + " survived SIGKILL";
                }
            }
        }
        int segmentsLeft = removeSegments(workerPids);
        List<Line> all = snapshot(lines);
        writeLog(log, start, killNanos, all);
        return analyse(index, target, delayMs, killedRank, killedPid, killNanos, exit, hang, all, segmentsLeft,
                processesLeft, seconds, note);
    }

    /** Reads the rest of the run from the lines: where the job was at the kill, where it resumed, and when. */
    private static Run analyse(int index, int target, int delayMs, Integer killedRank, Long killedPid, long killNanos,
                               Integer exit, boolean hang, List<Line> all, int segmentsLeft, int processesLeft,
                               double seconds, String note) {
        int resets = (int) all.stream().filter(l -> l.err && l.text.startsWith("kolo: reset ")).count();
        Double accuracy = null;
        for (Line l : all) {
            Matcher m = ACCURACY.matcher(l.text);
            if (!l.err && m.matches()) {
                accuracy = Double.parseDouble(m.group(1));
            }
        }
        boolean completed = exit != null && exit == 0 && accuracy != null;
        Pos lastCommit = null;
        Pos lastTrained = null;
        Pos resumed = null;
        Long toRejoin = null;
        Long toResume = null;
        if (killNanos >= 0) {
            // The first job's lines, up to the first job that starts after the kill: every step line of the first job
            // comes before that one, whenever it arrived, since no step can complete once a rank is gone.
            int i = 0;
            for (; i < all.size(); i++) {
                Line l = all.get(i);
                if (l.err) {
                    continue;
                }
                if (l.nanos > killNanos && START.matcher(l.text).matches()) {
                    break;
                }
                Matcher m = STEP.matcher(l.text);
                if (m.matches()) {
                    Pos p = new Pos(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
                    lastTrained = max(lastTrained, p);
                    if (m.group(3).equals("committed")) {
                        lastCommit = max(lastCommit, p);
                    }
                }
            }
            if (i < all.size()) {
                Matcher m = START.matcher(all.get(i).text);
                m.matches();
                resumed = new Pos(Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
                toRejoin = TimeUnit.NANOSECONDS.toMillis(all.get(i).nanos - killNanos);
                for (int j = i + 1; j < all.size(); j++) {
                    if (!all.get(j).err && STEP.matcher(all.get(j).text).matches()) {
                        toResume = TimeUnit.NANOSECONDS.toMillis(all.get(j).nanos - killNanos);
                        break;
                    }
                }
            }
        }
        Integer lost = null;
        if (resumed != null && lastTrained != null && resumed.epoch == lastTrained.epoch) {
            lost = Math.max(0, lastTrained.batch - resumed.batch);
        } else if (resumed != null && lastTrained == null) {
            lost = 0;
        }
        boolean lostCommit = resumed != null && lastCommit != null && resumed.compareTo(lastCommit) < 0;
        return new Run(index, target, delayMs, killedRank, killedPid, exit, hang, completed, resets, lastCommit,
                lastTrained, resumed, toRejoin, toResume, lost, lostCommit, accuracy, segmentsLeft, processesLeft,
                seconds, note);
    }

    private static Pos max(Pos a, Pos b) {
        return a == null || b.compareTo(a) > 0 ? b : a;
    }

    /** The launcher's worker processes: the JVMs among its descendants whose environment names an elastic worker. */
    private static List<ProcessHandle> workers(Process launcher) {
        List<ProcessHandle> ws = new ArrayList<>();
        for (ProcessHandle p : launcher.descendants().toList()) {
            if (environment(p.pid()).filter(e -> e.contains("\0KOLO_ELASTIC_WORKER=")).isPresent()) {
                ws.add(p);
            }
        }
        ws.sort((a, b) -> Long.compare(a.pid(), b.pid()));
        return ws;
    }

    private static Optional<String> environment(long pid) {
        try {
            return Optional.of("\0" + new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "environ")),
                    StandardCharsets.UTF_8));
        } catch (IOException e) {
            return Optional.empty();   // gone already
        }
    }

    private static Integer rankOf(String env) {
        Matcher m = Pattern.compile("\0KOLO_RANK=(\\d+)\0").matcher(env);
        return m.find() ? Integer.parseInt(m.group(1)) : null;
    }

    /**
     * Removes the shared-memory segments ({@code kolo-<job>-<rank>-<pid>}) that this run's workers left behind and
     * returns how many there were; segments of other jobs on the machine are left alone.
     */
    private static int removeSegments(Set<Long> pids) throws IOException {
        Path shm = Path.of("/dev/shm");
        if (!Files.isDirectory(shm)) {
            return 0;
        }
        int n = 0;
        try (Stream<Path> files = Files.list(shm)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                int dash = name.lastIndexOf('-');
                if (name.startsWith("kolo-") && dash > 0 && pids.contains(parse(name.substring(dash + 1)))) {
                    Files.deleteIfExists(f);
                    n++;
                }
            }
        }
        return n;
    }

    private static long parse(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static Thread reader(InputStream in, boolean err, List<Line> lines) {
        return Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String s; (s = r.readLine()) != null; ) {
                    lines.add(new Line(System.nanoTime(), err, s));
                }
            } catch (IOException e) {
                lines.add(new Line(System.nanoTime(), true, "elastic-chaos: reading the launcher failed: " + e));
            }
        });
    }

    private static void jstack(long pid, List<Line> lines) {
        Path jstack = Path.of(System.getProperty("java.home"), "bin", "jstack");
        try {
            Process p = new ProcessBuilder(jstack.toString(), Long.toString(pid)).redirectErrorStream(true).start();
            Thread t = reader(p.getInputStream(), true, lines);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            t.join(TimeUnit.SECONDS.toMillis(5));
        } catch (IOException | InterruptedException e) {
            lines.add(new Line(System.nanoTime(), true, "elastic-chaos: jstack failed: " + e));
        }
    }

    private static List<Line> snapshot(List<Line> lines) {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    private static void writeLog(Path log, long start, long killNanos, List<Line> all) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(log))) {
            boolean killWritten = killNanos < 0;
            for (Line l : all) {
                if (!killWritten && l.nanos > killNanos) {
                    w.printf(Locale.ROOT, "%9.3f --- elastic-chaos: SIGKILL%n", (killNanos - start) / 1e9);
                    killWritten = true;
                }
                w.printf(Locale.ROOT, "%9.3f %s %s%n", (l.nanos - start) / 1e9, l.err ? "E" : "O", l.text);
            }
            if (!killWritten) {
                w.printf(Locale.ROOT, "%9.3f --- elastic-chaos: SIGKILL%n", (killNanos - start) / 1e9);
            }
        }
    }

    private static String describe(Run r) {
        return String.format(Locale.ROOT, "run %d: kill rank %s at batch %d+%d ms, exit %s, %s, resets %d, last "
                        + "commit %s, trained to %s, resumed at %s, kill->rejoin %s ms, kill->first step %s ms, steps"
                        + " lost %s, accuracy %s%%, %.0f s%s",
                r.index, r.killedRank, r.targetBatch, r.killDelayMs, r.exitCode,
                r.hang ? "HANG" : r.completed ? "completed" : "NOT completed", r.resets, r.lastCommit, r.lastTrained,
                r.resumedAt, r.killToRejoinMs, r.killToResumeMs, r.stepsLost, r.accuracy, r.seconds,
                (r.lostCommit ? ", LOST COMMIT" : "") + (r.segmentsLeft > 0 ? ", " + r.segmentsLeft + " segments left"
                        : "") + (r.processesLeft > 0 ? ", " + r.processesLeft + " processes left" : "")
                        + (r.note.isEmpty() ? "" : ", " + r.note));
    }

    static String table(List<Run> runs) {
        List<Long> rejoin = runs.stream().map(Run::killToRejoinMs).filter(x -> x != null).sorted().toList();
        List<Long> resume = runs.stream().map(Run::killToResumeMs).filter(x -> x != null).sorted().toList();
        List<Long> lost = runs.stream().map(Run::stepsLost).filter(x -> x != null).map(Integer::longValue).sorted()
                .toList();
        List<Double> acc = runs.stream().map(Run::accuracy).filter(x -> x != null).sorted().toList();
        long killed = runs.stream().filter(r -> r.killedPid != null).count();
        StringBuilder b = new StringBuilder();
        b.append("| runs | workers killed | completed | hangs | resets (total) | kill → rejoined, median / max"
                + " | kill → first step, median / max | steps lost, median / max | lost commits"
                + " | accuracy, min / median | processes / segments left |\n");
        b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        b.append(String.format(Locale.ROOT, "| %d | %d | %d | %d | %d | %s / %s s | %s / %s s | %s / %s | %d"
                        + " | %s / %s %% | %d / %d |",
                runs.size(), killed, runs.stream().filter(Run::completed).count(),
                runs.stream().filter(Run::hang).count(), runs.stream().mapToInt(Run::resets).sum(),
                seconds(median(rejoin)), seconds(last(rejoin)), seconds(median(resume)), seconds(last(resume)),
                dash(median(lost)), dash(last(lost)), runs.stream().filter(Run::lostCommit).count(),
                acc.isEmpty() ? "-" : String.format(Locale.ROOT, "%.2f", acc.getFirst()),
                acc.isEmpty() ? "-" : String.format(Locale.ROOT, "%.2f", acc.get((acc.size() - 1) / 2)),
                runs.stream().mapToInt(Run::processesLeft).sum(), runs.stream().mapToInt(Run::segmentsLeft).sum()));
        return b.toString();
    }

    /** The lower median: a value some run really had. */
    private static Long median(List<Long> sorted) {
        return sorted.isEmpty() ? null : sorted.get((sorted.size() - 1) / 2);
    }

    private static Long last(List<Long> sorted) {
        return sorted.isEmpty() ? null : sorted.getLast();
    }

    private static String dash(Long n) {
        return n == null ? "-" : n.toString();
    }

    private static String seconds(Long ms) {
        return ms == null ? "-" : String.format(Locale.ROOT, "%.1f", ms / 1000.0);
    }

    private static void writeJson(Path file, long seed, List<String> command, List<Run> runs) throws IOException {
        StringBuilder b = new StringBuilder();
        b.append("{\n  \"seed\": ").append(seed).append(",\n  \"command\": ").append(str(String.join(" ", command)))
                .append(",\n  \"runs\": [\n");
        for (int i = 0; i < runs.size(); i++) {
            Run r = runs.get(i);
            b.append("    {\"run\": ").append(r.index).append(", \"killAtBatch\": ").append(r.targetBatch)
                    .append(", \"killDelayMs\": ").append(r.killDelayMs).append(", \"killedRank\": ")
                    .append(r.killedRank).append(", \"exitCode\": ").append(r.exitCode).append(", \"hang\": ")
                    .append(r.hang).append(", \"completed\": ").append(r.completed).append(", \"resets\": ")
                    .append(r.resets).append(", \"lastCommit\": ").append(pos(r.lastCommit))
                    .append(", \"lastTrained\": ").append(pos(r.lastTrained)).append(", \"resumedAt\": ")
                    .append(pos(r.resumedAt)).append(", \"killToRejoinMs\": ").append(r.killToRejoinMs)
                    .append(", \"killToFirstStepMs\": ").append(r.killToResumeMs).append(", \"stepsLost\": ")
                    .append(r.stepsLost).append(", \"lostCommit\": ").append(r.lostCommit).append(", \"accuracy\": ")
                    .append(r.accuracy).append(", \"processesLeft\": ").append(r.processesLeft)
                    .append(", \"segmentsLeft\": ").append(r.segmentsLeft).append(", \"seconds\": ")
                    .append(String.format(Locale.ROOT, "%.1f", r.seconds)).append(", \"note\": ").append(str(r.note))
                    .append("}").append(i + 1 < runs.size() ? ",\n" : "\n");
        }
        b.append("  ],\n  \"table\": ").append(str(table(runs))).append("\n}\n");
        Files.writeString(file, b.toString());
    }

    private static String pos(Pos p) {
        return p == null ? "null" : "{\"epoch\": " + p.epoch + ", \"batch\": " + p.batch + "}";
    }

    private static String str(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }
}
