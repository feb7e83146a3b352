package io.kolo.bootstrap;

import io.kolo.Topology;
import io.kolo.collective.Hosts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** Ranks started by mpirun on uneven hosts take Horovod's exact places from each other's host names. */
@Timeout(60)
class JobPlacementTest {

    /** Open MPI's variables of every rank placed on {@code hosts} (equal names share a host). */
    private static List<JobEnvironment> openMpi(List<String> hosts) {
        List<Topology> where = Placement.of(hosts);
        List<JobEnvironment> jobs = new ArrayList<>();
        for (Topology t : where) {
            jobs.add(JobEnvironment.from(Map.of("OMPI_COMM_WORLD_RANK", "" + t.rank(),
                    "OMPI_COMM_WORLD_SIZE", "" + t.size(), "OMPI_COMM_WORLD_LOCAL_RANK", "" + t.localRank(),
                    "OMPI_COMM_WORLD_LOCAL_SIZE", "" + t.localSize(), "KOLO_START_TIMEOUT_SECONDS", "20")));
        }
        return jobs;
    }

    /**
     * Every rank's {@link JobPlacement#of}, rank r on {@code names.get(r)}: the hosts as every rank holds them once the
     * ranks have exchanged their topologies (as the variables guess them) and host names at start.
     */
    private static List<Topology> exchange(List<JobEnvironment> jobs, List<String> names) {
        List<Topology> guessed = jobs.stream().map(JobEnvironment::topology).toList();
        Hosts hosts = Hosts.of(guessed, names);
        List<Topology> out = new ArrayList<>();
        for (JobEnvironment job : jobs) {
            out.add(JobPlacement.of(job, hosts.placingNames().orElse(null)));
        }
        return out;
    }

    /**
     * Before: mpirun's rank 2, alone on the second host of a:2 b:1, took every host to run one rank like its own and
     * had cross rank 2 of 3; Horovod's is 1 of 2 (ranks 0 and 2 have local rank 0).
     */
    @Test
    void ranksOnUnevenHostsTakeHorovodsPlacesFromEachOthersHosts() {
        for (List<String> hosts : List.of(List.of("a", "a", "b"), List.of("a", "b", "b", "b", "c", "c"),
                List.of("n1", "n2", "n1", "n3", "n2", "n1"))) {
            List<JobEnvironment> jobs = openMpi(hosts);
            assertEquals(Placement.of(hosts), exchange(jobs, hosts), "hosts " + hosts);
        }
        JobEnvironment alone = openMpi(List.of("a", "a", "b")).get(2);
        assertNotEquals(1, alone.crossRank(), "what the variables alone give (else this test shows nothing)");
    }

    @Test
    void hostNamesThatDisagreeWithTheLaunchersLocalRanksLeaveTheVariablesAsTheyAre() {
        List<JobEnvironment> jobs = openMpi(List.of("a", "a", "b"));
        // Every rank reports the same host name (containers of one machine, say): not where mpirun placed them.
        List<Topology> placed = exchange(jobs, List.of("same", "same", "same"));
        for (int r = 0; r < 3; r++) {
            assertEquals(jobs.get(r).topology(), placed.get(r));
        }
    }

    @Test
    void kolosOwnVariablesAndGivenCrossRanksAreKeptWhateverTheHostNames() {
        JobEnvironment kolo = JobEnvironment.from(Map.of("KOLO_RANK", "1", "KOLO_SIZE", "3", "KOLO_LOCAL_RANK", "0",
                "KOLO_LOCAL_SIZE", "1", "KOLO_CROSS_RANK", "1", "KOLO_CROSS_SIZE", "2", "KOLO_RENDEZVOUS_PORT", "1",
                "KOLO_SECRET", "00112233445566778899aabbccddeeff"));
        assertEquals(new Topology(1, 3, 0, 1, 1, 2), JobPlacement.of(kolo, List.of("a", "a", "b")));
        JobEnvironment given = JobEnvironment.from(Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "3",
                "OMPI_COMM_WORLD_LOCAL_RANK", "0", "OMPI_COMM_WORLD_LOCAL_SIZE", "1", "KOLO_CROSS_RANK", "1",
                "KOLO_CROSS_SIZE", "2"));
        assertEquals(new Topology(2, 3, 0, 1, 1, 2), JobPlacement.of(given, List.of("a", "b", "b")));
    }
}
