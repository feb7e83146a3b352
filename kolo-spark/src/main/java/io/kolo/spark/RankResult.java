package io.kolo.spark;

import java.io.Serializable;

/** What one rank returned, with its rank: results come back from the shuffle in no particular order. */
record RankResult<R>(int rank, R value) implements Serializable {
}
