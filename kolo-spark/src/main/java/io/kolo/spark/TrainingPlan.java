package io.kolo.spark;

import java.io.Serializable;

/** What every rank of a fit needs to know, shipped with the tasks. */
record TrainingPlan(BlockFactory block, TrainingConfigFactory config, long[] sampleShape, int batchSize, int epochs,
                    float learningRate, boolean scaleLearningRate, int warmupSteps, long seed, String checkpointDir)
        implements Serializable {
}
