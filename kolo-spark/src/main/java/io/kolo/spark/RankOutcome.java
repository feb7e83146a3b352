package io.kolo.spark;

import java.io.Serializable;
import java.util.List;

/**
 * What a rank of a fit returns: the epochs' metrics (the same on every rank), on rank 0 the parameters, and when its
 * first training step ended (wall clock, for the start overhead a benchmark reports).
 */
record RankOutcome(List<EpochMetrics> epochs, byte[] parameters, long firstStepMillis) implements Serializable {
}
