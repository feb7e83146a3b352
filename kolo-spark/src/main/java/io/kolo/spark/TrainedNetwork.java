package io.kolo.spark;

import java.io.Serializable;

/**
 * A trained network as it travels to the executors and into a saved model: the recipe of the block, its parameters in
 * DJL's format (saved once, by rank 0) and the shape of one row's features.
 */
record TrainedNetwork(BlockFactory block, byte[] parameters, long[] inputShape) implements Serializable {
    /** The network on this JVM, ready to predict; close it when done. */
    Inference open() {
        return new Inference(block, parameters, inputShape);
    }
}
