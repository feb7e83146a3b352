package io.kolo.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Linux futexes on shared mappings, through {@code syscall(2)}: a rank sleeps in the kernel on a word of its inbox and
 * the rank that changes that word wakes it, like a socket wakes a selector. Parking for a fixed time instead either
 * burns a core or adds its interval to every message; yielding on a crowded host gives the core away for a whole
 * time slice. Where futexes are unavailable (not Linux/x86-64 or AArch64, or native access denied), {@link #AVAILABLE}
 * is false and callers park briefly instead. The call goes through {@link Syscall}.
 */
final class Futex {
    // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
    private static final long FUTEX_WAIT = 0;
    private static final long FUTEX_WAKE = 1;
    /**
     * Where a futex call's errno lands, shared by every thread and never read: a wait that timed out, was woken or
     * found the word changed means the same to its caller, which looks at the word again.
     */
    private static final MemorySegment IGNORED_ERRNO = Syscall.AVAILABLE
            ? Arena.global().allocate(Syscall.ERRNO_LAYOUT) : MemorySegment.NULL;
    static final boolean AVAILABLE = Syscall.AVAILABLE;

    private Futex() {
    }

    /**
     * Sleeps while the int at {@code word} still equals {@code expected}, at most the relative {@code timespec}
     * (a native {@code struct timespec}); returns early on a wake, a signal or a changed value.
     */
    static void await(MemorySegment word, int expected, MemorySegment timespec) {
        try {
            long r = (long) Syscall.CALL.invokeExact(IGNORED_ERRNO, Syscall.FUTEX, word.address(), FUTEX_WAIT,
                    (long) expected, timespec.address(), 0L, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("futex wait failed", e);
        }
    }

    /** Wakes every thread sleeping on {@code word}. */
    static void wakeAll(MemorySegment word) {
        try {
            long r = (long) Syscall.CALL.invokeExact(IGNORED_ERRNO, Syscall.FUTEX, word.address(), FUTEX_WAKE,
                    (long) Integer.MAX_VALUE, 0L, 0L, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("futex wake failed", e);
        }
    }
}
