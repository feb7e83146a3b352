/** Distributed training for DJL: {@link io.kolo.djl.DistributedTrainer} and its parts. */
// DJL's jars are automatic modules (no module-info of their own); its types (Trainer, Model) are in this API.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module io.kolo.djl {
    requires transitive io.kolo.core;
    requires transitive ai.djl.api;

    exports io.kolo.djl;
}
