/**
 * Kolo jobs on Spark, as {@code horovod.spark}: {@link io.kolo.spark.KoloSpark#run} runs a function on every rank of
 * a job made of one barrier stage's tasks, each with its own {@link io.kolo.Communicator}; {@link
 * io.kolo.spark.DjlEstimator} trains a DJL model on a {@code DataFrame} and gives back a {@link io.kolo.spark.DjlModel}.
 */
package io.kolo.spark;
