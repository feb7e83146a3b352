package io.kolo.launcher.tools;

import io.kolo.launcher.Main;
import io.kolo.launcher.Subcommand;

import picocli.CommandLine.Command;

import java.io.PrintStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;

/**
 * {@code kolo k8s}: lives in the kolo-k8s module, found by name at run time, so that the Kubernetes client (many
 * jars) is neither a dependency of the launcher nor loaded by {@code kolo run}. The {@code ./kolo} script puts
 * kolo-k8s on the classpath for this command only.
 */
@Command(name = K8sEntry.NAME, addMethodSubcommands = false,
        description = "Submit, follow and explain jobs on Kubernetes (kolo k8s --help).")
public final class K8sEntry implements Subcommand {
    public static final String NAME = "k8s";
    static final String CLI_CLASS = "io.kolo.k8s.K8sCli";

    @Override
    public int call(PrintStream out, PrintStream err, boolean installShutdownHook) {
        return run(List.of(), out, err);
    }

    public static int run(List<String> args, PrintStream out, PrintStream err) {
        MethodHandle main;
        try {
            Class<?> cli = Class.forName(CLI_CLASS);
            main = MethodHandles.publicLookup().findStatic(cli, "main", MethodType.methodType(int.class,
                    String[].class, java.io.InputStream.class, PrintStream.class, PrintStream.class));
        } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException e) {
            err.println("kolo: kolo k8s needs the kolo-k8s module on the classpath, which ./kolo adds for this"
                    + " command (build it with ./mvnw -DskipTests package)");
            return Main.USAGE;
        }
        try {
            return (int) main.invoke(args.toArray(String[]::new), System.in, out, err);
        } catch (Throwable t) {
            err.println("kolo: kolo k8s failed: " + t);
            return 1;
        }
    }
}
