package io.kolo.launcher.start;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The remote wrapper run by a real {@code sh}, fed the way sshd feeds it (command line through a login
 * shell, environment on stdin), without ssh itself.
 */
@Timeout(60)
class RankWrapperTest {

    private static Process wrapper(Path cwd, List<String> command) throws Exception {
        // sshd runs the command string with the user's shell: sh -c "exec sh -c '...' ..."
        return new ProcessBuilder("sh", "-c", RankWrapper.remoteCommand(cwd.toString(), command)).start();
    }

    @Test
    void environmentArrivesOnStdinWithAwkwardValuesIntactAndNotInArguments(@TempDir Path dir) throws Exception {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KOLO_RANK", "3");
        env.put("KOLO_SECRET", "00ff");
        env.put("TRICKY", "it's \"quoted\" $HOME `x` \\ and\nsecond line");
        Process p = wrapper(dir, List.of("sh", "-c", "pwd; printf '%s|' \"$KOLO_RANK\" \"$TRICKY\"; exit 7"));
        // Like ssh's, the wrapper's stdin stays open while the rank runs: closing it would stop the rank.
        OutputStream in = p.getOutputStream();
        in.write(RankWrapper.environmentLine(env).getBytes(StandardCharsets.UTF_8));
        in.flush();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        in.close();
        assertEquals(7, p.exitValue(), out);
        assertEquals(dir.toRealPath() + "\n3|it's \"quoted\" $HOME `x` \\ and\nsecond line|", out);
        assertFalse(RankWrapper.remoteCommand(dir.toString(), List.of("x")).contains("00ff"));
    }

    @Test
    void closingStdinTerminatesTheRankAndWhatItStarted(@TempDir Path dir) throws Exception {
        // The rank ignores nothing; its background child ignores TERM and must still go (KILL after grace).
        Process p = wrapper(dir, List.of("sh", "-c", "(trap '' TERM; sleep 300) & echo $! > child; echo $$ > rank;"
                + " echo started; sleep 300"));
        OutputStream in = p.getOutputStream();
        in.write(RankWrapper.environmentLine(Map.of("A", "1")).getBytes(StandardCharsets.UTF_8));
        in.flush();
        String first = new String(p.getInputStream().readNBytes("started\n".length()), StandardCharsets.UTF_8);
        assertEquals("started\n", first);
        long rank = Long.parseLong(Files.readString(dir.resolve("rank")).strip());
        long child = Long.parseLong(Files.readString(dir.resolve("child")).strip());
        in.close();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the wrapper did not end after stdin closed");
        for (long pid : List.of(rank, child)) {
            var h = ProcessHandle.of(pid);
            if (h.isPresent()) {
                h.get().onExit().get(RankWrapper.GRACE_SECONDS + 10, TimeUnit.SECONDS);
            }
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid + " survived");
        }
    }

    @Test
    void aRankThatEndsLeavesNoZombieBehind(@TempDir Path dir) throws Exception {
        // The launcher waits for everything the ranks started to be gone; a watcher left for init to reap (which
        // some inits do late) held every job's end for seconds.
        Process p = wrapper(dir, List.of("sh", "-c", "echo started; read line < fifo"));
        new ProcessBuilder("mkfifo", dir.resolve("fifo").toString()).start().waitFor();
        OutputStream in = p.getOutputStream();
        in.write(RankWrapper.environmentLine(Map.of("A", "1")).getBytes(StandardCharsets.UTF_8));
        in.flush();
        assertEquals("started\n", new String(p.getInputStream().readNBytes("started\n".length()),
                StandardCharsets.UTF_8));
        List<ProcessHandle> started = p.descendants().toList();
        assertFalse(started.isEmpty(), "the wrapper started no watcher and no rank");
        Files.writeString(dir.resolve("fifo"), "end\n");
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the wrapper did not end after its rank did");
        in.close();
        for (ProcessHandle h : started) {
            assertFalse(zombie(h.pid()), "pid " + h.pid() + " was left a zombie for init to reap");
        }
    }

    private static boolean zombie(long pid) throws java.io.IOException {
        Path stat = Path.of("/proc", Long.toString(pid), "stat");
        try {
            String s = Files.readString(stat);
            // pid (comm) STATE ...: comm may contain spaces and parentheses, the state follows the last ')'.
            return s.substring(s.lastIndexOf(')') + 2).startsWith("Z");
        } catch (java.nio.file.NoSuchFileException gone) {
            return false;
        }
    }

    @Test
    void aMissingDirectoryIsNamed(@TempDir Path dir) throws Exception {
        Process p = wrapper(dir.resolve("nope"), List.of("true"));
        try (OutputStream in = p.getOutputStream()) {
            in.write(RankWrapper.environmentLine(Map.of("A", "1")).getBytes(StandardCharsets.UTF_8));
        }
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(126, p.exitValue());
        assertTrue(err.contains("cannot change to " + dir.resolve("nope")), err);
    }

    @Test
    void sshArgumentsCarryTheOptions() {
        Ssh ssh = new Ssh(List.of("ssh", "-F", "cfg"), 2222, Path.of("/k/id"), 7, 3);
        assertEquals(List.of("ssh", "-F", "cfg", "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=7", "-o",
                "ConnectionAttempts=3", "-o", "ServerAliveInterval=10", "-o", "ServerAliveCountMax=3", "-p", "2222", "-i", "/k/id", "--", "node-1", "echo hi"), ssh.argv("node-1",
                "echo hi"));
        assertEquals(List.of("ssh", "-J", "jump"), Ssh.clientCommand(Map.of("KOLO_SSH_COMMAND", " ssh  -J jump ")));
        assertEquals(List.of("ssh"), Ssh.clientCommand(Map.of()));
    }
}
