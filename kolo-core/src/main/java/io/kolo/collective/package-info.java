/**
 * The collective algorithms (ring, recursive doubling, hierarchical, Adasum) and their reduction kernels, internal to
 * Kolo: an algorithm works on a transport it does not know. Exported only to the benchmarks, which time the kernels
 * ({@link io.kolo.collective.Kernels}).
 */
package io.kolo.collective;
