package io.kolo.launcher;

import io.kolo.launcher.job.RankEnvironment;

import io.kolo.launcher.workers.Worker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Strangers at the launcher's rendezvous port while a job starts: a thousand connections that trickle a byte now and
 * then and never authenticate, against a launcher whose descriptor limit is lowered so that they exhaust it. The job
 * must start and complete all the same.
 */
@Timeout(180)
class StrangersTest {
    private static final String CP = System.getProperty("java.class.path");
    private static final int STRANGERS = 1000;

    @Test
    void aThousandSlowStrangersAndTooFewDescriptorsDoNotStopAJob(@TempDir Path dir) throws Exception {
        Path pids = Files.createDirectories(dir.resolve("pids"));
        // The launcher alone gets the low limit; its ranks start from it with the same limit, which they live with.
        String launcher = RankEnvironment.shellQuote(List.of(ChildCommand.javaExecutable(), "-cp", CP,
                Main.class.getName(), "run", "-np", "3", "-cp", CP, Worker.class.getName(), "steady-after-gate",
                pids.toString()));
        ProcessBuilder pb = new ProcessBuilder("sh", "-c", "ulimit -n 256 && exec " + launcher)
                .redirectErrorStream(true).redirectOutput(dir.resolve("job.log").toFile());
        Process job = pb.start();
        AtomicBoolean stop = new AtomicBoolean();
        Thread flood = null;
        try {
            Path portFile = pids.resolveSibling("pids.port");
            for (int i = 0; i < 600 && !Files.exists(portFile); i++) {
                assertTrue(job.isAlive(), Files.readString(dir.resolve("job.log")));
                Thread.sleep(50);
            }
            int port = Integer.parseInt(Files.readString(portFile).trim());
            List<Socket> strangers = new ArrayList<>();
            for (int i = 0; i < STRANGERS; i++) {
                strangers.add(connect(port));
            }
            flood = Thread.ofPlatform().daemon().start(() -> trickle(strangers, port, stop));
            Files.writeString(pids.resolveSibling("pids.gate"), "go");
            assertTrue(job.waitFor(150, TimeUnit.SECONDS), "the job hung: " + Files.readString(dir.resolve("job.log")));
            String log = Files.readString(dir.resolve("job.log"), StandardCharsets.UTF_8);
            assertEquals(0, job.exitValue(), log);
            for (int rank = 0; rank < 3; rank++) {
                assertTrue(log.contains("[" + rank + "]<stdout>:rank " + rank + " ok"), log);
            }
            // The strangers did exhaust the launcher's descriptors, and it said so (rate-limited), and went on.
            assertTrue(log.contains("could not accept a connection (Too many open files)"), log);
            assertTrue(log.lines().filter(l -> l.contains("could not accept a connection")).count() < 20, log);
        } finally {
            stop.set(true);
            if (flood != null) {
                flood.join(10_000);
            }
            job.destroyForcibly();
        }
    }

    private static Socket connect(int port) {
        try {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setSoTimeout(1);
            return s;
        } catch (IOException refusedOrReset) {
            return null;   // the launcher is out of descriptors or dropped us: try again next round
        }
    }

    /** Every second, one byte on every stranger's connection; a dropped one connects again. */
    private static void trickle(List<Socket> strangers, int port, AtomicBoolean stop) {
        while (!stop.get()) {
            for (int i = 0; i < strangers.size() && !stop.get(); i++) {
                Socket s = strangers.get(i);
                try {
                    if (s == null || s.isClosed()) {
                        throw new IOException("gone");
                    }
                    s.getOutputStream().write('K');
                } catch (IOException dropped) {
                    try {
                        if (s != null) {
                            s.close();
                        }
                    } catch (IOException ignored) {
                        // Already gone.
                    }
                    strangers.set(i, connect(port));
                }
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
        }
        for (Socket s : strangers) {
            try {
                if (s != null) {
                    s.close();
                }
            } catch (IOException ignored) {
                // Closing at the end.
            }
        }
    }
}
