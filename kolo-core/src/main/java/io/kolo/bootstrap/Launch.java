package io.kolo.bootstrap;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A job started by someone else's launcher ({@code mpirun}, {@code mpiexec}, {@code srun}) rather than by
 * {@code kolo run}, and an id that every rank of that one launch shares and no other launch has, so that the
 * ranks can find each other without any Kolo variable.
 *
 * @param launcher what started the job, for messages ("Open MPI", "MPICH/Intel MPI", "Slurm")
 * @param jobId    the same on every rank of this launch; empty when the launcher gives none
 */
record Launch(String launcher, Optional<String> jobId) {

    /** The launch described by {@code env}, or empty for {@code kolo run} or a plain process. */
    static Optional<Launch> detect(Map<String, String> env) {
        if (env.containsKey(KoloSettings.RANK.name())) {
            return Optional.empty();
        }
        if (env.containsKey("OMPI_COMM_WORLD_RANK")) {
            // PMIX_NAMESPACE (PMIx-era Open MPI) and the ess job id both name this mpirun's job.
            return Optional.of(new Launch("Open MPI", first(env, "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")));
        }
        if (env.containsKey("PMI_RANK")) {
            return Optional.of(new Launch("MPICH/Intel MPI", hydraJob(env)));
        }
        if (env.containsKey("SLURM_PROCID")) {
            // One allocation runs many steps, each its own launch: both ids are needed.
            Optional<String> job = Optional.ofNullable(env.get("SLURM_JOB_ID"))
                    .map(id -> id + "." + env.getOrDefault("SLURM_STEP_ID", "0"));
            return Optional.of(new Launch("Slurm", job));
        }
        return Optional.empty();
    }

    /** How a user of this launcher gives every rank {@code var=value}, for error messages. */
    String howToSet(String var, String value) {
        return switch (launcher) {
            case "Open MPI" -> "mpirun -x " + var + "=" + value + " ...";
            case "MPICH/Intel MPI" -> "mpiexec -genv " + var + " " + value + " ...";
            default -> "export " + var + "=" + value + " before srun";
        };
    }

    /**
     * Hydra gives no job id in the environment; PMI_PORT (port mode) is the proxy's address, shared by the
     * ranks it started; otherwise the ranks on one host are children of one hydra_pmi_proxy.
     */
    private static Optional<String> hydraJob(Map<String, String> env) {
        Optional<String> port = first(env, "PMIX_NAMESPACE", "PMI_PORT");
        if (port.isPresent()) {
            return port;
        }
        Optional<ProcessHandle> p = ProcessHandle.current().parent();
        ProcessHandle direct = p.orElse(null);
        while (p.isPresent()) {
            String cmd = p.get().info().command().orElse("");
            if (cmd.endsWith("hydra_pmi_proxy")) {
                return Optional.of(processId(p.get()));
            }
            p = p.get().parent();
        }
        return Optional.ofNullable(direct).map(Launch::processId);
    }

    private static String processId(ProcessHandle p) {
        return "pid" + p.pid() + "@" + p.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    private static Optional<String> first(Map<String, String> env, String... names) {
        for (String n : names) {
            String v = env.get(n);
            if (v != null && !v.isBlank()) {
                return Optional.of(v.trim());
            }
        }
        return Optional.empty();
    }
}
