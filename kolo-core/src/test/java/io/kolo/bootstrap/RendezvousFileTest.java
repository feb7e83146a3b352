package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;
import io.kolo.launch.JobSecret;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RendezvousFileTest {

    private static Map<String, String> tmp(Path dir) {
        return Map.of("TMPDIR", dir.toString());
    }

    @Test
    void whatRank0PublishesOthersReadFromAnOwnerOnlyFile(@TempDir Path dir) throws Exception {
        RendezvousFile rank0 = RendezvousFile.forJob(tmp(dir), "Open MPI:123");
        JobSecret secret = JobSecret.generate();
        rank0.publish(4711, secret);

        RendezvousFile.Entry e = RendezvousFile.forJob(tmp(dir), "Open MPI:123").await(Duration.ofSeconds(5), "late");
        assertEquals(4711, e.port());
        assertEquals(secret.toHex(), e.secret().toHex());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(rank0.path())));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(rank0.path().getParent())));

        rank0.delete();
        assertFalse(Files.exists(rank0.path()));
    }

    @Test
    void anotherJobsFileIsNotThisOnes(@TempDir Path dir) {
        RendezvousFile.forJob(tmp(dir), "Slurm:7.0").publish(4711, JobSecret.generate());
        KoloTimeoutException t = assertThrows(KoloTimeoutException.class,
                () -> RendezvousFile.forJob(tmp(dir), "Slurm:7.1").await(Duration.ofMillis(300), "no rank 0"));
        assertEquals("no rank 0", t.getMessage());
    }

    @Test
    void aFileLeftByADeadRank0IsNeverTakenForTheCurrentOneAndIsCleanedUp(@TempDir Path dir) throws Exception {
        RendezvousFile file = RendezvousFile.forJob(tmp(dir), "Open MPI:55");
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        // What a rank 0 that crashed would have left behind, with the same job id.
        Files.writeString(file.path(), "kolo-rendezvous 1\njob=Open MPI:55\npid=" + dead.pid() + "\nstart="
                + dead.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(1L)
                + "\nport=1\nsecret=" + JobSecret.generate().toHex() + "\n");
        assertThrows(KoloTimeoutException.class, () -> file.await(Duration.ofMillis(300), "stale"));

        // The next rank 0 of another job removes it when it publishes its own.
        RendezvousFile other = RendezvousFile.forJob(tmp(dir), "Open MPI:56");
        other.publish(4712, JobSecret.generate());
        try (Stream<Path> files = Files.list(file.path().getParent())) {
            assertEquals(List.of(other.path()), files.toList());
        }
    }

    @Test
    void aDirectoryOthersCanEnterIsRefused(@TempDir Path dir) throws Exception {
        RendezvousFile.forJob(tmp(dir), "x").publish(1, JobSecret.generate());
        Path mine;
        try (Stream<Path> dirs = Files.list(dir)) {
            mine = dirs.findFirst().orElseThrow();
        }
        Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rwxr-xr-x"));
        KoloException e = assertThrows(KoloException.class, () -> RendezvousFile.forJob(tmp(dir), "x"));
        assertTrue(e.getMessage().contains(mine + " must be a directory owned by this user with mode 700"),
                e.getMessage());
    }
}
