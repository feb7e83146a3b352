package io.kolo.spark;

import java.io.Serializable;
import java.util.List;

/** What a rank of a fit returns: the epochs' metrics (the same on every rank), and on rank 0 the parameters. */
record RankOutcome(List<EpochMetrics> epochs, byte[] parameters) implements Serializable {
}
