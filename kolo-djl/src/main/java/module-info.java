/** Distributed training for DJL: {@link io.kolo.djl.DistributedTrainer} and its parts. */
module io.kolo.djl {
    requires transitive io.kolo.core;
    requires transitive ai.djl.api;

    exports io.kolo.djl;
}
