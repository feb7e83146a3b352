package io.kolo.k8s;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * {@code kolo k8s}: submit, status, logs, delete, list. {@link #main} is what {@code kolo k8s} runs (the launcher
 * finds it by name, so fabric8 is loaded only for this command). Exit codes: the job's own when following it, 0 for
 * the other commands, 1 when Kubernetes refuses or cannot be reached or a pod cannot start (an image it cannot pull)
 * for longer than the start timeout, 2 for bad input, 130 after Ctrl-C.
 */
@Command(name = "k8s", sortOptions = false,
        description = "Submit, follow and explain Kolo jobs on Kubernetes (kubeconfig as kubectl finds it).",
        subcommands = {K8sCli.Submit.class, K8sCli.Status.class, K8sCli.Logs.class, K8sCli.Delete.class,
                K8sCli.ListJobs.class})
public final class K8sCli {
    static final int USAGE = 2;
    static final int INTERRUPTED = 130;
    /** Following stopped because a pod cannot start (Kubernetes retries it forever): the job is left running. */
    static final int GAVE_UP = 1;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
    boolean help;

    final Supplier<KubernetesJobs> connect;
    final InputStream in;
    final PrintStream out;
    final PrintStream err;
    final Duration poll;
    /** Called with the follower while one runs, so that Ctrl-C can interrupt it (null: no signal handling). */
    final Consumer<Follower> onFollow;

    K8sCli(Supplier<KubernetesJobs> connect, InputStream in, PrintStream out, PrintStream err, Duration poll,
           Consumer<Follower> onFollow) {
        this.connect = connect;
        this.in = in;
        this.out = out;
        this.err = err;
        this.poll = poll;
        this.onFollow = onFollow;
    }

    /** {@code kolo k8s ARGS} as a command: the exit code. */
    public static int main(String[] args, InputStream in, PrintStream out, PrintStream err) {
        return new K8sCli(KubernetesJobs::connect, in, out, err, Duration.ofSeconds(2), SigInt::onFollow).run(args);
    }

    /** {@code java -cp ... io.kolo.k8s.K8sCli ARGS}: the same without the kolo launcher. */
    public static void main(String[] args) {
        int code = main(args, System.in, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    int run(String[] args) {
        // As users type it, so that every usage line reads "kolo k8s ...".
        CommandLine cli = new CommandLine(this).setCommandName("kolo k8s");
        // The job's command line travels as given: never replace "@FILE" by the file's contents.
        cli.setExpandAtFiles(false);
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        try {
            CommandLine.ParseResult parsed = cli.parseArgs(args);
            if (CommandLine.printHelpIfRequested(parsed)) {
                return 0;
            }
            if (!parsed.hasSubcommand()) {
                return usage("missing command: submit, status, logs, delete or list (kolo k8s --help)");
            }
            CommandLine sub = parsed.subcommand().commandSpec().commandLine();
            return (Integer) ((Callable<?>) sub.getCommand()).call();
        } catch (CommandLine.ParameterException e) {
            return usage(e.getMessage().lines().findFirst().orElse("bad arguments") + " (see '"
                    + e.getCommandLine().getCommandSpec().qualifiedName() + " --help')");
        } catch (IllegalArgumentException e) {
            return usage(e.getMessage());
        } catch (KubernetesJobException e) {
            err.println("kolo k8s: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("kolo k8s: " + e);
            return 1;
        }
    }

    private int usage(String message) {
        err.println("kolo k8s: " + message);
        return USAGE;
    }

    /** Options every subcommand has. */
    abstract static class Sub implements Callable<Integer> {
        @ParentCommand
        K8sCli cli;

        @Option(names = {"-n", "--namespace"}, paramLabel = "NS", description = "Namespace (default: the kubeconfig's).")
        String namespace;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
        boolean help;

        /** Follows {@code job} until it ends or Ctrl-C; after Ctrl-C asks whether to delete it. */
        int follow(KoloJob job, Integer rank, Path outputDir, int startTimeoutSeconds) throws IOException {
            Follower f = new Follower(job, rank, cli.out, cli.err, cli.poll, Duration.ofSeconds(startTimeoutSeconds));
            if (cli.onFollow != null) {
                cli.onFollow.accept(f);
            }
            int code = f.follow();
            if (code == Follower.STUCK) {
                return GAVE_UP;
            }
            if (code != Follower.INTERRUPTED) {
                return code;
            }
            cli.err.print("\nkolo k8s: delete job " + job.name() + "? [y/N] ");
            cli.err.flush();
            String answer = new BufferedReader(new InputStreamReader(cli.in, StandardCharsets.UTF_8)).readLine();
            if (answer != null && (answer.strip().equalsIgnoreCase("y") || answer.strip().equalsIgnoreCase("yes"))) {
                delete(job, outputDir);
            } else {
                cli.err.println("kolo k8s: job " + job.name() + " keeps running (kolo k8s logs " + job.name()
                        + " -f follows it again, kolo k8s delete " + job.name() + " stops it)");
            }
            return INTERRUPTED;
        }

        void delete(KoloJob job, Path outputDir) {
            List<Path> kept;
            try {
                kept = job.keepFailedLogs(outputDir, cli.err::println);
            } catch (KubernetesJobException e) {
                throw new KubernetesJobException(e.getMessage() + "; job " + job.name() + " was not deleted", e);
            }
            kept.forEach(p -> cli.err.println("kolo k8s: kept the log of a failed pod in " + p));
            job.cancel();
            cli.err.println("kolo k8s: deleted job " + job.name() + " (its pods, Service and Secret go with it)");
        }
    }

    @Command(name = "submit", sortOptions = false, description = "Submit a job and follow it (unless --detach).",
            customSynopsis = {"kolo k8s submit NAME --image IMG --workers W [--slots S] [--cpu C] [--memory M]"
                    + " [--gpu G]", "      [--mode operator-free|mpijob|mpijob-v1] [--env K=V]... [--dashboard PORT]"
                    + " [--dry-run] [--detach]", "      -- COMMAND [ARGS...]"})
    static final class Submit extends Sub {
        @Parameters(index = "0", paramLabel = "NAME", description = "Job name (a DNS label).")
        String name;
        @Parameters(index = "1..*", paramLabel = "COMMAND", description = "What each rank runs (after --): a command,"
                + " or -cp CP MAIN ARGS, or -jar APP ARGS.")
        List<String> command = new ArrayList<>();
        @Option(names = "--image", paramLabel = "IMG", description = "Container image (JDK 25, Kolo, your app).")
        String image;
        @Option(names = "--workers", paramLabel = "W", required = true, description = "Worker pods.")
        int workers;
        @Option(names = "--slots", paramLabel = "S", defaultValue = "1", description = "Ranks per worker (default 1).")
        int slots;
        @Option(names = "--cpu", paramLabel = "C", description = "CPU request (= limit) per worker, e.g. 4 or 500m.")
        String cpu;
        @Option(names = "--memory", paramLabel = "M", description = "Memory request (= limit) per worker, e.g. 16Gi.")
        String memory;
        @Option(names = "--gpu", paramLabel = "G", defaultValue = "0", description = "nvidia.com/gpu per worker.")
        int gpus;
        @Option(names = "--limit-cpu", paramLabel = "C", description = "CPU limit, when not the request.")
        String limitCpu;
        @Option(names = "--limit-memory", paramLabel = "M", description = "Memory limit, when not the request.")
        String limitMemory;
        @Option(names = "--env", paramLabel = "K=V", description = "Variable for every rank (repeatable).")
        List<String> env = new ArrayList<>();
        @Option(names = "--mode", paramLabel = "MODE", defaultValue = "operator-free",
                description = "operator-free (Indexed Job, default), mpijob (MPI Operator's v2beta1 MPIJob) or"
                        + " mpijob-v1 (the training operator's v1 MPIJob, as Flyte makes it).")
        String mode;
        @Option(names = "--dashboard", paramLabel = "PORT", description = "Serve the job's live page on this port of"
                + " node 0's pod (the MPIJob's launcher); prints the kubectl port-forward line that reaches it.")
        Integer dashboard;
        @Option(names = "--backoff-limit", paramLabel = "N", defaultValue = "0", description = "Retries of the job.")
        int backoffLimit;
        @Option(names = "--active-deadline", paramLabel = "S", description = "Fail the job after S seconds.")
        Long activeDeadline;
        @Option(names = "--ttl-after-finished", paramLabel = "S", description = "Delete the job S s after it ends.")
        Integer ttl;
        @Option(names = "--start-timeout", paramLabel = "S", defaultValue = "300",
                description = "Seconds pods and ranks wait for each other (default 300).")
        int startTimeout;
        @Option(names = "--output-dir", paramLabel = "DIR", description = "Keep failed pods' logs here on delete.")
        Path outputDir;
        @Option(names = "--dry-run", description = "Print the objects as YAML; create nothing.")
        boolean dryRun;
        @Option(names = "--detach", description = "Submit and return; do not follow.")
        boolean detach;

        KoloJobSpec spec() {
            Map<String, String> vars = new LinkedHashMap<>();
            for (String e : env) {
                int eq = e.indexOf('=');
                if (eq < 1) {
                    throw new IllegalArgumentException("--env " + e + ": expected NAME=VALUE");
                }
                vars.put(e.substring(0, eq), e.substring(eq + 1));
            }
            KoloJobSpec.Builder b = KoloJobSpec.builder(name).image(image).workers(workers).slots(slots).cpu(cpu)
                    .memory(memory).gpus(gpus).limitCpu(limitCpu).limitMemory(limitMemory).namespace(namespace)
                    .mode(KoloJobSpec.Mode.of(mode)).command(command).backoffLimit(backoffLimit)
                    .activeDeadlineSeconds(activeDeadline).ttlSecondsAfterFinished(ttl).startTimeoutSeconds(startTimeout)
                    .dashboardPort(dashboard);
            vars.forEach(b::env);
            return b.build();
        }

        @Override
        public Integer call() throws IOException {
            KoloJobSpec spec = spec();
            if (dryRun) {
                cli.out.print(Manifests.yaml(Manifests.objects(spec, Manifests.newSecret())));
                return 0;
            }
            try (KubernetesJobs k8s = cli.connect.get()) {
                KoloJob job = k8s.submit(spec);
                cli.err.println("kolo k8s: submitted job " + job.name() + " (" + spec.mode().flag() + ", "
                        + spec.workers() + " x " + spec.slots() + " ranks) in namespace " + job.namespace());
                if (detach && spec.dashboardPort() != null) {
                    // The pod that serves the page gets its name only when its controller makes it.
                    cli.err.println("kolo k8s: the dashboard will be on port " + spec.dashboardPort() + " of "
                            + (spec.mpiJob() ? "the launcher pod" : "pod 0") + "; kolo k8s status " + job.name()
                            + " prints the kubectl port-forward line once that pod exists");
                }
                return detach ? 0 : follow(job, null, outputDir, spec.startTimeoutSeconds());
            }
        }
    }

    @Command(name = "status", description = "Pods, phase, exit code, and why the job is not running.")
    static final class Status extends Sub {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            KoloJobSpec.checkNamespace(namespace);
            try (KubernetesJobs k8s = cli.connect.get()) {
                KoloJob job = k8s.get(name, namespace);
                JobStatus status = job.status();
                cli.out.print(status.describe());
                job.dashboardPort().ifPresent(port -> cli.out.println("  dashboard: " + job.dashboard(status)
                        .orElse("port " + port + " of " + (job.mode() == KoloJobSpec.Mode.OPERATOR_FREE ? "pod 0"
                                : "the launcher pod") + ", which does not exist yet")));
                return 0;
            }
        }
    }

    @Command(name = "logs", description = "The ranks' output (tagged [rank]<stdout>:), of one rank with --rank.")
    static final class Logs extends Sub {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--rank", paramLabel = "R", description = "Only rank R's lines.")
        Integer rank;
        @Option(names = {"-f", "--follow"}, description = "Follow until the job ends.")
        boolean follow;

        @Override
        public Integer call() throws IOException {
            KoloJobSpec.checkNamespace(namespace);
            try (KubernetesJobs k8s = cli.connect.get()) {
                KoloJob job = k8s.get(name, namespace);
                if (rank != null && (rank < 0 || rank >= job.workers() * job.slots())) {
                    throw new IllegalArgumentException("--rank " + rank + ": job " + name + " has ranks 0 to "
                            + (job.workers() * job.slots() - 1));
                }
                if (follow) {
                    int code = follow(job, rank, null, KoloJobSpec.DEFAULT_START_TIMEOUT_SECONDS);
                    return code == INTERRUPTED || code == GAVE_UP ? code : 0;
                }
                cli.out.print(job.logs(rank));
                return 0;
            }
        }
    }

    @Command(name = "delete", description = "Delete a job and everything made for it, keeping failed pods' logs.")
    static final class Delete extends Sub {
        @Parameters(index = "0", paramLabel = "NAME")
        String name;
        @Option(names = "--output-dir", paramLabel = "DIR", description = "Write failed pods' logs here (else print).")
        Path outputDir;

        @Override
        public Integer call() {
            KoloJobSpec.checkNamespace(namespace);
            try (KubernetesJobs k8s = cli.connect.get()) {
                delete(k8s.get(name, namespace), outputDir);
                return 0;
            }
        }
    }

    @Command(name = "list", description = "Kolo jobs in the namespace, one line each.")
    static final class ListJobs extends Sub {
        @Override
        public Integer call() {
            KoloJobSpec.checkNamespace(namespace);
            try (KubernetesJobs k8s = cli.connect.get()) {
                for (KoloJob job : k8s.list(namespace)) {
                    JobStatus s = job.status();
                    cli.out.println(job.name() + "\t" + job.mode().flag() + "\t" + job.workers() + "x" + job.slots()
                            + "\t" + s.phase().name().toLowerCase()
                            + s.exitCode().stream().mapToObj(c -> "\texit " + c).findFirst().orElse(""));
                }
                return 0;
            }
        }
    }
}
