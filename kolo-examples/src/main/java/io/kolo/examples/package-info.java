/**
 * Runnable examples, each a {@code main} started by {@code kolo run -np N --example NAME}:
 * {@link io.kolo.examples.AllreduceExample} (a first distributed program), {@link io.kolo.examples.MnistExample}
 * (DJL training on MNIST) and {@link io.kolo.examples.SyntheticExample} (a synthetic model, Horovod's
 * {@code pytorch_synthetic_benchmark}).
 */
package io.kolo.examples;
