package io.kolo.bootstrap;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

/** {@code CpuBindingChild LOCAL_RANK LOCAL_SIZE}: binds, starts a thread, prints every thread's allowed CPUs. */
public final class CpuBindingChild {
    private CpuBindingChild() {
    }

    public static void main(String[] args) throws Exception {
        var cpus = CpuBinding.apply(Map.of("KOLO_BIND_TO", args.length > 2 ? args[2] : "core"),
                Integer.parseInt(args[0]), Integer.parseInt(args[1]));
        System.out.println("bound to " + (cpus.isEmpty() ? "nothing" : cpus.size() == 1 ? cpus.getFirst()
                : cpus.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(","))));
        Thread late = Thread.ofPlatform().name("late-thread").start(() -> {
            try {
                Thread.sleep(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Thread.sleep(100);
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                String comm;
                String allowed = "?";
                try {
                    comm = Files.readString(task.resolve("comm")).strip();
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("Cpus_allowed_list:")) {
                            allowed = line.substring(line.indexOf(':') + 1).strip();
                        }
                    }
                } catch (java.io.IOException ended) {
                    continue;
                }
                System.out.println("thread " + task.getFileName() + " " + comm + ": " + allowed);
            }
        }
        late.interrupt();
    }
}
