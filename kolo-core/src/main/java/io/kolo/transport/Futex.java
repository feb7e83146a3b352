package io.kolo.transport;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Linux futexes on shared mappings, through {@code syscall(2)}: a rank sleeps in the kernel on a word of its inbox and
 * the rank that changes that word wakes it, like a socket wakes a selector. Parking for a fixed time instead either
 * burns a core or adds its interval to every message; yielding on a crowded host gives the core away for a whole
 * time slice. Where futexes are unavailable (not Linux/x86-64 or AArch64, or native access denied), {@link #AVAILABLE}
 * is false and callers park briefly instead.
 */
final class Futex {
    private static final System.Logger LOG = System.getLogger(Futex.class.getName());
    // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
    private static final long FUTEX_WAIT = 0;
    private static final long FUTEX_WAKE = 1;
    private static final MethodHandle SYSCALL;
    private static final long SYS_FUTEX;
    static final boolean AVAILABLE;

    static {
        MethodHandle handle = null;
        long nr = -1;
        String arch = System.getProperty("os.arch");
        if (System.getProperty("os.name").startsWith("Linux")) {
            nr = switch (arch) {
                case "amd64", "x86_64" -> 202;
                case "aarch64" -> 98;
                default -> -1;
            };
        }
        if (nr > 0) {
            try {
                Linker linker = Linker.nativeLinker();
                // Variadic arguments are all passed as 64-bit values: syscall() reads them as longs.
                handle = linker.downcallHandle(linker.defaultLookup().find("syscall").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS,
                                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
                        Linker.Option.firstVariadicArg(1));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "futexes unavailable; shared memory waits will poll", e);
                handle = null;
            }
        }
        SYSCALL = handle;
        SYS_FUTEX = nr;
        AVAILABLE = handle != null;
    }

    private Futex() {
    }

    /**
     * Sleeps while the int at {@code word} still equals {@code expected}, at most the relative {@code timespec}
     * (a native {@code struct timespec}); returns early on a wake, a signal or a changed value.
     */
    static void await(MemorySegment word, int expected, MemorySegment timespec) {
        try {
            long r = (long) SYSCALL.invokeExact(SYS_FUTEX, word, FUTEX_WAIT, (long) expected, timespec,
                    MemorySegment.NULL, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("futex wait failed", e);
        }
    }

    /** Wakes every thread sleeping on {@code word}. */
    static void wakeAll(MemorySegment word) {
        try {
            long r = (long) SYSCALL.invokeExact(SYS_FUTEX, word, FUTEX_WAKE, (long) Integer.MAX_VALUE,
                    MemorySegment.NULL, MemorySegment.NULL, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("futex wake failed", e);
        }
    }
}
