package io.kolo.launcher.start;

import io.kolo.launcher.job.RankEnvironment;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What runs every rank, on this host and (as the ssh command) on others: a small POSIX shell wrapper that reads the
 * rank's environment from its stdin (so the job secret never appears in a process list or in ssh's logs), changes to
 * the launcher's working directory, starts the rank, and watches stdin: when it closes (the launcher stopped the rank,
 * exited, or was killed, even with SIGKILL, or the connection broke) it terminates the rank and its process group,
 * TERM then KILL after a grace period, so no rank outlives its launcher on any host.
 *
 * <p>Why a pipe and not {@code PR_SET_PDEATHSIG}: the kernel sends that signal when the <em>thread</em> that forked the
 * child exits, and the JDK forks from whichever thread starts the process, so ranks would die with a finished helper
 * thread; it also reaches only the direct child, not what a rank started, and is Linux-only. A pipe's write end closes
 * whenever and however the launcher's process ends, and the watcher signals the rank's whole process group.
 */
public final class RankWrapper {
    /** Seconds between TERM and KILL on the remote side. */
    public static final int GRACE_SECONDS = 5;
    /** In the environment line only: a file the rank reads as its stdin (the wrapper removes it). */
    public static final String STDIN_FROM = "KOLO_STDIN_FROM";

    // $1 = working directory, the rest is the rank's command. The rank gets a session (and process group) of
    // its own through setsid where that exists, so stopping it reaches what it started and nothing else,
    // whoever started the wrapper; without setsid only the rank itself is signalled. Background jobs of a
    // non-interactive shell get /dev/null as stdin unless redirected, hence the explicit <&3 for the watcher.
    static final String WRAPPER = String.join("\n",
            "nl='",
            "'",
            "IFS= read -r kolo_env || { echo \"kolo: $(hostname): no environment arrived on stdin\" >&2; exit 126; }",
            "eval \"$kolo_env\"",
            "unset kolo_env",
            // What the rank reads: the launcher's stdin for rank 0 (opened by its /proc path; tried in a subshell
            // first, since a failed redirection would end this shell), else nothing.
            "kolo_in=/dev/null",
            "if [ -n \"${" + STDIN_FROM + ":-}\" ] && (exec <\"$" + STDIN_FROM + "\") 2>/dev/null; then kolo_in=$"
                    + STDIN_FROM + "; fi",
            "unset " + STDIN_FROM,
            "cd \"$1\" || { echo \"kolo: $(hostname): cannot change to $1 (kolo run expects the same paths on every"
                    + " host)\" >&2; exit 126; }",
            "shift",
            "exec 3<&0",
            "if command -v setsid >/dev/null 2>&1; then setsid \"$@\" <\"$kolo_in\" 3<&- & else \"$@\" <\"$kolo_in\" 3<&- &"
                    + " fi",
            "kolo_rank=$!",
            "kolo_signal() { kill -s \"$1\" -- -$kolo_rank 2>/dev/null || kill -s \"$1\" $kolo_rank 2>/dev/null; }",
            "( while IFS= read -r kolo_line; do :; done; kolo_signal TERM; sleep " + GRACE_SECONDS
                    + "; kolo_signal KILL ) <&3 >/dev/null 2>&1 &",
            "kolo_watch=$!",
            "exec 3<&- </dev/null",
            "wait $kolo_rank",
            "kolo_code=$?",
            "kill -s KILL $kolo_watch 2>/dev/null",
            // Reaped here: an orphaned watcher would be a zombie until init reaps it, and the launcher waits for the
            // ranks' descendants to be gone before it exits.
            "wait $kolo_watch 2>/dev/null",
            // Whatever the rank left running in its group goes with it, as on the launcher's own host: TERM,
            // and KILL for what is still there after the grace period (at once when nothing is left).
            "kolo_signal TERM",
            "kolo_n=0",
            "while [ $kolo_n -lt " + GRACE_SECONDS + " ] && kill -s 0 -- -$kolo_rank 2>/dev/null; do sleep 1;"
                    + " kolo_n=$((kolo_n + 1)); done",
            "kolo_signal KILL",
            "exit $kolo_code");

    private RankWrapper() {
    }

    /** The command that runs {@code rankCommand} on this host through the wrapper, in a session of its own. */
    static List<String> localCommand(String workingDirectory, List<String> rankCommand) {
        List<String> words = new ArrayList<>(List.of("sh", "-c", WRAPPER, "kolo-rank", workingDirectory));
        words.addAll(rankCommand);
        return detached(words);
    }

    /**
     * {@code argv} in a session of its own (through {@code setsid} where there is one), so Ctrl-C at the terminal
     * reaches only the launcher, which then stops the ranks in order; an ssh client or a wrapper killed by the same
     * keystroke would look like a lost rank.
     */
    static List<String> detached(List<String> argv) {
        for (String dir : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, "setsid"))) {
                // -w: should setsid ever fork, it still waits and passes on the exit code.
                List<String> wrapped = new ArrayList<>(List.of(dir + "/setsid", "-w"));
                wrapped.addAll(argv);
                return wrapped;
            }
        }
        return argv;
    }

    /** The ssh command line: the login shell execs sh, so no extra shell stays around. */
    static String remoteCommand(String workingDirectory, List<String> rankCommand) {
        List<String> words = new ArrayList<>(List.of("exec", "sh", "-c", WRAPPER, "kolo-rank", workingDirectory));
        words.addAll(rankCommand);
        return RankEnvironment.shellQuote(words);
    }

    /**
     * The one line sent on ssh's stdin: {@code export NAME='value' ...}, evaluated by the wrapper. Newlines in
     * values travel as {@code $nl} so the line stays one line.
     */
    static String environmentLine(Map<String, String> env) {
        StringBuilder sb = new StringBuilder("export");
        env.forEach((name, value) -> sb.append(' ').append(name).append("='")
                .append(value.replace("'", "'\\''").replace("\n", "'\"$nl\"'")).append('\''));
        return sb.append('\n').toString();
    }
}
