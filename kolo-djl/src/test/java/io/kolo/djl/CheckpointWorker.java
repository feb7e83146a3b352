package io.kolo.djl;

import ai.djl.Model;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.core.Linear;
import io.kolo.Communicator;

import java.nio.file.Path;

/**
 * Saves a checkpoint of a model of some megabytes over and over (epoch 1, 2, ...) as rank 0 of a job of one, printing
 * {@code saved N} after each, until killed: the test kills it while it saves.
 */
public final class CheckpointWorker {
    static final int UNITS = 1024;

    private CheckpointWorker() {
    }

    static Model model() {
        Model model = Model.newInstance("ckpt");
        model.setBlock(Linear.builder().setUnits(UNITS).build());
        model.getBlock().initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1, UNITS));
        return model;
    }

    public static void main(String[] args) {
        KoloDjl.configureEngine(1);
        Communicator comm = Communicator.local(1).getFirst();
        try (Model model = model()) {
            RankZero rankZero = new RankZero(comm);
            for (int epoch = 1; ; epoch++) {
                rankZero.saveCheckpoint(model, Path.of(args[0]), epoch);
                System.out.println("saved " + epoch);
                System.out.flush();
            }
        }
    }
}
