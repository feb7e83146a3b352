package io.kolo.bootstrap;

import io.kolo.BadSettingException;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Every {@code KOLO_*} variable of the worker contract: its name, its default, what it means and how a value is read,
 * in one place. The typed settings of each layer (job placement, engine, algorithms, transports) read their values
 * through these definitions, and the launcher checks everything it forwards against them before any rank starts, so a
 * bad value is one line naming the variable, on every path. Choices come out as canonical lower-case words ("on",
 * "off", "auto", ...) for the layer that owns the meaning to map onto its own types.
 *
 * <pre>{@code
 * long fusion = KoloSettings.FUSION_THRESHOLD.from(env);            // the default when unset
 * List<String> problems = KoloSettings.problems(System.getenv());   // one line per bad value, empty when all is well
 * }</pre>
 */
public final class KoloSettings {
    private static final Map<String, Setting<?>> ALL = new LinkedHashMap<>();
    private static final Map<String, String> ON_OFF_AUTO = choices("1", "on", "true", "on", "on", "on", "yes", "on",
            "0", "off", "false", "off", "off", "off", "no", "off", "auto", "auto");
    private static final Map<String, String> ON_OFF = choices("1", "on", "true", "on", "on", "on", "yes", "on",
            "0", "off", "false", "off", "off", "off", "no", "off");

    /** One variable: {@link #from} returns its value, or the default when it is unset or blank. */
    public static final class Setting<T> {
        private final String name;
        private final T fallback;
        private final String expected;
        private final Function<String, T> parse;
        private String horovodName;

        private Setting(String name, T fallback, String expected, Function<String, T> parse) {
            this.name = name;
            this.fallback = fallback;
            this.expected = expected;
            this.parse = parse;
            ALL.put(name, this);
        }

        public String name() {
            return name;
        }

        /**
         * Horovod's variable for the same setting ({@code HOROVOD_CYCLE_TIME} for {@code KOLO_CYCLE_TIME}), read when
         * this one is unset, so a job moved from Horovod keeps its tuning; null when Horovod has none.
         */
        public String horovodName() {
            return horovodName;
        }

        /** The value when the variable is unset (null: no default, the variable is optional or required elsewhere). */
        public T defaultValue() {
            return fallback;
        }

        /** What a valid value looks like, for messages and help. */
        public String expected() {
            return expected;
        }

        /**
         * @throws BadSettingException naming the variable, its value and what is expected
         */
        public T from(Map<String, String> env) {
            return ifSet(env).orElse(fallback);
        }

        /** The value when the variable is set (and not blank). */
        public Optional<T> ifSet(Map<String, String> env) {
            String source = name;
            String raw = env.get(name);
            if ((raw == null || raw.isBlank()) && horovodName != null) {
                source = horovodName;
                raw = env.get(horovodName);
            }
            if (raw == null || raw.isBlank()) {
                return Optional.empty();
            }
            T value;
            try {
                value = parse.apply(raw.trim());
            } catch (RuntimeException e) {
                value = null;
            }
            if (value == null) {
                // The secret's value never goes into a message, however wrong it is.
                String shown = this == SECRET ? "(" + raw.strip().length() + " characters, not shown)" : "'" + raw + "'";
                throw new BadSettingException(source, source + "=" + shown + " is invalid: expected " + expected);
            }
            return Optional.of(value);
        }
    }

    // Where this rank sits in the job, and how it finds the others (set by kolo run, or read from MPI/Slurm).
    public static final Setting<Integer> RANK = integer("KOLO_RANK", 0, 0, Integer.MAX_VALUE);
    public static final Setting<Integer> SIZE = integer("KOLO_SIZE", 1, 1, Integer.MAX_VALUE);
    public static final Setting<Integer> LOCAL_RANK = integer("KOLO_LOCAL_RANK", null, 0, Integer.MAX_VALUE);
    public static final Setting<Integer> LOCAL_SIZE = integer("KOLO_LOCAL_SIZE", null, 1, Integer.MAX_VALUE);
    public static final Setting<Integer> CROSS_RANK = integer("KOLO_CROSS_RANK", null, 0, Integer.MAX_VALUE);
    public static final Setting<Integer> CROSS_SIZE = integer("KOLO_CROSS_SIZE", null, 1, Integer.MAX_VALUE);
    public static final Setting<String> HOSTNAME = text("KOLO_HOSTNAME", null, "the host name the launcher assigned");
    public static final Setting<String> RENDEZVOUS_ADDR = text("KOLO_RENDEZVOUS_ADDR", "127.0.0.1",
            "a host name or IP address of the rendezvous server");
    public static final Setting<Integer> RENDEZVOUS_PORT = new Setting<>("KOLO_RENDEZVOUS_PORT", null,
            "a TCP port from 1 to 65535", v -> inRange(Integer.parseInt(v), 1, 65535));
    public static final Setting<String> RENDEZVOUS_SERVER = choice("KOLO_RENDEZVOUS_SERVER", "rank0",
            "'launcher' or 'rank0'", choices("launcher", "launcher", "rank0", "rank0"));
    public static final Setting<String> SECRET = new Setting<>("KOLO_SECRET", null,
            "the job secret in hex, at least 16 bytes (e.g. $(openssl rand -hex 32))",
            v -> HexFormat.of().parseHex(v).length >= 16 ? v : null);
    public static final Setting<String> IFACE = text("KOLO_IFACE", null,
            "a network interface name such as eth0, or an IP address of this host");
    public static final Setting<Integer> START_TIMEOUT_SECONDS = integer("KOLO_START_TIMEOUT_SECONDS", 60, 1,
            Integer.MAX_VALUE);
    public static final Setting<Integer> TIMEOUT_SECONDS = integer("KOLO_TIMEOUT_SECONDS", 300, 1, Integer.MAX_VALUE);
    // Elastic jobs (kolo run --min-np): which worker this process is, which of the launcher's jobs it starts in, and how
    // long it waits for the launcher's next job after a reset.
    public static final Setting<String> ELASTIC_WORKER = text("KOLO_ELASTIC_WORKER", null,
            "the worker id the launcher assigned");
    public static final Setting<Integer> ELASTIC_GENERATION = integer("KOLO_ELASTIC_GENERATION", null, 0,
            Integer.MAX_VALUE);
    public static final Setting<Integer> ELASTIC_TIMEOUT_SECONDS = integer("KOLO_ELASTIC_TIMEOUT_SECONDS", 600, 1,
            Integer.MAX_VALUE);
    public static final Setting<String> BIND_TO = choice("KOLO_BIND_TO", "none", "core, socket or none",
            choices("none", "none", "core", "core", "socket", "socket"));
    public static final Setting<String> REPORT_BINDINGS = choice("KOLO_REPORT_BINDINGS", "off", "0 or 1", ON_OFF);
    public static final Setting<String> LOG_LEVEL = choice("KOLO_LOG_LEVEL", null,
            "trace, debug, info, warning, error or fatal", choices("trace", "trace", "debug", "debug", "info", "info",
                    "warning", "warning", "warn", "warning", "error", "error", "fatal", "fatal"));

    // The engine.
    public static final Setting<Long> FUSION_THRESHOLD = bytes("KOLO_FUSION_THRESHOLD", 128L << 20, Long.MAX_VALUE,
            "a non-negative number of bytes (0 disables fusion)");
    public static final Setting<Double> CYCLE_TIME = new Setting<>("KOLO_CYCLE_TIME", 1.0,
            "a non-negative number of milliseconds", v -> {
                double d = Double.parseDouble(v);
                return d >= 0 && !Double.isInfinite(d) ? d : null;
            });
    public static final Setting<Long> CACHE_CAPACITY = bytes("KOLO_CACHE_CAPACITY", 1024L, 1L << 20,
            "a number of response-cache entries from 0 (no cache) to 1048576");
    /**
     * Latency-bound sizes only: every cycle, idle ones too, carries a payload this large once an op this small has been
     * repeated. At np=2 riding was faster at every size up to 8 KiB (docs/performance.md, "Measured constants",
     * has the command); measure with {@code kolo bench allreduce -x KOLO_EAGER_ALLREDUCE_BYTES=...}
     * before changing it. At most 1 MiB: larger
     * allreduces gain nothing from riding with the negotiation, whose buffer is sized for it up front. Broadcasts and
     * allgathers ride too, counted by the bytes of their whole result, up to 256 bytes (EagerPayload.ORED_MAX_BYTES).
     */
    public static final Setting<Long> EAGER_ALLREDUCE_BYTES = bytes("KOLO_EAGER_ALLREDUCE_BYTES", 8L << 10, 1L << 20,
            "a number of bytes from 0 (off) to 1048576");
    public static final Setting<String> TIMELINE = text("KOLO_TIMELINE", null, "the path of the timeline file rank 0 writes");
    public static final Setting<String> TIMELINE_MARK_CYCLES = choice("KOLO_TIMELINE_MARK_CYCLES", "off", "0 or 1",
            ON_OFF);
    public static final Setting<Long> STALL_CHECK_TIME_SECONDS = bytes("KOLO_STALL_CHECK_TIME_SECONDS", 60L,
            Long.MAX_VALUE, "a non-negative number of seconds");
    public static final Setting<Long> STALL_SHUTDOWN_TIME_SECONDS = bytes("KOLO_STALL_SHUTDOWN_TIME_SECONDS", 0L,
            Long.MAX_VALUE, "a non-negative number of seconds (0: never)");
    public static final Setting<String> STALL_CHECK_DISABLE = choice("KOLO_STALL_CHECK_DISABLE", "off", "0 or 1",
            ON_OFF);
    public static final Setting<String> AUTOTUNE = choice("KOLO_AUTOTUNE", "off", "0 or 1", ON_OFF);
    public static final Setting<String> AUTOTUNE_LOG = text("KOLO_AUTOTUNE_LOG", null,
            "the path of the CSV file rank 0 writes every autotune sample to");
    public static final Setting<Long> AUTOTUNE_WARMUP_SAMPLES = bytes("KOLO_AUTOTUNE_WARMUP_SAMPLES", 3L, 1000L,
            "a number of samples from 0 to 1000");
    public static final Setting<Long> AUTOTUNE_STEPS_PER_SAMPLE = range("KOLO_AUTOTUNE_STEPS_PER_SAMPLE", 10L, 1, 100000L,
            "a number of cycles that ran ops, from 1 to 100000");
    public static final Setting<Long> AUTOTUNE_BAYES_OPT_MAX_SAMPLES = range("KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", 20L,
            2, 1000L, "a number of samples from 2 to 1000");
    public static final Setting<String> DYNAMIC_PROCESS_SETS = choice("KOLO_DYNAMIC_PROCESS_SETS", "off", "0 or 1",
            ON_OFF);
    /** Unset: -1, which the algorithms read as "scale with the number of ranks". */
    public static final Setting<Long> SMALL_ALLREDUCE_BYTES = bytes("KOLO_SMALL_ALLREDUCE_BYTES", -1L, Long.MAX_VALUE,
            "a non-negative number of bytes");
    public static final Setting<String> HIERARCHICAL_ALLREDUCE = choice("KOLO_HIERARCHICAL_ALLREDUCE", "auto",
            "0, 1 or auto", ON_OFF_AUTO);
    public static final Setting<String> HIERARCHICAL_ALLGATHER = choice("KOLO_HIERARCHICAL_ALLGATHER", "off",
            "0, 1 or auto", ON_OFF_AUTO);
    public static final Setting<String> COMPRESSION = choice("KOLO_COMPRESSION", "none", "none, fp16 or bf16",
            choices("none", "none", "fp16", "fp16", "float16", "fp16", "bf16", "bf16", "bfloat16", "bf16"));

    // The job view (kolo run --dashboard / --report; rank 0 under mpirun/srun).
    public static final Setting<String> VIEW = choice("KOLO_VIEW", "off", "0 or 1", ON_OFF);
    public static final Setting<Long> VIEW_INTERVAL_MS = range("KOLO_VIEW_INTERVAL_MS", 1000L, 10, 3_600_000L,
            "a number of milliseconds from 10 to 3600000");
    public static final Setting<Integer> DASHBOARD_PORT = new Setting<>("KOLO_DASHBOARD_PORT", null,
            "a TCP port from 0 (any free port) to 65535", v -> inRange(Integer.parseInt(v), 0, 65535));
    public static final Setting<String> DASHBOARD_BIND = text("KOLO_DASHBOARD_BIND", "127.0.0.1",
            "a host name or IP address of this host to serve the job view on");
    public static final Setting<String> REPORT = text("KOLO_REPORT", null,
            "the path of the HTML report written when the job ends");
    public static final Setting<String> JOB_NAME = text("KOLO_JOB_NAME", null,
            "what the job view calls the job where rank 0 holds it (default: rank 0's command line)");

    // The transports.
    public static final Setting<String> TRANSPORT = choice("KOLO_TRANSPORT", "auto", "auto (shared memory within a"
            + " host, TCP between hosts), shm (the same, but fail if /dev/shm is unusable) or tcp",
            choices("auto", "auto", "shm", "shm", "tcp", "tcp"));
    public static final Setting<String> SHM_SINGLE_COPY = choice("KOLO_SHM_SINGLE_COPY", "auto", "auto, 1 or 0 (auto:"
            + " each large message goes the way that cost less in the latest probe of its size; 1: read large messages"
            + " straight from the sender's memory where the system allows it; 0: always copy through shared memory)",
            ON_OFF_AUTO);
    public static final Setting<Long> SHM_RING_BYTES = new Setting<>("KOLO_SHM_RING_BYTES", 1L << 20,
            "a power of two from 4096 to 1073741824 (bytes per ring, one ring per ordered pair of ranks on a host)",
            v -> {
                long n = Long.parseLong(v);
                return n >= 4096 && n <= (1L << 30) && Long.bitCount(n) == 1 ? n : null;
            });

    static {
        horovod(START_TIMEOUT_SECONDS, "HOROVOD_START_TIMEOUT");
        horovod(IFACE, "HOROVOD_GLOO_IFACE");
        horovod(LOG_LEVEL, "HOROVOD_LOG_LEVEL");
        horovod(FUSION_THRESHOLD, "HOROVOD_FUSION_THRESHOLD");
        horovod(CYCLE_TIME, "HOROVOD_CYCLE_TIME");
        horovod(CACHE_CAPACITY, "HOROVOD_CACHE_CAPACITY");
        horovod(TIMELINE, "HOROVOD_TIMELINE");
        horovod(TIMELINE_MARK_CYCLES, "HOROVOD_TIMELINE_MARK_CYCLES");
        horovod(STALL_CHECK_TIME_SECONDS, "HOROVOD_STALL_CHECK_TIME_SECONDS");
        horovod(STALL_SHUTDOWN_TIME_SECONDS, "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS");
        horovod(STALL_CHECK_DISABLE, "HOROVOD_STALL_CHECK_DISABLE");
        horovod(HIERARCHICAL_ALLREDUCE, "HOROVOD_HIERARCHICAL_ALLREDUCE");
        horovod(HIERARCHICAL_ALLGATHER, "HOROVOD_HIERARCHICAL_ALLGATHER");
        horovod(DYNAMIC_PROCESS_SETS, "HOROVOD_DYNAMIC_PROCESS_SETS");
        horovod(AUTOTUNE, "HOROVOD_AUTOTUNE");
        horovod(AUTOTUNE_LOG, "HOROVOD_AUTOTUNE_LOG");
        horovod(AUTOTUNE_WARMUP_SAMPLES, "HOROVOD_AUTOTUNE_WARMUP_SAMPLES");
        horovod(AUTOTUNE_STEPS_PER_SAMPLE, "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE");
        horovod(AUTOTUNE_BAYES_OPT_MAX_SAMPLES, "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES");
    }

    private KoloSettings() {
    }

    private static void horovod(Setting<?> setting, String horovodName) {
        setting.horovodName = horovodName;
    }

    /**
     * The {@code KOLO_*} values that {@code env}'s {@code HOROVOD_*} variables stand for where the {@code KOLO_*} one is
     * unset: what a launcher passes on to ranks that do not inherit its environment (ranks over ssh).
     */
    public static Map<String, String> fromHorovod(Map<String, String> env) {
        Map<String, String> kolo = new LinkedHashMap<>();
        for (Setting<?> s : ALL.values()) {
            String own = env.get(s.name);
            String theirs = s.horovodName == null ? null : env.get(s.horovodName);
            if ((own == null || own.isBlank()) && theirs != null && !theirs.isBlank()) {
                kolo.put(s.name, theirs);
            }
        }
        return kolo;
    }

    /** Every setting, in the order of docs/settings.md's table. */
    public static List<Setting<?>> all() {
        return List.copyOf(ALL.values());
    }

    /** The setting of that name, if Kolo has one. */
    public static Optional<Setting<?>> named(String name) {
        return Optional.ofNullable(ALL.get(name));
    }

    /**
     * One line for each {@code KOLO_*} variable of {@code env} that is set to a value its setting refuses (variables
     * Kolo does not know are left alone: a program may use the prefix too). Empty when all is well.
     */
    public static List<String> problems(Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        for (Setting<?> s : ALL.values()) {
            try {
                s.ifSet(env);
            } catch (BadSettingException e) {
                problems.add(e.getMessage());
            }
        }
        return problems;
    }

    /** Said with its range: "a positive integer" alone was also the answer to 9999999999, which is one. */
    private static Setting<Integer> integer(String name, Integer fallback, int min, int max) {
        return new Setting<>(name, fallback, integerExpected(min, max), v -> inRange(Integer.parseInt(v), min, max));
    }

    /** What an integer setting takes, with its range; JobEnvironment says the same of MPI's and Slurm's variables. */
    static String integerExpected(int min, int max) {
        return (min == 0 ? "a non-negative integer" : min == 1 ? "a positive integer" : "an integer") + " (" + min
                + " to " + max + ")";
    }

    /** {@code max} Long.MAX_VALUE is said too, for a value past it: the text alone says only "non-negative". */
    private static Setting<Long> bytes(String name, Long fallback, long max, String text) {
        String expected = max == Long.MAX_VALUE ? text + ", at most " + Long.MAX_VALUE : text;
        return new Setting<>(name, fallback, expected, v -> {
            long n = Long.parseLong(v);
            return n >= 0 && n <= max ? n : null;
        });
    }

    private static Setting<Long> range(String name, Long fallback, long min, long max, String expected) {
        return new Setting<>(name, fallback, expected, v -> {
            long n = Long.parseLong(v);
            return n >= min && n <= max ? n : null;
        });
    }

    private static Setting<String> text(String name, String fallback, String expected) {
        return new Setting<>(name, fallback, expected, v -> v);
    }

    private static Setting<String> choice(String name, String fallback, String expected, Map<String, String> words) {
        return new Setting<>(name, fallback, expected, v -> words.get(v.toLowerCase(Locale.ROOT)));
    }

    private static Integer inRange(int v, int min, int max) {
        return v >= min && v <= max ? v : null;
    }

    /** word1, canonical1, word2, canonical2, ... */
    private static Map<String, String> choices(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put(pairs[i], pairs[i + 1]);
        }
        return m;
    }
}
