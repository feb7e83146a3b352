package io.kolo.bootstrap;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code KOLO_BIND_TO=core}: pins every thread of this process to one CPU chosen by local rank, as Open MPI's
 * {@code mpirun --bind-to core} does by default for two ranks or fewer. Two ranks that busy-wait on each other
 * over shared memory then never share a CPU (the scheduler likes to wake a thread where its waker runs, which
 * makes the pair take turns on one CPU while the other idles). {@code none} (the default) leaves placement to
 * the scheduler, which suits training processes with many compute threads of their own. {@code socket} binds to
 * every CPU of one processor package, ranks spread over the packages in local-rank order (as {@code mpirun --bind-to
 * socket}): compute threads keep their own CPUs, memory stays near them.
 */
public final class CpuBinding {
    private static final System.Logger LOG = LazyLogger.of(CpuBinding.class);
    public static final String VARIABLE = KoloSettings.BIND_TO.name();
    private static final int MASK_BYTES = 128;

    private CpuBinding() {
    }

    /**
     * Applies {@code KOLO_BIND_TO} from {@code env}; returns the CPUs this process is now bound to, or an empty list
     * when it binds nothing (none asked, more ranks on this host than CPUs, or not Linux).
     *
     * @throws io.kolo.BadSettingException naming the variable when its value is not {@code none}, {@code core} or
     *                                     {@code socket}
     */
    public static List<Integer> apply(Map<String, String> env, int localRank, int localSize) {
        String mode = KoloSettings.BIND_TO.from(env);
        if (mode.equals("none")) {
            return List.of();
        }
        List<Integer> allowed;
        try {
            allowed = allowedCpus();
        } catch (IOException | RuntimeException e) {
            ignored(env, localRank, VARIABLE + "=" + mode + " ignored on " + host(env)
                    + ": cannot read this process's CPUs (" + e.getMessage() + ")");
            return List.of();
        }
        List<Integer> cpus;
        if (mode.equals("socket")) {
            // Ranks fill the packages in order, as they fill cores: local ranks 0..k share the first package.
            int cpu = allowed.get((int) ((long) localRank * allowed.size() / localSize));
            cpus = samePackage(cpu, allowed);
        } else if (localSize > allowed.size()) {
            ignored(env, localRank, VARIABLE + "=core ignored on " + host(env) + ": " + localSize
                    + " ranks on this host but only " + allowed.size() + (allowed.size() == 1 ? " CPU (" : " CPUs (")
                    + format(allowed) + ") to bind them to");
            return List.of();
        } else {
            cpus = List.of(allowed.get(localRank));
        }
        bindEveryThread(cpus);
        LOG.log(System.Logger.Level.DEBUG, "local rank " + localRank + " bound to CPUs " + cpus);
        return cpus;
    }

    /**
     * A binding the user asked for and does not get: one line on the rank's stderr, as Kolo's other words to the user,
     * and from local rank 0 only, since every rank of the host would say the same (the others log it at DEBUG).
     */
    private static void ignored(Map<String, String> env, int localRank, String why) {
        if (localRank == 0) {
            System.err.println("kolo: " + why);
        } else {
            LOG.log(System.Logger.Level.DEBUG, why);
        }
    }

    private static String host(Map<String, String> env) {
        String assigned = KoloSettings.HOSTNAME.from(env);
        return assigned != null ? assigned : HostName.local().orElse("this host");
    }

    /** The CPUs of {@code allowed} in the same processor package as {@code cpu} (all of them where sysfs says nothing). */
    static List<Integer> samePackage(int cpu, List<Integer> allowed) {
        String own = packageOf(cpu);
        if (own == null) {
            return allowed;
        }
        return allowed.stream().filter(c -> own.equals(packageOf(c))).toList();
    }

    private static String packageOf(int cpu) {
        try {
            return Files.readString(Path.of("/sys/devices/system/cpu/cpu" + cpu + "/topology/physical_package_id"))
                    .strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * How many CPUs the machine has online ({@code /sys/devices/system/cpu/online}), whatever this process is bound
     * to; {@link Runtime#availableProcessors()} where that cannot be read.
     */
    public static int onlineCpus() {
        try {
            return Math.max(1, parseList(Files.readString(Path.of("/sys/devices/system/cpu/online"))).size());
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    /** The CPUs this process may run on, from /proc/self/status ({@code Cpus_allowed_list: 0-3,8}). */
    static List<Integer> allowedCpus() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return parseList(line.substring(line.indexOf(':') + 1));
            }
        }
        throw new IOException("no Cpus_allowed_list in /proc/self/status");
    }

    /** The kernel's list format: {@code 0-3,8}. */
    public static String format(List<Integer> cpus) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cpus.size(); ) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            sb.append(sb.isEmpty() ? "" : ",").append(cpus.get(i)).append(j > i ? "-" + cpus.get(j) : "");
            i = j + 1;
        }
        return sb.toString();
    }

    static List<Integer> parseList(String list) {
        List<Integer> cpus = new ArrayList<>();
        for (String part : list.trim().split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] range = part.trim().split("-");
            int from = Integer.parseInt(range[0].trim());
            int to = range.length > 1 ? Integer.parseInt(range[1].trim()) : from;
            for (int c = from; c <= to; c++) {
                cpus.add(c);
            }
        }
        return cpus;
    }

    /**
     * Affinity is per thread in Linux, and a new thread inherits its creator's: binding every thread now binds
     * the ones the JVM starts later too.
     */
    // A native call, allowed by --enable-native-access=ALL-UNNAMED, which kolo run passes.
    @SuppressWarnings("restricted")
    private static void bindEveryThread(List<Integer> cpus) {
        for (int cpu : cpus) {
            if (cpu >= MASK_BYTES * 8) {
                throw new IllegalArgumentException(VARIABLE + ": CPU " + cpu + " is beyond the " + MASK_BYTES * 8
                        + " CPUs Kolo can bind to");
            }
        }
        Linker linker = Linker.nativeLinker();
        MethodHandle setAffinity = linker.downcallHandle(linker.defaultLookup().find("sched_setaffinity").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                        ValueLayout.ADDRESS), Linker.Option.captureCallState("errno"));
        try (Arena arena = Arena.ofConfined(); Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            for (int cpu : cpus) {
                mask.set(ValueLayout.JAVA_BYTE, cpu / 8,
                        (byte) (mask.get(ValueLayout.JAVA_BYTE, cpu / 8) | (1 << (cpu % 8))));
            }
            MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            for (Path task : tasks.toList()) {
                int tid = Integer.parseInt(task.getFileName().toString());
                int rc = (int) setAffinity.invokeExact(state, tid, (long) MASK_BYTES, mask);
                // A thread that ended meanwhile (ESRCH) is fine; anything else means we are not bound.
                int errno = state.get(ValueLayout.JAVA_INT,
                        Linker.Option.captureStateLayout().byteOffset(
                                java.lang.foreign.MemoryLayout.PathElement.groupElement("errno")));
                if (rc != 0 && errno != 3) {
                    throw new IllegalStateException(VARIABLE + ": sched_setaffinity(thread " + tid + ", CPUs " + cpus
                            + ") failed with errno " + errno);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException(VARIABLE + ": cannot list this process's threads: " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(VARIABLE + ": " + t, t);
        }
    }
}
