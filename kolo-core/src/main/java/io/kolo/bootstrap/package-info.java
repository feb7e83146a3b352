/**
 * How a rank joins its job, internal to Kolo: its settings ({@link io.kolo.bootstrap.KoloSettings}, every
 * {@code KOLO_*} variable read in one place), the job's rendezvous store and the handshake between ranks. Exported
 * only to the launcher ({@code kolo run}), which serves the store and checks the settings before any rank starts.
 */
package io.kolo.bootstrap;
