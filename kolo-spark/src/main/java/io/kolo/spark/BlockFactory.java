package io.kolo.spark;

import ai.djl.nn.Block;

import java.io.Serializable;

/**
 * Makes the network a {@link DjlEstimator} trains, on every executor (a DJL block is not serializable, a recipe is).
 *
 * <pre>{@code
 * BlockFactory mlp = () -> new SequentialBlock()
 *         .add(Blocks.batchFlattenBlock(784))
 *         .add(Linear.builder().setUnits(64).build()).add(Activation::relu)
 *         .add(Linear.builder().setUnits(10).build());
 * }</pre>
 */
@FunctionalInterface
public interface BlockFactory extends Serializable {
    Block create();
}
