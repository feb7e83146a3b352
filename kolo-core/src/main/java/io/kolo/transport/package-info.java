/**
 * How ranks exchange bytes, internal to Kolo: shared memory within a host ({@link io.kolo.transport.ShmTransport}),
 * TCP between hosts ({@link io.kolo.transport.TcpTransport}), and the routing between them. Exported only to the
 * launcher, which removes the shared memory of ranks that were killed.
 */
package io.kolo.transport;
