package io.kolo.bench;

import java.time.Duration;

/** A job of {@code args[0]} ranks as threads of this JVM, run by {@link ScaleDescriptorLimitTest} under a low ulimit. */
public final class ScaleUnderLimitMain {
    private ScaleUnderLimitMain() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        ScaleBench.Config config = new ScaleBench.Config(2, n, ScaleBench.Mode.THREADS, 0, Duration.ofSeconds(30),
                "tcp", "", "test");
        ScaleStep step = ScaleBench.threads(config, n);
        System.out.println("step: " + step.status() + ": " + step.reason());
    }
}
