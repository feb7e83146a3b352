package io.kolo.spark;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The host of a barrier task's address, which ranks on one host share (how local and cross ranks follow from the
 * hosts is kolo-core's {@code WorkerEnvironment}, tested there).
 */
class TaskHostsTest {

    @Test
    void theHostOfATaskAddress() {
        assertEquals("10.0.0.7", TaskHosts.hostOf("10.0.0.7:41234"));
        assertEquals("node-3.example", TaskHosts.hostOf("node-3.example:7077"));
        assertEquals("fe80::1", TaskHosts.hostOf("[fe80::1]:7077"));
        assertEquals("fe80::1", TaskHosts.hostOf("fe80::1"));
        assertEquals("localhost", TaskHosts.hostOf("localhost"));
    }
}
