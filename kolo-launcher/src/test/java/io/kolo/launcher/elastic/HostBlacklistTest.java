package io.kolo.launcher.elastic;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The blacklist's cooldowns on a clock the test gives: doubling, capped, and a host's return reported once. */
class HostBlacklistTest {
    private static final long S = Duration.ofSeconds(1).toNanos();

    @Test
    void aHostComesBackAfterADoublingCappedCooldownAndItsReturnIsReportedOnce() {
        HostBlacklist b = new HostBlacklist(1, Duration.ofSeconds(2), Duration.ofSeconds(5));
        assertEquals("host h1 blacklisted for 2 s", b.failed("h1", 0));
        assertTrue(b.excluded("h1", S));
        assertEquals(List.of(), b.cameBack(S));
        assertFalse(b.excluded("h1", 2 * S));
        assertEquals(List.of("h1"), b.cameBack(2 * S));
        assertEquals(List.of(), b.cameBack(3 * S));
        assertEquals("host h1 blacklisted for 4 s", b.failed("h1", 10 * S));
        assertEquals("host h1 blacklisted for 5 s", b.failed("h1", 20 * S));
        assertEquals(List.of(), b.cameBack(24 * S));
        assertEquals(List.of("h1"), b.cameBack(25 * S));
    }

    @Test
    void aHostBlacklistedForGoodNeverComesBack() {
        HostBlacklist b = new HostBlacklist(1, null, null);
        assertEquals("host h1 blacklisted", b.failed("h1", 0));
        assertTrue(b.excluded("h1", 1000 * S));
        assertEquals(List.of(), b.cameBack(1000 * S));
    }
}
