package io.kolo.djl;

import ai.djl.Device;
import ai.djl.engine.Engine;
import io.kolo.Kolo;

/**
 * Step 2 of the four changes: give each rank its own compute. Call {@link #configureEngine} before anything
 * touches DJL's engine (thread counts are fixed when PyTorch loads), then put {@link #device()} in the
 * training config.
 */
public final class KoloDjl {
    /** Environment variable (or system property {@code kolo.djl.threads}) with PyTorch's threads per rank. */
    public static final String THREADS_VARIABLE = "KOLO_DJL_THREADS";

    private KoloDjl() {
    }

    /**
     * Sets PyTorch's intra-op and inter-op thread counts for this rank, from {@code KOLO_DJL_THREADS} or the
     * system property {@code kolo.djl.threads}, else 1: ranks sharing a host must not each start one thread
     * per core, or they fight over the cores and scaling collapses. Also turns on DJL's offline mode unless
     * {@code ai.djl.offline} is already set, because the engine's natives come from the classpath.
     *
     * @return the thread count used
     */
    public static int configureEngine() {
        String configured = System.getProperty("kolo.djl.threads", System.getenv(THREADS_VARIABLE));
        int threads = 1;
        if (configured != null && !configured.isBlank()) {
            try {
                threads = Integer.parseInt(configured.trim());
            } catch (NumberFormatException e) {
                threads = 0;
            }
            if (threads < 1) {
                throw new IllegalArgumentException(THREADS_VARIABLE + "=" + configured
                        + " is not a thread count: use a whole number >= 1");
            }
        }
        return configureEngine(threads);
    }

    /** As {@link #configureEngine()}, with an explicit thread count. */
    public static int configureEngine(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads per rank must be >= 1, not " + threads);
        }
        System.setProperty("ai.djl.pytorch.num_threads", Integer.toString(threads));
        System.setProperty("ai.djl.pytorch.num_interop_threads", "1");
        if (System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
        // Quiet PyTorch's "graph executor optimizer" banner on every rank; training does not use it.
        if (System.getProperty("ai.djl.pytorch.graph_optimizer") == null) {
            System.setProperty("ai.djl.pytorch.graph_optimizer", "false");
        }
        return threads;
    }

    /**
     * This rank's device: GPU number {@code localRank} when the engine sees enough GPUs, else the CPU.
     * Uses {@link Kolo#localRank()} when Kolo is initialised, else rank 0.
     */
    public static Device device() {
        return device(Kolo.isInitialized() ? Kolo.localRank() : 0);
    }

    public static Device device(int localRank) {
        int gpus = Engine.getInstance().getGpuCount();
        return localRank < gpus ? Device.gpu(localRank) : Device.cpu();
    }
}
