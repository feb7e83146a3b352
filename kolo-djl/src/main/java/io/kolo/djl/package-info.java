/**
 * Distributed training with DJL: a {@link io.kolo.djl.DistributedTrainer} in place of {@code model.newTrainer(config)}
 * averages gradients over every rank at each step and starts every rank from rank 0's parameters;
 * {@link io.kolo.djl.KoloDjl} gives each rank its device and threads, {@link io.kolo.djl.DistributedSampler} its shard
 * of the data, {@link io.kolo.djl.DistributedOptions} the choices (Adasum, compression, backward passes per step).
 *
 * <pre>{@code
 * Kolo.init();
 * KoloDjl.configureEngine();
 * Trainer trainer = new DistributedTrainer(model, config.optDevices(new Device[] {KoloDjl.device()}));
 * trainer.initialize(inputShape);   // broadcasts rank 0's parameters
 * }</pre>
 */
package io.kolo.djl;
