package io.kolo.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Linux cross-memory attach: {@code process_vm_readv(2)} copies bytes out of another process's memory in one kernel
 * copy, where a shared-memory ring takes two (the sender's into the ring, the receiver's out of it). Open MPI's
 * shared-memory transport uses it for large messages the same way. It needs ptrace-level access to the other process
 * (same user; a Yama {@code ptrace_scope} of 1 or more, or a seccomp filter, may refuse it), so ranks probe each pair
 * before relying on it. Where the call is missing, {@link #AVAILABLE} is false.
 *
 * <p>One instance per transport: it owns the two native {@code struct iovec}s and the errno slot, so a read
 * allocates nothing.
 */
final class CrossMemory {
    private static final System.Logger LOG = System.getLogger(CrossMemory.class.getName());
    private static final MethodHandle READV;
    private static final StructLayout ERRNO_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = ERRNO_LAYOUT.varHandle(
            java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    static final boolean AVAILABLE;
    static final int ESRCH = 3;
    static final int EFAULT = 14;

    static {
        MethodHandle handle = null;
        if (System.getProperty("os.name").startsWith("Linux")) {
            try {
                Linker linker = Linker.nativeLinker();
                handle = linker.downcallHandle(linker.defaultLookup().find("process_vm_readv").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                        Linker.Option.captureCallState("errno"));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "process_vm_readv unavailable; shared memory copies twice", e);
                handle = null;
            }
        }
        READV = handle;
        AVAILABLE = handle != null;
    }

    private final MemorySegment local;
    private final MemorySegment remote;
    private final MemorySegment errno;
    private int lastErrno;

    CrossMemory(Arena arena) {
        this.local = arena.allocate(16, 8);
        this.remote = arena.allocate(16, 8);
        this.errno = arena.allocate(ERRNO_LAYOUT);
    }

    /**
     * Copies {@code length} bytes at {@code address} in process {@code pid} into {@code dst} (native) at
     * {@code offset}; returns the bytes copied (a short count is possible), or -1 with {@link #lastErrno()} set.
     */
    long read(int pid, long address, MemorySegment dst, long offset, long length) {
        local.set(ValueLayout.JAVA_LONG, 0, dst.address() + offset);
        local.set(ValueLayout.JAVA_LONG, 8, length);
        remote.set(ValueLayout.JAVA_LONG, 0, address);
        remote.set(ValueLayout.JAVA_LONG, 8, length);
        long r;
        try {
            r = (long) READV.invokeExact(errno, pid, local, 1L, remote, 1L, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("process_vm_readv failed", e);
        }
        if (r < 0) {
            lastErrno = (int) ERRNO.get(errno, 0L);
        }
        return r;
    }

    /** The errno of the last failed {@link #read}. */
    int lastErrno() {
        return lastErrno;
    }
}
