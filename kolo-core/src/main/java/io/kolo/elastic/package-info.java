/**
 * Elastic training, as Horovod's {@code hvd.elastic}: {@link io.kolo.elastic.Elastic#run} runs a training function
 * that survives ranks that die and hosts that come and go under {@code kolo run --min-np A --max-np B}, going back to
 * the last {@link io.kolo.elastic.ElasticState#commit()} of its state ({@link io.kolo.elastic.ObjectState}, or a
 * framework's own {@link io.kolo.elastic.ElasticState}).
 *
 * <pre>{@code
 * ObjectState state = new ObjectState(Map.of("step", 0L));
 * Elastic.run(state, s -> {
 *     ... Kolo.allreduce(g, ReduceOp.AVERAGE); s.set("step", step + 1); s.commit(); ...
 *     return null;
 * });
 * }</pre>
 */
package io.kolo.elastic;
