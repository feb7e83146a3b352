package io.kolo.k8s;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Ctrl-C while following a job interrupts the following, not the JVM, so that {@code kolo k8s} can ask whether to
 * delete the job. {@code sun.misc.Signal} (module jdk.unsupported) is the only way the JDK offers to catch SIGINT
 * without shutting down; it is reached reflectively because javac's warning on every use of it cannot be suppressed,
 * and main code compiles with {@code -Werror}.
 */
final class SigInt {
    private SigInt() {
    }

    static void onFollow(Follower follower) {
        try {
            Class<?> signalType = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Method handle = signalType.getMethod("handle", signalType, handlerType);
            Method handlerHandle = handlerType.getMethod("handle", signalType);
            Object interrupting = Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[]{handlerType},
                    (proxy, method, args) -> {
                        if (!method.equals(handlerHandle)) {
                            return switch (method.getName()) {
                                case "equals" -> proxy == args[0];
                                case "hashCode" -> System.identityHashCode(proxy);
                                default -> "SigInt";
                            };
                        }
                        follower.interrupt();
                        return null;
                    });
            handle.invoke(null, signalType.getConstructor(String.class).newInstance("INT"), interrupting);
        } catch (InvocationTargetException e) {
            if (!(e.getCause() instanceof IllegalArgumentException)) {
                throw new IllegalStateException("cannot catch SIGINT: " + e.getCause(), e.getCause());
            }
            // No SIGINT here (or the JVM was started with -Xrs): Ctrl-C then ends kolo k8s; the job goes on.
        } catch (ReflectiveOperationException e) {
            // No sun.misc.Signal in this JDK: Ctrl-C then ends kolo k8s; the job goes on.
        }
    }
}
