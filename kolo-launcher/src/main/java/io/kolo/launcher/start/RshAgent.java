package io.kolo.launcher.start;

import io.kolo.launcher.job.UsageException;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The program that starts remote ranks in place of ssh, named the way MPI launchers name it: Open MPI's
 * {@code plm_rsh_agent} ({@code -mca plm_rsh_agent X} or {@code OMPI_MCA_plm_rsh_agent}; the training operator's MPIJob
 * v1 sets it to {@code /etc/mpi/kubexec.sh}) or Intel MPI's {@code -launcher rsh -launcher-exec X}. It is called as
 * {@code AGENT HOST COMMAND}, {@code COMMAND} being one POSIX shell command line, and nothing is assumed of it beyond
 * that: no ssh options, no stdin, host names passed on as they are.
 *
 * @param argv    the agent and its own arguments
 * @param sshArgs {@code plm_rsh_args}: extra arguments when the agent is ssh
 * @param source  where it was named, for messages ("OMPI_MCA_plm_rsh_agent", "-mca plm_rsh_agent", ...)
 */
public record RshAgent(List<String> argv, List<String> sshArgs, String source) {
    public static final String AGENT_VAR = "OMPI_MCA_plm_rsh_agent";
    public static final String ARGS_VAR = "OMPI_MCA_plm_rsh_args";

    public RshAgent {
        argv = List.copyOf(argv);
        sshArgs = List.copyOf(sshArgs);
    }

    /**
     * The agent named by {@code flag} (a command-line value, which wins, as in mpirun) or else by the launcher's
     * environment; null when none is named. Open MPI's value may list alternatives ({@code "ssh : rsh"}): the first
     * that exists on the PATH is used.
     *
     * @param flag       the agent given on the command line, or null
     * @param flagSource how it was given, e.g. "-mca plm_rsh_agent"
     * @param flagArgs   {@code -mca plm_rsh_args} given on the command line, or null
     */
    public static RshAgent choose(String flag, String flagSource, String flagArgs, Map<String, String> env) {
        String value = flag;
        String source = flagSource;
        if (value == null || value.isBlank()) {
            value = env.get(AGENT_VAR);
            source = AGENT_VAR;
        }
        if (value == null || value.isBlank()) {
            return null;
        }
        String args = flagArgs != null ? flagArgs : env.getOrDefault(ARGS_VAR, "");
        List<String> sshArgs = args.isBlank() ? List.of() : List.of(args.strip().split("\\s+"));
        List<String> tried = new ArrayList<>();
        for (String alternative : value.split(":")) {
            List<String> words = List.of(alternative.strip().split("\\s+"));
            if (words.getFirst().isEmpty()) {
                continue;
            }
            try {
                Executables.require(words.getFirst(), env.get("PATH"));
                return new RshAgent(words, sshArgs, source);
            } catch (IOException e) {
                tried.add(e.getMessage());
            }
        }
        throw new UsageException("the rsh agent '" + value.strip() + "' (" + source + ") cannot be run here: "
                + String.join("; ", tried) + " (no rank was started)");
    }

    /** Whether the agent is an ssh client, which then gets Kolo's ssh options and the extra arguments. */
    public boolean isSsh() {
        String name = Path.of(argv.getFirst()).getFileName().toString();
        return name.equals("ssh");
    }

    /** The ssh client command line when the agent is ssh: the agent, then {@code plm_rsh_args}. */
    public List<String> sshCommand() {
        List<String> command = new ArrayList<>(argv);
        command.addAll(sshArgs);
        return command;
    }

    /** How messages name it: the program as given. */
    public String describe() {
        return String.join(" ", argv);
    }
}
