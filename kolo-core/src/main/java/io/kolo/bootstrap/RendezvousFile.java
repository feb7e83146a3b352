package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How ranks on one host that were started by mpirun or srun find rank 0's rendezvous server with no
 * variable: rank 0 writes its port and a fresh secret to a file only this user can read, named after the
 * launch's job id; the other ranks wait for it. The file names rank 0's process (pid and start time), so a
 * file left by a job that died is never taken for the current one.
 */
final class RendezvousFile {
    private static final String MAGIC = "kolo-rendezvous 1";
    private static final Duration POLL = Duration.ofMillis(25);
    private static final Set<PosixFilePermission> OWNER_ONLY_DIR = PosixFilePermissions.fromString("rwx------");

    private final Path file;
    private final String jobId;

    /** What rank 0 published. */
    record Entry(int port, JobSecret secret) {
    }

    private RendezvousFile(Path file, String jobId) {
        this.file = file;
        this.jobId = jobId;
    }

    /** The file for {@code jobId} in this user's private directory under {@code TMPDIR} (default /tmp). */
    static RendezvousFile forJob(Map<String, String> env, String jobId) {
        String tmp = env.get("TMPDIR");
        Path dir = Path.of(tmp == null || tmp.isBlank() ? "/tmp" : tmp).resolve("kolo-" + uid());
        return new RendezvousFile(privateDirectory(dir).resolve("rendezvous-" + digest(jobId)), jobId);
    }

    Path path() {
        return file;
    }

    /** Rank 0: publishes {@code port} and {@code secret} atomically (readers never see half a file). */
    void publish(int port, JobSecret secret) {
        ProcessHandle self = ProcessHandle.current();
        String text = MAGIC + "\njob=" + jobId + "\npid=" + self.pid() + "\nstart=" + startMillis(self)
                + "\nport=" + port + "\nsecret=" + secret.toHex() + "\n";
        try {
            removeStale(file.getParent());
            Path tmp = Files.createTempFile(file.getParent(), ".rendezvous-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            try {
                Files.writeString(tmp, text, StandardCharsets.UTF_8);
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new KoloException("rank 0 cannot publish its rendezvous address in " + file + ": " + e.getMessage(), e);
        }
    }

    /** Other ranks: waits until rank 0 of this launch, still alive, has published. */
    Entry await(Duration timeout, String onTimeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Optional<Entry> e = read();
            if (e.isPresent()) {
                return e.get();
            }
            if (System.nanoTime() >= deadline) {
                throw new KoloTimeoutException(onTimeout);
            }
            try {
                Thread.sleep(POLL);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new KoloException("interrupted while waiting for " + file, ie);
            }
        }
    }

    /** Rank 0 at close: the address is no longer served. */
    void delete() {
        try {
            Optional<Map<String, String>> fields = fields(file);
            // Only our own file: a later job with the same id may have replaced it.
            if (fields.isPresent() && Long.toString(ProcessHandle.current().pid()).equals(fields.get().get("pid"))) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            // Left behind, it is recognised as stale by its dead pid.
        }
    }

    private Optional<Entry> read() {
        Optional<Map<String, String>> f;
        try {
            f = fields(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        if (f.isEmpty() || !jobId.equals(f.get().get("job")) || !alive(f.get())) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Entry(Integer.parseInt(f.get().get("port")), JobSecret.fromHex(f.get().get("secret"))));
        } catch (RuntimeException e) {
            throw new KoloException(file + " is corrupt (" + e.getMessage() + "); delete it and start again", e);
        }
    }

    private static Optional<Map<String, String>> fields(Path file) throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        if (!text.startsWith(MAGIC + "\n")) {
            return Optional.empty();
        }
        Map<String, String> m = new HashMap<>();
        text.lines().skip(1).forEach(l -> {
            int eq = l.indexOf('=');
            if (eq > 0) {
                m.put(l.substring(0, eq), l.substring(eq + 1));
            }
        });
        return Optional.of(m);
    }

    private static boolean alive(Map<String, String> f) {
        try {
            long pid = Long.parseLong(f.getOrDefault("pid", "-1"));
            long start = Long.parseLong(f.getOrDefault("start", "-1"));
            return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).map(p -> startMillis(p) == start).orElse(false);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** Files of jobs whose rank 0 died without closing; harmless, but they should not pile up. */
    private static void removeStale(Path dir) throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "rendezvous-*")) {
            for (Path f : files) {
                Optional<Map<String, String>> fields = fields(f);
                if (fields.isPresent() && !alive(fields.get())) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    private static long startMillis(ProcessHandle p) {
        return p.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /** Creates the directory owner-only, and refuses one that someone else made or opened up. */
    private static Path privateDirectory(Path dir) {
        try {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY_DIR));
            } catch (FileAlreadyExistsException e) {
                // Made by another rank, or an earlier job: checked below like any other.
            }
            int owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) || owner != uid()
                    || !Files.getPosixFilePermissions(dir).equals(OWNER_ONLY_DIR)) {
                throw new KoloException(dir + " must be a directory owned by this user with mode 700 (it holds the"
                        + " job secret); remove it or fix its owner and mode");
            }
            return dir;
        } catch (IOException | UnsupportedOperationException e) {
            throw new KoloException("cannot create the private directory " + dir + " for the rendezvous address: "
                    + e.getMessage(), e);
        }
    }

    private static int uid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException e) {
            throw new KoloException("cannot find this process's user id (/proc/self): " + e.getMessage(), e);
        }
    }

    private static String digest(String jobId) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(jobId.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable in this JDK", e);
        }
    }
}
