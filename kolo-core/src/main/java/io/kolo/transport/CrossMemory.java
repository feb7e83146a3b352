package io.kolo.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Linux cross-memory attach: {@code process_vm_readv(2)} copies bytes out of another process's memory in one kernel
 * copy, where a shared-memory ring takes two (the sender's into the ring, the receiver's out of it). Open MPI's
 * shared-memory transport uses it for large messages the same way. It needs ptrace-level access to the other process
 * (same user; a Yama {@code ptrace_scope} of 1 or more, or a seccomp filter, may refuse it), so ranks probe each pair
 * before relying on it. Where the call is missing, {@link #AVAILABLE} is false. The call goes through {@link Syscall}.
 *
 * <p>One instance per transport: it owns the two native {@code struct iovec}s and the errno slot, so a read
 * allocates nothing.
 */
final class CrossMemory {
    static final boolean AVAILABLE = Syscall.AVAILABLE;
    static final int ESRCH = 3;
    static final int EFAULT = 14;

    private final MemorySegment local;
    private final MemorySegment remote;
    private final MemorySegment errno;
    private int lastErrno;

    CrossMemory(Arena arena) {
        this.local = arena.allocate(16, 8);
        this.remote = arena.allocate(16, 8);
        // In the transport's arena, with the iovecs: the call takes addresses, not segments, and the errno slot is
        // the one segment it is passed, which keeps that arena (and so the iovecs and the transport's staging
        // buffer) from being closed while the kernel copies.
        this.errno = arena.allocate(Syscall.ERRNO_LAYOUT);
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
            r = (long) Syscall.CALL.invokeExact(errno, Syscall.PROCESS_VM_READV, (long) pid, local.address(), 1L,
                    remote.address(), 1L, 0L);
        } catch (Throwable e) {
            throw new IllegalStateException("process_vm_readv failed", e);
        }
        if (r < 0) {
            lastErrno = Syscall.errno(errno);
        }
        return r;
    }

    /** The errno of the last failed {@link #read}. */
    int lastErrno() {
        return lastErrno;
    }
}
