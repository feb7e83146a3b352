package io.kolo.transport;

import io.kolo.bootstrap.LazyLogger;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * libc's {@code syscall(2)}, bound once for every system call the shared-memory transport makes itself (futex,
 * process_vm_readv). Binding a native call costs a starting JVM tens of milliseconds, and its code generators then keep
 * the JIT busy, for each distinct shape of call; calls of the same shape share what the linker made
 * (docs/performance.md, "First run"). So every call here has one shape: the call's number and six 64-bit arguments,
 * pointers passed as addresses, with errno captured.
 *
 * <p>Known on Linux x86-64 and AArch64; elsewhere {@link #AVAILABLE} is false and the callers do without.
 */
// Every method is a native call, allowed by --enable-native-access=ALL-UNNAMED, which kolo run passes.
@SuppressWarnings("restricted")
final class Syscall {
    private static final System.Logger LOG = LazyLogger.of(Syscall.class);
    static final StructLayout ERRNO_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = ERRNO_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    /**
     * {@code (MemorySegment errno, long number, long a1, ..., long a6) -> long}: -1 with errno set on failure, as
     * libc's wrappers.
     */
    static final MethodHandle CALL;
    /** The call numbers, -1 on an architecture not listed (then nothing is bound). */
    static final long FUTEX;
    static final long PROCESS_VM_READV;
    static final boolean AVAILABLE;

    static {
        long futex = -1;
        long readv = -1;
        if (System.getProperty("os.name").startsWith("Linux")) {
            switch (System.getProperty("os.arch")) {
                case "amd64", "x86_64" -> {
                    futex = 202;
                    readv = 310;
                }
                case "aarch64" -> {
                    futex = 98;
                    readv = 270;
                }
                default -> {
                }
            }
        }
        MethodHandle handle = null;
        if (futex > 0) {
            try {
                Linker linker = Linker.nativeLinker();
                ValueLayout.OfLong word = ValueLayout.JAVA_LONG;
                // Variadic arguments are all passed as 64-bit values: syscall() reads them as longs.
                handle = linker.downcallHandle(linker.defaultLookup().find("syscall").orElseThrow(),
                        FunctionDescriptor.of(word, word, word, word, word, word, word, word),
                        Linker.Option.firstVariadicArg(1), Linker.Option.captureCallState("errno"));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "syscall() unavailable: shared memory polls and copies twice", e);
                handle = null;
            }
        }
        CALL = handle;
        FUTEX = futex;
        PROCESS_VM_READV = readv;
        AVAILABLE = handle != null;
    }

    private Syscall() {
    }

    /** The errno a failed call left in {@code slot} (a segment of {@link #ERRNO_LAYOUT}). */
    static int errno(MemorySegment slot) {
        return (int) ERRNO.get(slot, 0L);
    }
}
