package io.kolo.launcher.start;

import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** How the launcher stops processes: local ones by signal, remote ranks by closing their ssh session's stdin. */
public final class ProcessStopper {
    private ProcessStopper() {
    }

    /**
     * SIGTERM to every process of {@code all}, {@code grace} for them to clean up, then SIGKILL to those left and
     * their children; false if some did not exit even then.
     */
    public static boolean stop(Collection<ProcessHandle> all, Duration grace) {
        if (all.isEmpty()) {
            return true;
        }
        for (ProcessHandle h : all) {
            h.destroy();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle h : all) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                h.onExit().get(left, TimeUnit.NANOSECONDS);
            } catch (Exception timeoutOrInterrupt) {
                break;
            }
        }
        for (ProcessHandle h : all) {
            if (h.isAlive()) {
                h.descendants().forEach(ProcessHandle::destroyForcibly);
                h.destroyForcibly();
            }
        }
        CompletableFuture<?>[] exited = all.stream().map(ProcessHandle::onExit).toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(exited).get(grace.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    /**
     * Closing a remote rank's ssh stdin makes the wrapper on its host terminate it (TERM, grace, KILL), and ssh
     * then exits with the rank's code; an ssh client still there after {@code wait} is killed, which also ends the
     * remote side, since the wrapper sees the same EOF.
     */
    public static void stopRemote(List<Process> remoteRanks, Duration wait) {
        if (remoteRanks.isEmpty()) {
            return;
        }
        for (Process p : remoteRanks) {
            try {
                p.getOutputStream().close();
            } catch (IOException ignored) {
                // Already closed: the rank is on its way out.
            }
        }
        long deadline = System.nanoTime() + wait.toNanos();
        for (Process p : remoteRanks) {
            long left = deadline - System.nanoTime();
            try {
                if (left <= 0 || !p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
