package io.kolo.spark;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.ParameterStore;
import io.kolo.djl.KoloDjl;

import java.nio.FloatBuffer;
import java.util.List;

/** A trained network on one JVM (an executor, or the driver), predicting class indices for rows of features. */
final class Inference implements AutoCloseable {
    private final Model model;
    private final Shape sample;

    Inference(BlockFactory factory, byte[] parameters, long[] sampleShape) {
        KoloDjl.configureEngine();
        this.sample = new Shape(sampleShape);
        this.model = Model.newInstance("kolo-spark-model");
        model.setBlock(factory.create());
        model.getBlock().initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1).addAll(sample));
        Parameters.load(model.getBlock(), model.getNDManager(), parameters);
    }

    /** The index of the highest output for each row. */
    double[] predict(List<float[]> rows) {
        double[] out = new double[rows.size()];
        try (NDManager m = model.getNDManager().newSubManager()) {
            NDArray x = batch(m, rows, sample);
            NDArray scores = model.getBlock().forward(new ParameterStore(m, false), new NDList(x), false)
                    .singletonOrThrow();
            long[] best = scores.argMax(1).toType(DataType.INT64, false).toLongArray();
            for (int i = 0; i < out.length; i++) {
                out[i] = best[i];
            }
        }
        return out;
    }

    static NDArray batch(NDManager m, List<float[]> rows, Shape sample) {
        long perRow = sample.size();
        FloatBuffer flat = FloatBuffer.allocate(Math.toIntExact(rows.size() * perRow));
        for (float[] r : rows) {
            if (r.length != perRow) {
                throw new IllegalArgumentException("a feature row has " + r.length + " values but the input shape "
                        + sample + " needs " + perRow);
            }
            flat.put(r);
        }
        flat.flip();
        return m.create(flat, new Shape(rows.size()).addAll(sample));
    }

    @Override
    public void close() {
        model.close();
    }
}
