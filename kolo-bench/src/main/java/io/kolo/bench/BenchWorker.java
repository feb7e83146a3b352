package io.kolo.bench;

import io.kolo.Communicator;
import io.kolo.Handle;
import io.kolo.ReduceOp;
import io.kolo.Tensor;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One rank of {@code kolo bench}: for each step, checks the collective's result once, warms up, then times
 * each iteration. Rank 0 writes one {@link Measurement} line per size to the result file, or with {@code -} for it to
 * its standard output behind {@link #RESULT_PREFIX}, which reaches the launcher from whichever host rank 0 runs on.
 *
 * <p>It uses the public API exactly as a training loop does: native tensors (or Java arrays), ops named per size (so after
 * the first call the response cache skips the coordinator), and {@code ...Async(name, ...).await()}. The
 * timed loop allocates nothing of its own.
 *
 * <p>Usage: {@code BenchWorker COLLECTIVE DTYPE STEPS RESULT_FILE [MEMORY]}, with steps as {@link Step#format} and
 * memory {@code native} (the default) or {@code heap} ({@link Memory}).
 */
public final class BenchWorker {
    /**
     * Set (to anything) in the ranks' environment by {@code kolo bench --fresh-input}: every rank rewrites its input
     * before each timed op, outside the timing.
     */
    public static final String FRESH_INPUT = "KOLO_BENCH_FRESH_INPUT";
    /** Starts each result line rank 0 prints to its standard output when the result file is {@code -}. */
    public static final String RESULT_PREFIX = "kolo-bench-result ";
    /** How long the JIT warm-up runs before the first timed op (see {@link #warmUpTheJit}). */
    private static final long JIT_WARMUP_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(6);
    /** After {@link #JIT_WARMUP_NANOS}, the JIT warm-up goes on until no rank's JIT has compiled for this long... */
    private static final long JIT_QUIET_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    /** ...but no longer than this in all. */
    private static final long JIT_WARMUP_MAX_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    /** A size's warm-up goes on past {@link #SIZE_WARMUP_NANOS} while the JIT compiles, up to this long. */
    private static final long SIZE_WARMUP_MAX_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
    private static final int JIT_WARMUP_OPS = 2_000;
    /** Warm-up passes that use names never seen before (see {@link #warmUpTheJit}). */
    private static final int JIT_WARMUP_FRESH_NAMES = 100;
    /** The largest size up to this one is warmed up too, so the bulk loops (ring, kernels, copies) compile. */
    private static final long JIT_WARMUP_LARGE_BYTES = 1 << 20;
    /**
     * Each size warms up for at least this long (rank 0's clock) on top of its warm-up iterations; see
     * {@link #warmUp}.
     */
    static final long SIZE_WARMUP_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(250);
    /** How long a rank waits for the harness to open a slice (a peer's slice may take up to its own timeout). */
    private static final java.time.Duration GATE_TIMEOUT = java.time.Duration.ofMinutes(15);
    private final JitActivity jit = new JitActivity();
    private final Communicator comm;
    private final Collective collective;
    /** Null unless this run takes turns with a peer ({@link SliceGate}). */
    private SliceGate gate;
    private int slices = 1;
    private int nextSlice;
    private final ElementType type;
    private final Memory memory;
    private final boolean freshInput = System.getenv(FRESH_INPUT) != null;
    private final int rank;
    private final int size;

    BenchWorker(Communicator comm, Collective collective, ElementType type, Memory memory) {
        this.comm = comm;
        this.collective = collective;
        this.type = type;
        this.memory = memory;
        this.rank = comm.rank();
        this.size = comm.size();
    }

    public static void main(String[] args) {
        if (args.length != 4 && args.length != 5) {
            System.err.println("kolo-bench worker: usage: BenchWorker COLLECTIVE DTYPE BYTES:ITERS:WARMUP,... RESULT_FILE"
                    + " [native|heap]"
                    + " (started by 'kolo bench', not by hand)");
            System.exit(2);
        }
        Collective collective;
        ElementType type;
        List<Step> steps;
        Memory memory;
        try {
            collective = Collective.parse(args[0]);
            type = ElementType.parse(args[1]);
            steps = Step.parse(args[2]);
            memory = args.length == 5 ? Memory.parse(args[4]) : Memory.NATIVE;
        } catch (IllegalArgumentException e) {
            System.err.println("kolo-bench worker: " + e.getMessage());
            System.exit(2);
            return;
        }
        Path out = Path.of(args[3]);
        java.util.Optional<SliceGate> gate;
        try {
            gate = SliceGate.fromEnvironment(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("kolo-bench worker: " + e.getMessage());
            System.exit(2);
            return;
        }
        try (Communicator comm = Communicator.fromEnvironment()) {
            // Says where each rank runs, so a run across hosts shows that it was one.
            System.out.printf(Locale.ROOT, "kolo-bench: rank %d of %d on host %s%n", comm.rank(), comm.size(),
                    hostName());
            BenchWorker worker = new BenchWorker(comm, collective, type, memory);
            gate.ifPresent(worker::takeTurns);
            worker.run(steps, args[3].equals("-") ? null : out);
        }
    }

    /** Times each size in the gate's number of slices, each opened by the harness through the gate. */
    void takeTurns(SliceGate gate) {
        this.gate = gate;
        this.slices = gate.slices();
    }

    /** Times every step; rank 0 writes the results to {@code resultFile}, or with null to stdout (see main). */
    void run(List<Step> steps, Path resultFile) {
        int maxIterations = steps.stream().mapToInt(Step::iterations).max().orElse(1);
        try (Arena control = Arena.ofShared();
             PrintStream results = rank == 0 ? resultStream(resultFile) : null) {
            // The benchmark's own bookkeeping (iteration times, "go on?" flags) travels in native memory like the
            // measured tensors: Java arrays there would make the JIT recompile the data path for them after every
            // size, and the next size would be timed while it does.
            MemorySegment nanos = control.allocate(8L * Math.max((long) maxIterations * slices, JIT_WARMUP_OPS), 8);
            MemorySegment more = control.allocate(8, 8);
            warmUpTheJit(steps, nanos, more);
            for (Step step : steps) {
                Measurement m = measure(step, nanos, more);
                if (results != null) {
                    results.println(resultFile == null ? RESULT_PREFIX + m.toLine() : m.toLine());
                    results.flush();
                    System.out.printf(Locale.ROOT, "%s %s: %.1f us, %.3f GB/s bus%n", collective.id(),
                            Sizes.format(step.bytes()), m.avgSeconds() * 1e6,
                            m.busBandwidth(collective, size) / 1e9);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write results to " + resultFile, e);
        }
    }

    /** The result file, or stdout (left open: closing the stream must not close System.out). */
    private static PrintStream resultStream(Path resultFile) throws IOException {
        if (resultFile != null) {
            return new PrintStream(Files.newOutputStream(resultFile), true);
        }
        return new PrintStream(new java.io.FilterOutputStream(System.out) {
            @Override
            public void close() {
                System.out.flush();
            }
        }, true);
    }

    /** The kernel's host name (no name lookup, which can stall on a host without DNS). */
    private static String hostName() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();
        } catch (IOException | RuntimeException e) {
            String env = System.getenv("HOSTNAME");
            return env == null ? "?" : env;
        }
    }

    /**
     * A JVM runs a new code path interpreted first and compiles it after some thousands of calls, and C2 keeps
     * recompiling the engine's path for a few seconds; with ranks pinned to one CPU each, the compiler thread takes
     * turns with the rank on its CPU, and the first seconds' ops run several times slower. A training job runs the same
     * ops for hours (JMH warms up for the same reason), so the first size and the largest one up to 1 MiB run for
     * {@link #JIT_WARMUP_NANOS} before anything is timed, and then until no rank's JIT has compiled anything for
     * {@link #JIT_QUIET_NANOS}: the compiler thread shares the rank's pinned CPU, and its queue of hot methods
     * (the submit path, the cycle, the transport) was measured still draining 0.7 s after a 6 s warm-up, while the
     * first sizes were timed. The ranks agree through an allreduce, so every rank runs the same number of ops.
     */
    private void warmUpTheJit(List<Step> steps, MemorySegment nanos, MemorySegment more) {
        if (steps.isEmpty()) {
            return;
        }
        long first = steps.getFirst().bytes();
        long mid = steps.stream().mapToLong(Step::bytes).filter(b -> b <= JIT_WARMUP_LARGE_BYTES).max().orElse(first);
        long start = System.nanoTime();
        jit.reset();
        int pass = 0;
        do {
            // Fresh names in the first passes: every measured size brings a new name, and a name's first ops take
            // the coordinator's path. Had the JIT never seen that path it would compile it away, and each size's
            // first op would throw the engine back to slow code for hundreds of milliseconds (measured).
            String tag = pass < JIT_WARMUP_FRESH_NAMES ? ".warmup" + pass : "";
            measure(new Step(first, JIT_WARMUP_OPS, 0), tag, nanos, more, false);
            measure(new Step(mid, JIT_WARMUP_OPS / 10, 0), tag, nanos, more, false);
            pass++;
        } while (goOn(more, warmingUp(start, JIT_WARMUP_NANOS, JIT_QUIET_NANOS, JIT_WARMUP_MAX_NANOS)));
    }

    /** Whether a warm-up that began at {@code start} goes on: at least {@code least}, then while the JIT is busy. */
    private boolean warmingUp(long start, long least, long quiet, long most) {
        long elapsed = System.nanoTime() - start;
        return elapsed < least || (elapsed < most && jit.compiledWithin(quiet));
    }

    /** Whether any rank's {@code decision} is to go on, agreed by every rank, so that all run the same ops. */
    private boolean goOn(MemorySegment more, boolean decision) {
        more.set(ValueLayout.JAVA_LONG, 0, decision ? 1 : 0);
        comm.allreduceAsync("bench.control.more", Tensor.of(more, io.kolo.DataType.INT64, 1), ReduceOp.MAX).await();
        return more.get(ValueLayout.JAVA_LONG, 0) != 0;
    }

    private Measurement measure(Step step, MemorySegment nanos, MemorySegment more) {
        return measure(step, "", nanos, more, true);
    }

    /**
     * Warms up and times one size. A reported size ({@code reported}) runs its iterations once per slice, each slice
     * after the harness opened it when taking turns, and the measurement covers all of them; the JIT warm-up's runs
     * are never gated.
     */
    private Measurement measure(Step step, String nameTag, MemorySegment nanos, MemorySegment more,
                                boolean reported) {
        long elements = step.bytes() / type.byteSize();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment memory = this.memory.allocate(arena, type, elements * type.byteSize());
            long inputElements = collective == Collective.ALLGATHER ? elements / size : elements;
            Tensor tensor = Tensor.of(memory.asSlice(0, inputElements * type.byteSize()), type.koloType(),
                    inputElements);
            String name = "bench." + collective.id() + "." + step.bytes() + nameTag;
            long[] splits = new long[size];
            Arrays.fill(splits, elements / size);

            // Allgather gathers into memory of the same kind that the caller keeps, as MPI_Allgather does.
            Tensor output = collective == Collective.ALLGATHER
                    ? Tensor.of(this.memory.allocate(arena, type, elements * type.byteSize()), type.koloType(), elements)
                    : null;
            Operands op = new Operands(name, tensor, splits, output);

            BenchValues.fill(type, tensor.segment(), inputElements, rank + 1);
            BenchValues.check(collective, type, rank, size, step.bytes(), run(op));
            // Zeros from here on: repeated in-place sums stay finite, so every iteration does the same work.
            tensor.segment().fill((byte) 0);

            int n = step.iterations();
            int parts = reported ? slices : 1;
            for (int part = 0; part < parts; part++) {
                if (reported && gate != null) {
                    waitForTurn(step);
                }
                if (part == 0) {
                    warmUp(step, op, more);
                } else {
                    // The peer's slice ran in between: caches and predictors are cold again.
                    repeat(step.warmup(), op);
                }
                time(op, nanos, (long) part * n, n);
            }
            int total = parts * n;
            // An op is finished when the slowest rank is: keep each iteration's worst time across ranks.
            Tensor times = Tensor.of(nanos.asSlice(0, 8L * total), io.kolo.DataType.INT64, total);
            comm.allreduceAsync("bench.control.times." + total, times, ReduceOp.MAX).await();
            return Measurement.of(step.bytes(), nanos.asSlice(0, 8L * total).toArray(ValueLayout.JAVA_LONG), total);
        }
    }

    /**
     * The timed loop, a method of its own: the JIT warm-up compiles it, and a branch that only a measured size takes
     * in {@link #measure} (taking turns) can then send only that caller back to the interpreter, not the loop. With
     * the loop inside measure, adding that branch gave millisecond outliers and small-message averages many times the
     * medians (most likely the loop recompiling while it was timed).
     */
    private void time(Operands op, MemorySegment nanos, long at, int n) {
        for (int i = 0; i < n; i++) {
            if (freshInput) {
                // New values, as a program's next broadcast has: the sender's cache holds them dirty, where the
                // same memory sent again would already lie in the receivers' caches. Small byte values keep floats
                // finite and normal.
                op.tensor().segment().fill((byte) (i & 0x3f));
            }
            long start = System.nanoTime();
            run(op);
            nanos.setAtIndex(ValueLayout.JAVA_LONG, at + i, System.nanoTime() - start);
        }
    }

    /** Rank 0 announces the next slice; every rank waits until the harness has run the peer's and opens ours. */
    private void waitForTurn(Step step) {
        int k = nextSlice++;
        if (rank == 0) {
            gate.announce(k, step.bytes());
        }
        try {
            gate.awaitOpen(k, GATE_TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for slice " + k, e);
        }
    }

    /**
     * The step's warm-up iterations, then more in rounds of as many until rank 0 has spent
     * {@link #SIZE_WARMUP_NANOS} on this size and no rank's JIT has compiled for as long (at most
     * {@link #SIZE_WARMUP_MAX_NANOS}): the first ops under a new name take paths the JIT had compiled away
     * (the coordinator's), it recompiles the engine's cycle, and ops run several times slower until it has, for
     * tens of milliseconds after a new name. A training loop repeats its names for hours; the bench times that steady state. Warm-up 0 means none.
     */
    private void warmUp(Step step, Operands op, MemorySegment more) {
        if (step.warmup() == 0) {
            return;
        }
        long start = System.nanoTime();
        jit.reset();
        do {
            repeat(step.warmup(), op);
        } while (goOn(more, warmingUp(start, SIZE_WARMUP_NANOS, SIZE_WARMUP_NANOS, SIZE_WARMUP_MAX_NANOS)));
    }

    private void repeat(int times, Operands op) {
        for (int i = 0; i < times; i++) {
            run(op);
        }
    }

    /** One operation; returns the tensor holding the result. */
    private Tensor run(Operands op) {
        return switch (collective) {
            case ALLREDUCE -> comm.allreduce(op.name(), op.tensor(), ReduceOp.SUM);
            case ALLGATHER -> comm.allgatherInto(op.name(), op.tensor(), op.output());
            case BROADCAST -> comm.broadcast(op.name(), op.tensor(), 0);
            case ALLTOALL -> await(comm.alltoallAsync(op.name(), op.tensor(), op.splits())).tensor();
            case REDUCESCATTER -> await(comm.reducescatterAsync(op.name(), op.tensor(), ReduceOp.SUM));
        };
    }

    private static <T> T await(Handle<T> handle) {
        return handle.await();
    }
}
