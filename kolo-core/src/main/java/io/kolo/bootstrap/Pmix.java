package io.kolo.bootstrap;

import io.kolo.KoloException;
import io.kolo.KoloTimeoutException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Rank 0 hands every rank one string through the launcher's PMIx server (Open MPI's mpirun, or Slurm with
 * {@code --mpi=pmix}), so that ranks on several hosts meet with no variable at all. It calls the system's
 * {@code libpmix.so.2} through the JDK's foreign function API: PMIx_Init, PMIx_Put (global scope),
 * PMIx_Commit, PMIx_Fence over the whole namespace, PMIx_Get of rank 0's key, PMIx_Finalize. PMIx passes
 * the value only to processes of this job.
 */
final class Pmix {
    private static final String LIBRARY = "libpmix.so.2";
    private static final String KEY = "kolo.rendezvous";
    // pmix_proc_t: char nspace[256]; uint32_t rank.
    private static final long PROC_SIZE = 260;
    private static final long PROC_RANK = 256;
    // pmix_value_t: uint16_t type; (padding) union at 8, at most 24 bytes.
    private static final long VALUE_SIZE = 32;
    private static final long VALUE_DATA = 8;
    private static final short PMIX_STRING = 3;
    private static final byte PMIX_GLOBAL = 3;

    private Pmix() {
    }

    /** Whether this process was started with a PMIx server to talk to. */
    static boolean offered(Map<String, String> env) {
        return env.containsKey("PMIX_NAMESPACE") && env.keySet().stream().anyMatch(k -> k.startsWith("PMIX_SERVER_URI"));
    }

    /**
     * Every rank calls this; rank 0 passes its value, the others null. Returns rank 0's value on every rank.
     *
     * @throws KoloTimeoutException when not every rank took part within {@code timeout}
     * @throws KoloException        when libpmix is missing or a PMIx call fails
     */
    static String shareFromRank0(int rank, String value, Duration timeout) {
        CompletableFuture<String> done = new CompletableFuture<>();
        // PMIx_Fence has no deadline of its own; a daemon thread lets this rank give up on time.
        Thread.ofPlatform().daemon().name("kolo-pmix").start(() -> {
            try {
                done.complete(exchange(rank, value));
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        try {
            return done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new KoloTimeoutException("rank " + rank + ": the PMIx exchange with rank 0 did not complete within "
                    + timeout.toSeconds() + " s (KOLO_START_TIMEOUT_SECONDS): does every rank call Kolo.init()?");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new KoloException("PMIx exchange failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KoloException("interrupted during the PMIx exchange", e);
        }
    }

    // Native calls into libpmix, allowed by --enable-native-access=ALL-UNNAMED.
    @SuppressWarnings("restricted")
    private static String exchange(int rank, String value) throws Throwable {
        Linker linker = Linker.nativeLinker();
        // The library stays loaded for the life of the process: PMIx keeps threads of its own.
        Arena arena = Arena.global();
        SymbolLookup lib;
        try {
            lib = SymbolLookup.libraryLookup(LIBRARY, arena);
        } catch (IllegalArgumentException e) {
            throw new KoloException("cannot load " + LIBRARY + " (" + e.getMessage() + "): install the PMIx library"
                    + " (Debian: libpmix2) or set KOLO_RENDEZVOUS_ADDR to rank 0's host", e);
        }
        MethodHandle init = fn(linker, lib, "PMIx_Init", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
        MethodHandle put = fn(linker, lib, "PMIx_Put", FunctionDescriptor.of(JAVA_INT, JAVA_BYTE, ADDRESS, ADDRESS));
        MethodHandle commit = fn(linker, lib, "PMIx_Commit", FunctionDescriptor.of(JAVA_INT));
        MethodHandle fence = fn(linker, lib, "PMIx_Fence",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG));
        MethodHandle get = fn(linker, lib, "PMIx_Get",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
        MethodHandle finalize = fn(linker, lib, "PMIx_Finalize", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));

        try (Arena call = Arena.ofConfined()) {
            MemorySegment self = call.allocate(PROC_SIZE, 8);
            check("PMIx_Init", (int) init.invokeExact(self, MemorySegment.NULL, 0L));
            try {
                MemorySegment key = call.allocateFrom(KEY);
                if (rank == 0) {
                    MemorySegment v = call.allocate(VALUE_SIZE, 8);
                    v.set(JAVA_SHORT, 0, PMIX_STRING);
                    v.set(ADDRESS, VALUE_DATA, call.allocateFrom(value));
                    check("PMIx_Put", (int) put.invokeExact(PMIX_GLOBAL, key, v));
                }
                check("PMIx_Commit", (int) commit.invokeExact());
                check("PMIx_Fence", (int) fence.invokeExact(MemorySegment.NULL, 0L, MemorySegment.NULL, 0L));
                MemorySegment rank0 = call.allocate(PROC_SIZE, 8);
                MemorySegment.copy(self, 0, rank0, 0, PROC_RANK);
                rank0.set(JAVA_INT, PROC_RANK, 0);
                MemorySegment out = call.allocate(ADDRESS);
                check("PMIx_Get", (int) get.invokeExact(rank0, key, MemorySegment.NULL, 0L, out));
                MemorySegment v = out.get(ADDRESS, 0).reinterpret(VALUE_SIZE);
                if (v.get(JAVA_SHORT, 0) != PMIX_STRING) {
                    throw new KoloException("PMIx_Get of " + KEY + " returned type " + v.get(JAVA_SHORT, 0)
                            + ", not a string");
                }
                // The value is PMIx's to free; one small string per process is left to it.
                return v.get(ADDRESS, VALUE_DATA).reinterpret(Integer.MAX_VALUE).getString(0);
            } finally {
                // Open MPI treats a process that initialised PMIx and exits without finalising as failed.
                int ignored = (int) finalize.invokeExact(MemorySegment.NULL, 0L);
            }
        }
    }

    // A native call, allowed by --enable-native-access=ALL-UNNAMED.
    @SuppressWarnings("restricted")
    private static MethodHandle fn(Linker linker, SymbolLookup lib, String name, FunctionDescriptor d) {
        return linker.downcallHandle(lib.find(name).orElseThrow(
                () -> new KoloException(LIBRARY + " has no " + name + ": expected PMIx 3 or later")), d);
    }

    private static void check(String call, int status) {
        if (status != 0) {
            throw new KoloException(call + " failed with PMIx status " + status
                    + "; set KOLO_RENDEZVOUS_ADDR to rank 0's host to meet without PMIx");
        }
    }
}
