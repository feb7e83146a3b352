package io.kolo.launcher.cluster;

import io.kolo.launcher.workers.ElasticCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Elastic jobs across hosts (network namespaces with real sshd, {@link NetnsCluster}), ported from Horovod's elastic
 * integration tests: a discovery script whose output the test changes, {@link ElasticCounter} workers started over
 * ssh. A whole host lost, a host removed gracefully, every rank failing, every host blacklisted, a blacklisted host
 * back after its cooldown. Each asserts the launcher's reset lines, the workers' ranks and sizes at the end, that no
 * committed step goes back, and that nothing is left on any host. Skipped (reason printed) without root, ip or sshd.
 */
@Timeout(150)
class ElasticHostsTest {
    @TempDir
    static Path dir;
    static NetnsCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = NetnsCluster.start(3, dir.resolve("cluster"));
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String h(int i) {
        return cluster.hostName(i);
    }

    @Test
    void aWholeHostLostIsBlacklistedAndTheOtherHostFinishes(@TempDir Path test) throws Exception {
        ElasticJob job = ElasticJob.start(cluster, test, h(0) + ":2\n" + h(1) + ":2\n",
                List.of("-np", "4", "--min-np", "2"), "60", "100");
        try {
            job.awaitCommit("w3", 5);
            // The host goes down: every process there dies at once but its sshd listener, workers and ssh sessions.
            List<String> kill = new ArrayList<>(List.of("kill", "-KILL"));
            cluster.jobPidsIn(1).forEach(p -> kill.add(Long.toString(p)));
            NetnsCluster.exec(kill);
            ElasticJob.Result r = job.finish(120);
            assertEquals(0, r.code(), r.out() + r.err() + job.logs());
            List<String> resets = resets(r);
            assertEquals(1, resets.size(), r.err());
            assertTrue(resets.getFirst().matches("kolo: reset 1: rank [23] on host " + q(h(1)) + " .*; host "
                    + q(h(1)) + " blacklisted; job 1 has 2 ranks \\(" + q(h(0)) + ":2\\)"), resets.getFirst());
            assertEquals(1, resets.getFirst().split("blacklisted", -1).length - 1, resets.getFirst());
            assertEquals(List.of("[0]<stdout>:worker w0 done at 60 as rank 0 of 2",
                    "[1]<stdout>:worker w1 done at 60 as rank 1 of 2"), done(r));
            job.assertCommitsNeverGoBack();
            assertNothingLeftOnHosts();
        } finally {
            job.kill();
        }
    }

    @Test
    void aHostRemovedFromTheDiscoveryOutputLeavesQuietlyAndTheJobGoesOn(@TempDir Path test) throws Exception {
        ElasticJob job = ElasticJob.start(cluster, test, h(0) + ":1\n" + h(1) + ":1\n" + h(2) + ":1\n",
                List.of("-np", "3", "--min-np", "2"), "60", "100");
        try {
            job.awaitCommit("w2", 5);
            job.discover(h(0) + ":1\n" + h(1) + ":1\n");
            ElasticJob.Result r = job.finish(120);
            assertEquals(0, r.code(), r.out() + r.err() + job.logs());
            assertEquals(List.of("kolo: reset 1: host " + h(2) + " removed; job 1 has 2 ranks (" + h(0) + ":1,"
                    + h(1) + ":1)"), resets(r));
            assertTrue(r.out().lines().anyMatch(l -> l.equals("[2]<stdout>:worker w2 removed: worker w2 has no place"
                    + " in the launcher's job 1 (host " + h(2) + " removed): leaving")), r.out());
            assertEquals(List.of("[0]<stdout>:worker w0 done at 60 as rank 0 of 2",
                    "[1]<stdout>:worker w1 done at 60 as rank 1 of 2"), done(r));
            // Removed gracefully: every rank left at the same commit, nobody went back to an earlier one.
            assertFalse(r.err().contains("restoring the last commit"), r.err());
            job.assertCommitsNeverGoBack();
            assertNothingLeftOnHosts();
        } finally {
            job.kill();
        }
    }

    @Test
    void everyRankFailingEndsTheJobAtOnceWithTheirCodeAndCause(@TempDir Path test) throws Exception {
        // A bug every rank hits at step 5: resets would only repeat it, so the job ends, without the elastic timeout.
        ElasticJob job = ElasticJob.start(cluster, test, h(0) + ":1\n" + h(1) + ":1\n",
                List.of("-np", "2", "--min-np", "1", "--elastic-timeout", "100"), "1000", "50", "5");
        try {
            ElasticJob.Result r = job.finish(60);
            assertEquals(3, r.code(), r.out() + r.err() + job.logs());
            // Each cause as the worker's last words tell it: where it called System.exit, and the code.
            assertTrue(r.err().lines().anyMatch(l -> l.matches("kolo: all 2 ranks of job 0 failed: rank 0 on host "
                    + q(h(0)) + " failed: called System.exit at .*\\(exit code 3\\); rank 1 on host " + q(h(1))
                    + " failed: called System.exit at .*\\(exit code 3\\); stopping the job")), r.err());
            assertEquals(List.of(), resets(r));
            job.assertCommitsNeverGoBack();
            assertNothingLeftOnHosts();
        } finally {
            job.kill();
        }
    }

    @Test
    void everyHostBlacklistedFailsAfterTheElasticTimeoutNamingThem(@TempDir Path test) throws Exception {
        ElasticJob job = ElasticJob.start(cluster, test, h(0) + ":2\n" + h(1) + ":2\n",
                List.of("-np", "4", "--min-np", "2", "--elastic-timeout", "4"), "1000", "50");
        try {
            job.awaitCommit("w3", 5);
            // One worker on each host: both hosts blacklisted, their other workers alive but with nowhere to go.
            NetnsCluster.exec(List.of("kill", "-KILL", Long.toString(job.pid("w0")), Long.toString(job.pid("w2"))));
            ElasticJob.Result r = job.finish(60);
            assertEquals(1, r.code(), r.out() + r.err() + job.logs());
            String last = r.err().lines().filter(l -> l.startsWith("kolo: ")).reduce((a, b) -> b).orElse("");
            assertTrue(last.endsWith("; every host is blacklisted (" + h(0) + ", " + h(1) + "): 0 slots available,"
                    + " fewer than --min-np 2, for longer than --elastic-timeout 4 s; stopping the job"), r.err());
            // Both causes named by the launcher (in one line when it took the two exits as one event).
            for (String cause : List.of("rank 0 on host " + h(0) + " exited with code 137", "rank 2 on host " + h(1)
                    + " exited with code 137")) {
                assertTrue(r.err().lines().anyMatch(l -> l.startsWith("kolo: ") && l.contains(cause)), r.err());
            }
            job.assertCommitsNeverGoBack();
            assertNothingLeftOnHosts();
        } finally {
            job.kill();
        }
    }

    @Test
    void aBlacklistedHostComesBackAfterItsCooldown(@TempDir Path test) throws Exception {
        ElasticJob job = ElasticJob.start(cluster, test, h(0) + ":1\n" + h(1) + ":1\n",
                List.of("-np", "2", "--min-np", "1", "--blacklist-cooldown-range", "2", "2"), "300", "50");
        try {
            job.awaitCommit("w1", 5);
            NetnsCluster.exec(List.of("kill", "-KILL", Long.toString(job.pid("w1"))));
            ElasticJob.Result r = job.finish(120);
            assertEquals(0, r.code(), r.out() + r.err() + job.logs());
            List<String> resets = resets(r);
            assertEquals(2, resets.size(), r.err());
            assertTrue(resets.get(0).matches("kolo: reset 1: rank 1 on host " + q(h(1)) + " exited with code 137 .*;"
                    + " host " + q(h(1)) + " blacklisted for 2 s; job 1 has 1 ranks \\(" + q(h(0)) + ":1\\)"),
                    resets.get(0));
            assertEquals("kolo: reset 2: host " + h(1) + " back after its blacklist cooldown; job 2 has 2 ranks ("
                    + h(0) + ":1," + h(1) + ":1)", resets.get(1));
            assertEquals(List.of("[0]<stdout>:worker w0 done at 300 as rank 0 of 2",
                    "[1]<stdout>:worker w2 done at 300 as rank 1 of 2"), done(r));
            assertTrue(job.log("w2").getFirst().endsWith(" rank 1 size 2"), job.log("w2").toString());
            job.assertCommitsNeverGoBack();
            assertNothingLeftOnHosts();
        } finally {
            job.kill();
        }
    }

    private static List<String> resets(ElasticJob.Result r) {
        return r.err().lines().filter(l -> l.startsWith("kolo: reset ")).toList();
    }

    private static List<String> done(ElasticJob.Result r) {
        return r.out().lines().filter(l -> l.contains(" done at ")).sorted().toList();
    }

    private static String q(String s) {
        return java.util.regex.Pattern.quote(s);
    }

    private static void assertNothingLeftOnHosts() throws InterruptedException {
        String left = cluster.leftOnHosts();
        assertTrue(left.isEmpty(), "left running: " + left);
    }
}
