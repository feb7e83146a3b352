package io.kolo.launcher.node;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Which signal is stopping this launcher: the exit code another node should be told, since a shutdown hook cannot
 * ask. SIGINT (Ctrl-C) is 130 and SIGTERM 143, as the JVM's own exit code says for this process. The JVM's handlers
 * stay in charge: each signal is noted, then handed to the handler it replaced, which starts the shutdown.
 * {@code sun.misc.Signal} (module jdk.unsupported) is the JDK's only way to see which signal arrived; it is reached
 * reflectively because javac's warning on every use of it cannot be suppressed, and main code compiles with
 * {@code -Werror}.
 */
final class StopSignal {
    static final int SIGINT = 130;
    static final int SIGTERM = 143;
    private static volatile int code = SIGTERM;

    private StopSignal() {
    }

    /** Notes SIGINT and SIGTERM from now on; in a launcher process of its own only (never in-process tests). */
    static synchronized void watch() {
        note("INT", SIGINT);
        note("TERM", SIGTERM);
    }

    /** The exit code of the signal that stopped this launcher (SIGTERM's when none was noted). */
    static int code() {
        return code;
    }

    private static void note(String name, int exitCode) {
        try {
            Class<?> signalType = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Method handle = signalType.getMethod("handle", signalType, handlerType);
            Method handlerHandle = handlerType.getMethod("handle", signalType);
            Object signal = signalType.getConstructor(String.class).newInstance(name);
            Object[] previous = new Object[1];
            Object noting = Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[]{handlerType},
                    (proxy, method, args) -> {
                        if (!method.equals(handlerHandle)) {
                            return switch (method.getName()) {
                                case "equals" -> proxy == args[0];
                                case "hashCode" -> System.identityHashCode(proxy);
                                default -> "StopSignal[" + name + "]";
                            };
                        }
                        code = exitCode;
                        handlerHandle.invoke(previous[0], args[0]);
                        return null;
                    });
            previous[0] = handle.invoke(null, signal, noting);
            if (previous[0] == handlerType.getField("SIG_IGN").get(null)
                    || previous[0] == handlerType.getField("SIG_DFL").get(null)) {
                // Ignored (started in the background) or the JVM's handlers are off (-Xrs): left as it was.
                handle.invoke(null, signal, previous[0]);
            }
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof IllegalArgumentException)) {
                throw new IllegalStateException("cannot watch SIG" + name + ": " + e.getCause(), e.getCause());
            }
            // Not catchable here: stopping reports SIGTERM's code.
        } catch (ReflectiveOperationException e) {
            // No sun.misc.Signal in this JDK: stopping reports SIGTERM's code.
        }
    }
}
