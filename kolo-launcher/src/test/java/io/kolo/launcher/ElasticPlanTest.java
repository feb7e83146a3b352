package io.kolo.launcher;

import io.kolo.launcher.elastic.ElasticPlan;
import io.kolo.launcher.elastic.ElasticSlots;
import io.kolo.launcher.elastic.HostDiscovery;
import io.kolo.launcher.job.Hosts;
import io.kolo.launcher.job.UsageException;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The elastic flags' meaning and their bad values, the discovery script's format, and stable rank assignment. */
class ElasticPlanTest {

    private static ElasticPlan plan(String... args) {
        return RunCommandTest.parse(args).elasticPlan(Map.of("HOME", "/home/me"),
                h -> h.equals("localhost") || h.startsWith("127."));
    }

    private static void assertUsage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> plan(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void flagsAndTheirDefaults() {
        ElasticPlan fixed = plan("-np", "3", "--min-np", "2", "-H", "localhost:4", "--reset-limit", "5", "--", "true");
        assertEquals(List.of(3, 2, 4, 5, 600), List.of(fixed.np(), fixed.minNp(), fixed.maxNp(), fixed.resetLimit(),
                (int) fixed.elasticTimeout().toSeconds()));
        assertEquals(ElasticOptions.FIXED_HOST_FAILURES, fixed.hostFailures());
        ElasticPlan script = plan("--min-np", "2", "--host-discovery-script", "./d.sh", "--elastic-timeout", "30",
                "--blacklist-cooldown-range", "10", "100", "--", "true");
        assertEquals(List.of(2, 2, Integer.MAX_VALUE, 1, 30, 10, 100), List.of(script.np(), script.minNp(),
                script.maxNp(), script.hostFailures(), (int) script.elasticTimeout().toSeconds(),
                (int) script.cooldownMin().toSeconds(), (int) script.cooldownMax().toSeconds()));
    }

    @Test
    void badValuesAreOneLineNamingTheFlag() {
        assertUsage("-np 1 must lie between --min-np 2 and --max-np 4", "-np", "1", "--min-np", "2", "--max-np", "4",
                "--", "true");
        assertUsage("--elastic-timeout must be at least 1 second, got 0", "--min-np", "1", "--elastic-timeout", "0",
                "--", "true");
        assertUsage("--blacklist-cooldown-range 9 3: give MIN MAX seconds with 1 <= MIN <= MAX", "--min-np", "1",
                "--blacklist-cooldown-range", "9", "3", "--", "true");
        assertUsage("use either --host-discovery-script or -H/--hostfile, not both", "--min-np", "1", "-H", "a:2",
                "--host-discovery-script", "x", "--", "true");
        assertUsage("--reset-limit must be 0 or more, got -1", "--min-np", "1", "--reset-limit", "-1", "--", "true");
        // Before: "-np must be at least 1, got 0" and "-np 3 must lie between --min-np 3 and --max-np 2".
        assertUsage("--min-np must be at least 1, got 0", "--min-np", "0", "--", "true");
        assertUsage("--max-np must be at least 1, got 0", "--max-np", "0", "--", "true");
        assertUsage("--max-np 2 is less than --min-np 3", "--min-np", "3", "--max-np", "2", "--", "true");
    }

    @Test
    void discoveryOutputIsHostOrHostColonSlots() throws Exception {
        assertEquals(List.of(new Hosts.Host("a", 2), new Hosts.Host("b", 5), new Hosts.Host("c", 2)),
                HostDiscovery.parse("a\nb:3\n\n# comment\nc\nb\n", 2, "s"));
        assertEquals(List.of(), HostDiscovery.parse("", 1, "s"));
        HostDiscovery.Failed bad = assertThrows(HostDiscovery.Failed.class, () -> HostDiscovery.parse("a:x\n", 1, "s"));
        assertTrue(bad.getMessage().startsWith("--host-discovery-script s printed 'a:x' (line 1): "), bad.getMessage());
        // Named by its line, not as a -H the user never gave.
        bad = assertThrows(HostDiscovery.Failed.class, () -> HostDiscovery.parse("h1\nnot a host!\n", 1, "s"));
        assertEquals("--host-discovery-script s printed 'not a host!' (line 2): 'not a host!' is not a host name or IPv4"
                + " address (letters, digits, '-', '_' and '.' only; an optional user@ before it); expected 'host' or"
                + " 'host:slots' per line", bad.getMessage());
    }

    /** A script that fails says why in the launcher's one line: before, its stderr was thrown away. */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aFailingDiscoveryScriptsLastErrorLineIsInTheMessage(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        HostDiscovery.Failed failed = assertThrows(HostDiscovery.Failed.class, () -> HostDiscovery.script(
                "echo h1; echo 'warming up' >&2; echo 'cannot reach the API server: connection refused' >&2; exit 3",
                1, java.time.Duration.ofSeconds(10)).find());
        assertEquals("--host-discovery-script echo h1; echo 'warming up' >&2; echo 'cannot reach the API server:"
                + " connection refused' >&2; exit 3 exited with code 3: cannot reach the API server: connection refused",
                failed.getMessage());

        java.nio.file.Path missing = dir.resolve("discover.sh");
        failed = assertThrows(HostDiscovery.Failed.class,
                () -> HostDiscovery.script(missing.toString(), 1, java.time.Duration.ofSeconds(10)).find());
        assertTrue(failed.getMessage().startsWith("--host-discovery-script " + missing + " exited with code 127: "),
                failed.getMessage());
        assertTrue(failed.getMessage().contains("not found"), failed.getMessage());

        // Silent failure: nothing to add.
        failed = assertThrows(HostDiscovery.Failed.class,
                () -> HostDiscovery.script("exit 4", 1, java.time.Duration.ofSeconds(10)).find());
        assertEquals("--host-discovery-script exit 4 exited with code 4", failed.getMessage());
    }

    /**
     * A script that hangs, or one that leaves something running with its output open, is given up on after the
     * timeout; before, the launcher waited for its output to end, forever, and watched no worker meanwhile.
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aDiscoveryScriptThatHangsIsGivenUpOnAfterItsTimeout(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.time.Duration timeout = java.time.Duration.ofSeconds(2);
        java.nio.file.Path pid = dir.resolve("pid");
        HostDiscovery.Failed hung = assertThrows(HostDiscovery.Failed.class,
                () -> HostDiscovery.script("echo a; echo $$ > " + pid + "; exec sleep 30", 1, timeout).find());
        assertEquals("--host-discovery-script echo a; echo $$ > " + pid + "; exec sleep 30 did not finish within 2 s",
                hung.getMessage());
        long sleeper = Long.parseLong(java.nio.file.Files.readString(pid).strip());
        assertTrue(ProcessHandle.of(sleeper).map(h -> h.onExit().orTimeout(5, java.util.concurrent.TimeUnit.SECONDS)
                .handle((x, e) -> e == null).join()).orElse(true), "the hung script is still running");

        // Exits at once and prints its hosts, but leaves a process behind that holds its output open.
        java.nio.file.Path bg = dir.resolve("bg");
        long start = System.nanoTime();
        try {
            assertEquals(List.of(new Hosts.Host("b", 2)), HostDiscovery.script("(sleep 30 & echo $! > " + bg
                    + "); echo b:2", 1, timeout).find());
            assertTrue(System.nanoTime() - start < timeout.toNanos(), "waited for the background process's output");
        } finally {
            ProcessHandle.of(Long.parseLong(java.nio.file.Files.readString(bg).strip())).ifPresent(ProcessHandle::destroy);
        }
    }

    @Test
    void ranksOnHostsThatStayKeepTheLowestRanks() {
        // Rank 1 (w1 on h1) is gone and h1 is blacklisted; h3 is new.
        List<ElasticSlots.Place> places = ElasticSlots.assign(List.of(new ElasticSlots.Current("w0", "h0", 0),
                new ElasticSlots.Current("w2", "h2", 2), new ElasticSlots.Current("w3", "h2", 3)),
                List.of(new Hosts.Host("h3", 1), new Hosts.Host("h2", 2), new Hosts.Host("h0", 1)), 4);
        assertEquals(List.of("w0@h0:0/4", "w2@h2:1/4", "w3@h2:2/4", "null@h3:3/4"), places.stream()
                .map(p -> p.worker() + "@" + p.slot().host() + ":" + p.slot().rank() + "/" + p.slot().topology().size()).toList());
        assertEquals(1, places.get(2).slot().topology().localRank());
    }
}
