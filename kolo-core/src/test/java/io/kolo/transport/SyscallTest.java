package io.kolo.transport;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The one syscall(2) binding behind futexes and cross-memory reads: bound where it should be, and each call works. */
class SyscallTest {
    private static final int EAGAIN = 11;

    private static void assumeKnownPlatform() {
        String arch = System.getProperty("os.arch");
        assumeTrue(System.getProperty("os.name").startsWith("Linux")
                && (arch.equals("amd64") || arch.equals("x86_64") || arch.equals("aarch64")),
                "syscall numbers are known on Linux x86-64 and AArch64 only, not " + arch);
    }

    @Test
    void onLinuxBothCallsAreAvailable() {
        assumeKnownPlatform();
        // Without the binding the transport would still work, polling and copying twice: say so here instead.
        assertTrue(Syscall.AVAILABLE, "syscall() could not be bound");
        assertTrue(Futex.AVAILABLE);
        assertTrue(CrossMemory.AVAILABLE);
    }

    @Test
    void aFutexWaitOnAChangedWordFailsWithEagainAndAWakeFindsNobody() throws Throwable {
        assumeKnownPlatform();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment word = arena.allocate(8, 8);
            word.set(ValueLayout.JAVA_INT, 0, 5);
            MemorySegment errno = arena.allocate(Syscall.ERRNO_LAYOUT);
            // FUTEX_WAIT (0) expecting 4 while the word holds 5: returns at once, errno EAGAIN.
            long r = (long) Syscall.CALL.invokeExact(errno, Syscall.FUTEX, word.address(), 0L, 4L, 0L, 0L, 0L);
            assertEquals(-1, r);
            assertEquals(EAGAIN, Syscall.errno(errno));
            // FUTEX_WAKE (1): nobody sleeps on the word.
            assertEquals(0L, (long) Syscall.CALL.invokeExact(errno, Syscall.FUTEX, word.address(), 1L,
                    (long) Integer.MAX_VALUE, 0L, 0L, 0L));
        }
    }

    @Test
    void aCrossMemoryReadOfThisProcessCopiesTheBytesAndAGoneProcessIsEsrch() throws Exception {
        assumeKnownPlatform();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(64, 8);
            for (int i = 0; i < 8; i++) {
                src.setAtIndex(ValueLayout.JAVA_LONG, i, 0x0102030405060708L * (i + 1));
            }
            MemorySegment dst = arena.allocate(64, 8);
            CrossMemory cross = new CrossMemory(arena);
            int self = (int) ProcessHandle.current().pid();
            // Reading one's own memory needs no ptrace permission.
            assertEquals(64, cross.read(self, src.address(), dst, 0, 64));
            assertEquals(-1L, src.mismatch(dst));

            Process gone = new ProcessBuilder("true").start();
            gone.waitFor();
            assertEquals(-1, cross.read((int) gone.pid(), src.address(), dst, 0, 64));
            assertEquals(CrossMemory.ESRCH, cross.lastErrno());
        }
    }
}
