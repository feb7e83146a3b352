package io.kolo.bench.kernels;

import io.kolo.DataType;
import io.kolo.collective.Kernels;
import io.kolo.collective.Reduction;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The reduction kernels every allreduce spends its arithmetic in: {@code acc[i] = op(acc[i], in[i])} over
 * native memory, per element type and operation, with the accumulator in native memory or in a Java array of the
 * type's own Java type ({@code -p accumulator=array}: what {@code Kolo.allreduce(float[])} reduces into). Bytes reduced per second = elements x element size /
 * (time per op); at 1 MiB of float32 both buffers stay in cache, so this is the kernel's own speed, not
 * memory bandwidth.
 *
 * <p>Run: {@code java -cp "kolo-bench/target/kolo-bench-*.jar:kolo-bench/target/lib/*" org.openjdk.jmh.Main
 * KernelBenchmark} (add {@code -p type=FLOAT32 -p op=SUM} to narrow it down).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-modules=jdk.incubator.vector"})
public class KernelBenchmark {
    @Param({"FLOAT32", "FLOAT64", "FLOAT16", "BFLOAT16", "INT32", "INT64", "INT8"})
    public DataType type;

    @Param({"SUM", "MIN", "MAX", "PRODUCT"})
    public Reduction op;

    @Param({"262144"})
    public long elements;

    @Param({"native", "array"})
    public String accumulator;

    private Arena arena;
    private MemorySegment acc;
    private MemorySegment in;

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        long bytes = elements * type.byteSize();
        acc = accumulator.equals("array") ? array(type, Math.toIntExact(elements)) : arena.allocate(bytes, 64);
        in = arena.allocate(bytes, 64);
        // 1.0 in every element (or 1 for integers): PRODUCT and SUM stay finite and non-denormal however long it runs.
        for (long i = 0; i < elements; i++) {
            switch (type) {
                case FLOAT32 -> {
                    acc.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, 1f);
                    in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, 1f);
                }
                case FLOAT64 -> {
                    acc.setAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, i, 1d);
                    in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, i, 1d);
                }
                case FLOAT16 -> {
                    acc.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i, io.kolo.Float16.fromFloat(1f));
                    in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i, io.kolo.Float16.fromFloat(1f));
                }
                case BFLOAT16 -> {
                    acc.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i, io.kolo.BFloat16.fromFloat(1f));
                    in.setAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i, io.kolo.BFloat16.fromFloat(1f));
                }
                default -> {
                    // Integers: 1 in the lowest byte; SUM wraps, which costs the same as not wrapping.
                    in.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i * type.byteSize(), (byte) 1);
                    acc.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i * type.byteSize(), (byte) 1);
                }
            }
        }
    }

    /** A heap segment over an array of the type's Java type (float[] for FLOAT32), as Tensor.of(array) makes. */
    private static MemorySegment array(DataType type, int n) {
        return switch (type) {
            case FLOAT32 -> MemorySegment.ofArray(new float[n]);
            case FLOAT64 -> MemorySegment.ofArray(new double[n]);
            case INT32 -> MemorySegment.ofArray(new int[n]);
            case INT64 -> MemorySegment.ofArray(new long[n]);
            case INT16, FLOAT16, BFLOAT16 -> MemorySegment.ofArray(new short[n]);
            case INT8, UINT8 -> MemorySegment.ofArray(new byte[n]);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public MemorySegment reduce() {
        Kernels.reduce(acc, 0, in, 0, elements, type, op);
        return acc;
    }
}
