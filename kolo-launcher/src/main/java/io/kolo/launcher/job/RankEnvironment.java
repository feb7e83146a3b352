package io.kolo.launcher.job;


import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.RankVariables;
import io.kolo.launch.JobSecret;

import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The variables a rank gets on top of the launcher's environment. */
public final class RankEnvironment {
    public static final String SECRET = KoloSettings.SECRET.name();
    /** Set by kolo run for each rank. */
    static final Set<String> LAUNCHER_VARS = Stream.concat(RankVariables.PER_RANK.stream(),
            Stream.of(KoloSettings.START_TIMEOUT_SECONDS.name())).collect(Collectors.toUnmodifiableSet());
    /** Set by an elastic kolo run for each worker, on top of {@link #LAUNCHER_VARS}. */
    static final Set<String> ELASTIC_VARS = RankVariables.ELASTIC;
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /**
     * The launcher's own view settings: under kolo run the launcher serves and writes the view ({@link ViewPlan}), so
     * these never travel to the ranks (a rank given them would try to be the view's holder as under mpirun).
     */
    static final Set<String> VIEW_HOLDER_VARS = Set.of(KoloSettings.DASHBOARD_PORT.name(),
            KoloSettings.DASHBOARD_BIND.name(), KoloSettings.REPORT.name());

    private RankEnvironment() {
    }

    /** The rank in {@code slot}'s variables, whose store the launcher serves at {@code rendezvous}; add to them. */
    public static RankVariables koloVars(RankMap.Slot slot, InetSocketAddress rendezvous, JobSecret secret,
                                  int startTimeoutSeconds) {
        return RankVariables.of(slot.topology(), slot.host())
                .rendezvous(rendezvous.getAddress().getHostAddress(), rendezvous.getPort())
                .secret(secret).startTimeoutSeconds(startTimeoutSeconds);
    }

    /**
     * {@code -x VAR=VALUE} sets a value, {@code -x VAR} forwards the launcher's own (as mpirun does). A
     * forwarded variable the launcher does not have is skipped with a warning rather than an error, so a
     * script that forwards an optional variable keeps working.
     */
    public static Map<String, String> exports(List<String> specs, Map<String, String> launcherEnv, List<String> warnings) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String spec : specs) {
            int eq = spec.indexOf('=');
            String name = eq < 0 ? spec : spec.substring(0, eq);
            if (!NAME.matcher(name).matches()) {
                throw new UsageException("-x " + spec + ": '" + name + "' is not a valid environment variable name");
            }
            if (LAUNCHER_VARS.contains(name) || ELASTIC_VARS.contains(name)) {
                // The name alone: the value may be a secret (-x KOLO_SECRET=$SECRET), and error lines end up in logs.
                throw new UsageException("-x " + name + ": " + name + " is set by kolo run for each rank");
            }
            if (eq >= 0) {
                env.put(name, spec.substring(eq + 1));
            } else if (launcherEnv.containsKey(name)) {
                env.put(name, launcherEnv.get(name));
            } else {
                warnings.add("kolo: -x " + name + ": not set in the launcher's environment; not forwarded");
            }
        }
        return env;
    }

    /**
     * Checks, before any rank starts, every {@code KOLO_*} setting that will reach the ranks: those given with -x and
     * those in the launcher's own environment (ranks on this host inherit it), Horovod's variables that stand for them,
     * against the settings the ranks will
     * read them with, so a bad value is one line here instead of a failure inside every rank.
     */
    public static void checkSettings(Map<String, String> launcherEnv, Map<String, String> exported) {
        Map<String, String> reaching = new java.util.TreeMap<>();
        launcherEnv.forEach((k, v) -> {
            if ((k.startsWith("KOLO_") || k.startsWith("HOROVOD_")) && !LAUNCHER_VARS.contains(k)) {
                reaching.put(k, v);
            }
        });
        reaching.putAll(exported);
        List<String> problems = KoloSettings.problems(reaching);
        if (!problems.isEmpty()) {
            throw new UsageException(String.join("; ", problems) + " (no rank was started)");
        }
    }

    /**
     * The launcher's own settings that travel with the job: local ranks inherit the launcher's environment, ranks over
     * ssh do not, so its KOLO_* settings, and HOROVOD_* ones for those it leaves unset, go to every rank alike. Not the
     * job's placement and elastic variables, nor the interface and the start timeout, which the launcher resolves itself
     * (flags, else its own environment).
     */
    public static Map<String, String> launcherSettings(Map<String, String> launcherEnv) {
        Map<String, String> own = new LinkedHashMap<>();
        for (KoloSettings.Setting<?> s : KoloSettings.all()) {
            String value = launcherEnv.get(s.name());
            if (value != null && !value.isBlank()) {
                own.put(s.name(), value);
            }
        }
        own.putAll(KoloSettings.fromHorovod(launcherEnv));
        own.keySet().removeIf(name -> LAUNCHER_VARS.contains(name) || ELASTIC_VARS.contains(name)
                || name.equals(KoloSettings.IFACE.name()) || VIEW_HOLDER_VARS.contains(name));
        return own;
    }

    /**
     * What --verbose shows for one rank: never the secret, never the values of other programs' variables given with -x
     * (they may be credentials); Kolo's own settings are shown with their values.
     */
    public static String describe(int rank, List<String> command, Map<String, String> kolo, Map<String, String> exportedValues) {
        Set<String> exported = exportedValues.keySet();
        StringBuilder sb = new StringBuilder("kolo: rank ").append(rank).append(": ").append(shellQuote(command));
        sb.append("\nkolo: rank ").append(rank).append(" env:");
        kolo.forEach((k, v) -> {
            if (!k.equals(SECRET)) {
                sb.append(' ').append(k).append('=').append(v);
            }
        });
        for (String name : exported) {
            sb.append(' ').append(name).append('=').append(name.startsWith("KOLO_") ? exportedValues.get(name) : "(from -x)");
        }
        return sb.toString();
    }

    public static String shellQuote(List<String> command) {
        StringBuilder sb = new StringBuilder();
        for (String arg : command) {
            if (!sb.isEmpty()) {
                sb.append(' ');
            }
            if (!arg.isEmpty() && arg.matches("[A-Za-z0-9_@%+=:,./-]+")) {
                sb.append(arg);
            } else {
                sb.append('\'').append(arg.replace("'", "'\\''")).append('\'');
            }
        }
        return sb.toString();
    }
}
