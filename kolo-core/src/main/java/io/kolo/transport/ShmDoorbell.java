package io.kolo.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How a rank sleeps while it waits for the host's other ranks, and how they wake it: a counter in its inbox file that
 * every change it may wait for increments ({@link ShmFile#ringBell()}), slept on with a futex where there is one.
 */
final class ShmDoorbell {
    /** Without a futex: park this long between looks. */
    private static final long PARK_NANOS = 20_000;
    /** Longest futex sleep: liveness and timeout checks run at least this often while a rank waits. */
    static final long SLEEP_NANOS = 1_000_000;

    private final ShmFile own;
    private final ShmFile[] peerFiles;
    /** Native {@code struct timespec} of {@link #SLEEP_NANOS} for futex waits, allocated once. */
    private final MemorySegment sleepTimespec;

    ShmDoorbell(ShmFile own, ShmFile[] peerFiles, Arena arena) {
        this.own = own;
        this.peerFiles = peerFiles;
        this.sleepTimespec = arena.allocate(16, 8);
        sleepTimespec.set(ValueLayout.JAVA_LONG, 0, 0);
        sleepTimespec.set(ValueLayout.JAVA_LONG, 8, SLEEP_NANOS);
    }

    /** Waits until a peer rings this rank's doorbell, or a short while; not at all if {@code canProgress} already. */
    void sleep(BooleanSupplier canProgress) {
        if (!Futex.AVAILABLE || Thread.currentThread().isVirtual()) {
            // A virtual thread in a system call would pin its carrier; parking lets others run.
            LockSupport.parkNanos(PARK_NANOS);
            return;
        }
        own.sleepers(1);
        try {
            int bell = own.bell();
            // Re-check after announcing the sleep: a peer that changed something before it saw us rang already.
            if (canProgress.getAsBoolean()) {
                return;
            }
            Futex.await(own.bellWord(), bell, sleepTimespec);
        } finally {
            own.sleepers(-1);
        }
    }

    /** Rings this rank's doorbell (a thread of ours may sleep on it) and every peer's (they may wait on us). */
    void wakeEveryone() {
        own.ringBell();
        for (ShmFile f : peerFiles) {
            if (f != null) {
                f.ringBell();
            }
        }
    }
}
