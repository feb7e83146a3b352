/**
 * {@code kolo bench}: times Kolo's collectives ({@link io.kolo.bench.BenchWorker}, one per rank) against Open MPI and
 * Gloo on the same steps, and reports tables, JSON and plots ({@link io.kolo.bench.BenchSuite},
 * {@link io.kolo.bench.Report}). Exported only to the launcher, which starts it.
 */
package io.kolo.bench;
