package io.kolo.k8s;

import io.kolo.BadSettingException;
import io.kolo.launch.WorkerEnvironment;

import io.fabric8.kubernetes.api.model.Quantity;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What to run on Kubernetes: W workers (pods) of S ranks each running one command, in one of three modes. Built with
 * {@link #builder(String)}; {@link Builder#build()} checks every value and throws {@link IllegalArgumentException}
 * with one line naming what is wrong.
 *
 * <pre>{@code
 * KoloJobSpec spec = KoloJobSpec.builder("train")
 *         .image("registry.example.com/train:1.0")
 *         .workers(4).slots(2).cpu("4").memory("16Gi")
 *         .command(List.of("-cp", "/app/app.jar", "com.example.Train", "--epochs", "10"))
 *         .build();
 * try (KubernetesJobs k8s = KubernetesJobs.connect()) {
 *     KoloJob job = k8s.submit(spec);
 *     JobStatus done = job.waitFor(Duration.ofHours(2));
 * }
 * }</pre>
 *
 * @param name                  the job's name: a DNS label (lower case letters, digits, '-') that starts with a letter,
 *                              at most 50 characters
 *                              so that the pods' names fit
 * @param image                 the container image (JDK 25, Kolo at {@value #KOLO}, the application)
 * @param workers               W, the number of pods that run ranks
 * @param slots                 S, ranks per worker pod; the job has W x S ranks
 * @param cpu                   CPU request of each worker, e.g. "4" or "500m"; null for none
 * @param memory                memory request of each worker, e.g. "16Gi"; null for none
 * @param gpus                  {@code nvidia.com/gpu} of each worker; 0 for none
 * @param limitCpu              CPU limit; null: the same as the request
 * @param limitMemory           memory limit; null: the same as the request
 * @param namespace             null for the kubeconfig's namespace
 * @param env                   variables for every rank, in this order (a value may refer to an earlier one as
 *                              {@code $(VAR)})
 * @param mode                  {@link Mode#OPERATOR_FREE}, {@link Mode#MPIJOB} or {@link Mode#MPIJOB_V1}
 * @param command               what {@code kolo run} starts on each rank: {@code -- CMD ARGS}, {@code -cp CP MAIN ARGS}
 *                              or {@code -jar APP ARGS} (without {@code --} it is taken as a command)
 * @param backoffLimit          retries of the whole job (a Kolo job cannot take back one lost rank), default 0
 * @param activeDeadlineSeconds the job fails after this long; null for no limit
 * @param ttlSecondsAfterFinished Kubernetes deletes the finished job after this long; null to keep it
 * @param startTimeoutSeconds   how long ranks (and pods, to resolve each other's names) wait for each other
 * @param dashboardPort         the port of the job's live page on the pod whose {@code kolo run} serves it (node 0's,
 *                              or the MPIJob's launcher), reachable through {@code kubectl port-forward}; null for none
 */
public record KoloJobSpec(String name, String image, int workers, int slots, String cpu, String memory, int gpus,
                          String limitCpu, String limitMemory, String namespace, Map<String, String> env, Mode mode,
                          List<String> command, int backoffLimit, Long activeDeadlineSeconds,
                          Integer ttlSecondsAfterFinished, int startTimeoutSeconds, Integer dashboardPort) {

    /** The port on which pod 0's {@code kolo run --nnodes} serves the rendezvous (operator-free). */
    static final int RENDEZVOUS_PORT = 29500;
    /** Where the image has Kolo: the {@code kolo} script. */
    public static final String KOLO = "/opt/kolo/kolo";
    /** How long pods and ranks wait for each other unless told otherwise. */
    public static final int DEFAULT_START_TIMEOUT_SECONDS = 300;
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern QUANTITY = Pattern.compile("([0-9]+(\\.[0-9]+)?|\\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** How the pods are made. */
    public enum Mode {
        /** An Indexed Job, a headless Service and a Secret; each pod runs {@code kolo run --nnodes}. No operator, no SSH. */
        OPERATOR_FREE("operator-free"),
        /** A {@code kubeflow.org/v2beta1} MPIJob for the MPI Operator: a launcher pod runs {@code kolo run} over SSH. */
        MPIJOB("mpijob"),
        /**
         * A {@code kubeflow.org/v1} MPIJob for the Kubeflow training operator (what Flyte's MPI plugin creates): a
         * launcher pod runs {@code kolo run}, which starts the ranks through the operator's {@code kubectl exec} agent.
         */
        MPIJOB_V1("mpijob-v1");

        private final String flag;

        Mode(String flag) {
            this.flag = flag;
        }

        /** The name on the command line. */
        public String flag() {
            return flag;
        }

        /** Parses {@code operator-free}, {@code mpijob} or {@code mpijob-v1}. */
        public static Mode of(String flag) {
            for (Mode m : values()) {
                if (m.flag.equals(flag)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--mode " + flag + ": use operator-free (an Indexed Job, no operator),"
                    + " mpijob (a kubeflow.org/v2beta1 MPIJob for the MPI Operator) or mpijob-v1 (a kubeflow.org/v1"
                    + " MPIJob for the Kubeflow training operator)");
        }
    }

    /**
     * A namespace name as Kubernetes takes it (a DNS-1123 label of at most 63 characters); null is the kubeconfig's.
     * Checked before anything is asked: a bad one would otherwise go to the API server inside a request path.
     */
    static void checkNamespace(String namespace) {
        if (namespace != null && (namespace.length() > 63 || !DNS_LABEL.matcher(namespace).matches())) {
            throw new IllegalArgumentException("namespace '" + namespace + "' is not a DNS label: use at most 63 lower"
                    + " case letters, digits and '-', starting and ending with a letter or digit (e.g. team-a)");
        }
    }

    /** Validates and freezes the components. */
    public KoloJobSpec {
        Objects.requireNonNull(mode, "mode");
        // In the order given (Map.copyOf's is not): Kubernetes expands $(VAR) only from variables listed before it.
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        command = List.copyOf(command);
        if (name == null || name.length() > 50 || !DNS_LABEL.matcher(name).matches()) {
            throw new IllegalArgumentException("job name '" + name + "' is not a DNS label: use at most 50 lower case"
                    + " letters, digits and '-', starting and ending with a letter or digit (e.g. train-1)");
        }
        if (!Character.isLetter(name.charAt(0))) {
            // Kubernetes refuses it only as the Service's name (ours, or the MPI Operator's), after the Job exists.
            throw new IllegalArgumentException("job name '" + name + "' must start with a letter: the job's Service is"
                    + " named after it, and Kubernetes takes only Service names that do (e.g. train-" + name + ")");
        }
        if (image == null || image.isBlank()) {
            throw new IllegalArgumentException("--image is required: the container image with JDK 25, Kolo and the"
                    + " application (see docker/Dockerfile)");
        }
        ImageReference.check(image);
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be at least 1, got " + workers);
        }
        if (slots < 1) {
            throw new IllegalArgumentException("--slots must be at least 1, got " + slots);
        }
        quantity("--cpu", cpu);
        quantity("--memory", memory);
        quantity("--limit-cpu", limitCpu);
        quantity("--limit-memory", limitMemory);
        wholeBytes("--memory", memory);
        wholeBytes("--limit-memory", limitMemory);
        // Kubernetes refuses it in a Job at once, but an MPIJob takes it and the operator's pods never appear.
        atLeast("--limit-cpu", limitCpu, "--cpu", cpu);
        atLeast("--limit-memory", limitMemory, "--memory", memory);
        if (gpus < 0) {
            throw new IllegalArgumentException("--gpu must be 0 or more, got " + gpus);
        }
        checkNamespace(namespace);
        for (String k : env.keySet()) {
            if (!ENV_NAME.matcher(k).matches()) {
                throw new IllegalArgumentException("--env " + k + ": not a valid environment variable name");
            }
            if (k.equals("KOLO_SECRET")) {
                throw new IllegalArgumentException("--env KOLO_SECRET: the job's secret is made by kolo k8s");
            }
        }
        checkKoloSettings(env);
        if (command.isEmpty()) {
            throw new IllegalArgumentException("no command: kolo k8s submit NAME ... -- COMMAND ARGS (or -cp CP MAIN,"
                    + " -jar APP)");
        }
        if (backoffLimit < 0) {
            throw new IllegalArgumentException("--backoff-limit must be 0 or more, got " + backoffLimit);
        }
        if (activeDeadlineSeconds != null && activeDeadlineSeconds < 1) {
            throw new IllegalArgumentException("--active-deadline must be at least 1 second");
        }
        if (ttlSecondsAfterFinished != null && ttlSecondsAfterFinished < 0) {
            throw new IllegalArgumentException("--ttl-after-finished must be 0 or more");
        }
        if (startTimeoutSeconds < 1) {
            throw new IllegalArgumentException("--start-timeout must be at least 1 second, got " + startTimeoutSeconds);
        }
        checkDashboardPort(dashboardPort, mode);
    }

    /**
     * The dashboard's port must be known before the pod starts, since the port-forward line names it: kolo run's
     * "0 picks a free port" would serve it where nobody can find it.
     */
    private static void checkDashboardPort(Integer port, Mode mode) {
        if (port == null) {
            return;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("--dashboard " + port + ": use a port from 1 to 65535 (kubectl"
                    + " port-forward reaches it on the pod; 0, a free port, would be unknown to it)");
        }
        if (mode == Mode.OPERATOR_FREE && port == RENDEZVOUS_PORT) {
            throw new IllegalArgumentException("--dashboard " + port + ": pod 0 serves the job's rendezvous on that"
                    + " port; choose another (e.g. 8080)");
        }
    }

    /**
     * The ranks read their {@code KOLO_*} settings as any worker does (WorkerEnvironment): a bad value is named now,
     * before every pod fails on it. A value that refers to another variable ({@code $(VAR)}) is Kubernetes' to expand
     * and is checked by the ranks.
     */
    private static void checkKoloSettings(Map<String, String> env) {
        Map<String, String> literal = new LinkedHashMap<>();
        env.forEach((k, v) -> {
            if (!v.contains("$(")) {
                literal.put(k, v);
            }
        });
        try {
            WorkerEnvironment.settingsFrom(literal);
        } catch (BadSettingException e) {
            throw new IllegalArgumentException("--env " + e.getMessage());
        }
    }

    private static void quantity(String flag, String value) {
        if (value == null) {
            return;
        }
        if (!QUANTITY.matcher(value).matches()) {
            throw new IllegalArgumentException(flag + " " + value + " is not a Kubernetes quantity (e.g. 4, 500m, 16Gi)");
        }
        if (!value.matches(".*[1-9].*")) {
            throw new IllegalArgumentException(flag + " " + value + " must be more than 0 (leave it out to request"
                    + " nothing)");
        }
    }

    /**
     * "512m" is a valid quantity, but of 0.512 bytes: Kubernetes takes it (with a warning when fractional), and no
     * container fits. Memory in milli-bytes is always a slip for M or Mi.
     */
    private static void wholeBytes(String flag, String value) {
        if (value == null) {
            return;
        }
        java.math.BigDecimal bytes = new Quantity(value).getNumericalAmount().stripTrailingZeros();
        if (bytes.scale() > 0 || value.endsWith("m")) {
            String number = value.substring(0, value.length() - 1);
            throw new IllegalArgumentException(flag + " " + value + " is " + bytes.toPlainString() + " bytes"
                    + (value.endsWith("m") ? " ('m' is milli): write " + number + "Mi or " + number + "M"
                    : ": memory is a whole number of bytes (e.g. 512Mi, 16Gi)"));
        }
    }

    private static void atLeast(String limitFlag, String limit, String requestFlag, String request) {
        if (limit != null && request != null && new Quantity(limit).getNumericalAmount()
                .compareTo(new Quantity(request).getNumericalAmount()) < 0) {
            throw new IllegalArgumentException(limitFlag + " " + limit + " is less than " + requestFlag + " " + request
                    + ": Kubernetes needs a limit of at least the request (raise " + limitFlag + " or lower "
                    + requestFlag + ")");
        }
    }

    /** Total ranks, W x S. */
    public int ranks() {
        return workers * slots;
    }

    /** Whether the job is an MPIJob (either version): a launcher pod runs kolo run, the workers run the ranks. */
    boolean mpiJob() {
        return mode != Mode.OPERATOR_FREE;
    }

    /** The same job in namespace {@code ns}. */
    KoloJobSpec inNamespace(String ns) {
        return new KoloJobSpec(name, image, workers, slots, cpu, memory, gpus, limitCpu, limitMemory, ns, env, mode,
                command, backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished, startTimeoutSeconds,
                dashboardPort);
    }

    /** A builder with defaults: 1 worker of 1 slot, operator-free, 300 s start timeout. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** Builds a {@link KoloJobSpec}. */
    public static final class Builder {
        private final String name;
        private String image;
        private int workers = 1;
        private int slots = 1;
        private String cpu;
        private String memory;
        private int gpus;
        private String limitCpu;
        private String limitMemory;
        private String namespace;
        private final Map<String, String> env = new LinkedHashMap<>();
        private Mode mode = Mode.OPERATOR_FREE;
        private List<String> command = List.of();
        private int backoffLimit;
        private Long activeDeadlineSeconds;
        private Integer ttlSecondsAfterFinished;
        private int startTimeoutSeconds = DEFAULT_START_TIMEOUT_SECONDS;
        private Integer dashboardPort;

        private Builder(String name) {
            this.name = name;
        }

        public Builder image(String v) { image = v; return this; }
        public Builder workers(int v) { workers = v; return this; }
        public Builder slots(int v) { slots = v; return this; }
        public Builder cpu(String v) { cpu = v; return this; }
        public Builder memory(String v) { memory = v; return this; }
        public Builder gpus(int v) { gpus = v; return this; }
        public Builder limitCpu(String v) { limitCpu = v; return this; }
        public Builder limitMemory(String v) { limitMemory = v; return this; }
        public Builder namespace(String v) { namespace = v; return this; }
        public Builder env(String k, String v) { env.put(k, v); return this; }
        public Builder mode(Mode v) { mode = v; return this; }
        public Builder command(List<String> v) { command = List.copyOf(v); return this; }
        public Builder backoffLimit(int v) { backoffLimit = v; return this; }
        public Builder activeDeadlineSeconds(Long v) { activeDeadlineSeconds = v; return this; }
        public Builder ttlSecondsAfterFinished(Integer v) { ttlSecondsAfterFinished = v; return this; }
        public Builder startTimeoutSeconds(int v) { startTimeoutSeconds = v; return this; }
        /** The job's live page on this port of node 0's pod (or the MPIJob's launcher); null for none. */
        public Builder dashboardPort(Integer v) { dashboardPort = v; return this; }

        /** The spec; {@link IllegalArgumentException} naming the first bad value. */
        public KoloJobSpec build() {
            return new KoloJobSpec(name, image, workers, slots, cpu, memory, gpus, limitCpu, limitMemory, namespace,
                    env, mode, command, backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished,
                    startTimeoutSeconds, dashboardPort);
        }
    }
}
