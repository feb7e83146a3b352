package io.kolo.k8s;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A Kolo job on Kubernetes: its status, its ranks' output, its events; wait for it, cancel it. Every method asks the
 * API server anew and throws {@link KubernetesJobException} with one line when it cannot.
 */
public final class KoloJob {
    private static final Duration POLL = Duration.ofSeconds(2);
    private final KubernetesClient client;
    private final StatusReader.Target target;

    KoloJob(KubernetesClient client, StatusReader.Target target) {
        this.client = client;
        this.target = target;
    }

    public String name() {
        return target.name();
    }

    public String namespace() {
        return target.namespace();
    }

    public KoloJobSpec.Mode mode() {
        return target.mode();
    }

    /** Workers (pods that run ranks) and ranks per worker. */
    public int workers() {
        return target.workers();
    }

    public int slots() {
        return target.slots();
    }

    /**
     * How to reach the job's page: the {@code kubectl port-forward} line for the pod that serves it (node 0's, or the
     * MPIJob's launcher), once that pod exists; empty when the job has no page or the pod is not there yet.
     */
    public Optional<String> dashboard() {
        return target.dashboardPort() == null ? Optional.empty() : dashboard(status());
    }

    /** {@link #dashboard()} as of {@code status}. */
    Optional<String> dashboard(JobStatus status) {
        if (target.dashboardPort() == null) {
            return Optional.empty();
        }
        int port = target.dashboardPort();
        boolean launcher = target.mode() != KoloJobSpec.Mode.OPERATOR_FREE;
        return status.pods().stream().filter(p -> launcher ? p.index() < 0 : p.index() == 0).findFirst()
                .map(p -> "kubectl port-forward pod/" + p.name() + " " + port + ":" + port + " -n " + namespace()
                        + ", then open http://localhost:" + port + "/ with the token of the URL kolo run prints in its"
                        + " log (kolo k8s logs " + name() + ")");
    }

    /** The port of the job's page, when it has one. */
    public OptionalInt dashboardPort() {
        return target.dashboardPort() == null ? OptionalInt.empty() : OptionalInt.of(target.dashboardPort());
    }

    /** Pods, phase, exit code and the one-line reasons why the job is not running as it should. */
    public JobStatus status() {
        return KubernetesJobs.call(client, "read job " + name(), () -> new StatusReader(client, target).read());
    }

    /**
     * The output of every rank so far, tagged {@code [rank]<stdout>:} as {@code kolo run} prints it, or of one rank
     * ({@code rank} not null).
     */
    public String logs(Integer rank) {
        return KubernetesJobs.call(client, "read the logs of job " + name(), () -> {
            StringBuilder sb = new StringBuilder();
            for (String pod : logPods(rank)) {
                String log = PodLogs.read(client, namespace(), pod, null, false);
                if (log != null) {
                    log.lines().filter(l -> rank == null || l.startsWith("[" + rank + "]<"))
                            .forEach(l -> sb.append(l).append('\n'));
                }
            }
            return sb.toString();
        });
    }

    /** Follows one pod's log to its end, line by line, keeping those that {@code rank} (if not null) printed. */
    void followPod(String pod, Integer rank, Consumer<String> lines) {
        try (InputStream in = PodLogs.follow(client, namespace(), pod);
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (rank == null || line.startsWith("[" + rank + "]<")) {
                    lines.accept(line);
                }
            }
        } catch (IOException | KubernetesClientException e) {
            // The pod went away or its log ended early; the status says why.
        }
    }

    /** The pods whose logs hold the ranks' output: the workers (one for a rank), or the MPIJob's launcher. */
    List<String> logPods(Integer rank) {
        List<Pod> pods = KubernetesJobs.call(client, "read the pods of job " + name(),
                () -> new StatusReader(client, target).pods());
        return pods.stream().filter(p -> target.mode() != KoloJobSpec.Mode.OPERATOR_FREE ? StatusReader.index(p) < 0
                        : StatusReader.index(p) >= 0 && (rank == null || StatusReader.index(p) == rank / slots()))
                .map(p -> p.getMetadata().getName()).toList();
    }

    /** The events of the job's pods, oldest first, one line each. */
    public List<String> events() {
        return KubernetesJobs.call(client, "read the events of job " + name(), () -> {
            Set<String> pods = new StatusReader(client, target).pods().stream().map(p -> p.getMetadata().getName())
                    .collect(Collectors.toSet());
            pods.add(name());
            return client.v1().events().inNamespace(namespace()).list().getItems().stream()
                    .filter(e -> e.getInvolvedObject() != null && pods.contains(e.getInvolvedObject().getName()))
                    .map(KoloJob::line).toList();
        });
    }

    private static String line(Event e) {
        return e.getType() + " " + e.getReason() + " " + e.getInvolvedObject().getKind() + "/"
                + e.getInvolvedObject().getName() + ": " + e.getMessage();
    }

    /** Waits until the job has ended, polling; {@link TimeoutException} when it has not within {@code timeout}. */
    public JobStatus waitFor(Duration timeout) throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            JobStatus s = status();
            if (s.phase().done()) {
                return s;
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("job " + name() + " is still " + s.phase().name().toLowerCase()
                        + " after " + timeout.toSeconds() + " s" + (s.problems().isEmpty() ? ""
                        : ": " + s.problems().getFirst()));
            }
            Thread.sleep(Math.min(POLL.toMillis(), Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
        }
    }

    /** Deletes the job and, through their owner references, everything made for it. */
    public void cancel() {
        KubernetesJobs.call(client, "delete job " + name(), () -> {
            if (target.mode() != KoloJobSpec.Mode.OPERATOR_FREE) {
                client.genericKubernetesResources(Manifests.mpiJobApi(target.mode()), Manifests.MPIJOB_KIND)
                        .inNamespace(namespace())
                        .withName(name()).withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            } else {
                client.batch().v1().jobs().inNamespace(namespace()).withName(name())
                        .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            }
            return null;
        });
    }

    /**
     * The full logs of the pods that failed, kept before the job is deleted: written to {@code dir/POD.log} when
     * {@code dir} is not null, else given to {@code print} with a heading line each. The files written;
     * {@link KubernetesJobException} naming the file when one cannot be written.
     */
    public List<Path> keepFailedLogs(Path dir, Consumer<String> print) {
        return KubernetesJobs.call(client, "keep the logs of job " + name(), () -> {
            List<Path> written = new ArrayList<>();
            for (JobStatus.Pod p : status().pods()) {
                boolean failed = "Failed".equals(p.phase()) || p.exitCode().orElse(0) != 0;
                if (!failed) {
                    continue;
                }
                String log = PodLogs.read(client, namespace(), p.name(), null, false);
                log = log == null ? "" : log;
                if (dir == null) {
                    print.accept("--- log of failed pod " + p.name() + " ---");
                    log.lines().forEach(print);
                } else {
                    Path f = dir.resolve(p.name() + ".log");
                    try {
                        Files.createDirectories(dir);
                        Files.writeString(f, log);
                        written.add(f);
                    } catch (IOException e) {
                        throw new KubernetesJobException("cannot keep the log of failed pod " + p.name() + " in " + f
                                + " (" + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": "
                                + e.getMessage()) + "): choose another --output-dir", e);
                    }
                }
            }
            return written;
        });
    }
}
