package io.kolo.djl;

import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.loss.Loss;
import io.kolo.Communicator;

import java.util.List;

/**
 * What a {@link DistributedTrainer} reports to the job view at each optimizer step, with the step's number: the loss
 * of its last batch ({@code loss}), the config's training metrics as DJL's evaluator listener last accumulated them
 * (under the evaluator's name, e.g. {@code Accuracy}; only when the loop runs that listener, as {@code EasyTrain}
 * does), and this rank's samples per second since the last step ({@code samples/s}). Reporting never waits on the
 * other ranks (see {@link Communicator#report(String, double, long)}).
 */
final class TrainingReports {
    private final Communicator comm;
    private long step;
    private long samples;
    private long lastStepNanos = System.nanoTime();

    TrainingReports(Communicator comm) {
        this.comm = comm;
    }

    /** A forward pass of a batch of {@code n} samples. */
    void samples(long n) {
        samples += n;
    }

    /** An optimizer step was taken. */
    void stepped(ReportedLoss loss, List<Evaluator> evaluators, Loss configLoss) {
        long now = System.nanoTime();
        double value = loss.take();
        if (!Double.isNaN(value)) {
            comm.report("loss", value, step);
        }
        for (Evaluator e : evaluators) {
            if (e == configLoss) {
                continue;
            }
            try {
                comm.report(e.getName(), e.getAccumulator(EvaluatorTrainingListener.TRAIN_PROGRESS), step);
            } catch (RuntimeException noneYet) {
                // No evaluator listener accumulates it in this loop (a hand-written one): nothing to report.
            }
        }
        if (samples > 0 && now > lastStepNanos) {
            comm.report("samples/s", samples * 1e9 / (now - lastStepNanos), step);
        }
        samples = 0;
        lastStepNanos = now;
        step++;
    }
}
