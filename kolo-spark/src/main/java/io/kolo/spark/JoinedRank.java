package io.kolo.spark;

import io.kolo.Communicator;
import io.kolo.launch.JobSecret;
import io.kolo.launch.RendezvousService;
import io.kolo.launch.SharedMemory;
import io.kolo.launch.WorkerEnvironment;
import org.apache.spark.BarrierTaskContext;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * One barrier task's membership in the job of its stage attempt. Rank 0's task serves the rendezvous store on its
 * executor's address, as {@code kolo run} serves it for the ranks it starts (every rank, rank 0 too, is its client);
 * {@code allGather} tells the others where; the hosts of the tasks give local and cross ranks. Closing leaves the
 * job and, on rank 0, stops the store.
 */
final class JoinedRank implements AutoCloseable {
    private final Communicator comm;
    private final RendezvousService served;

    private JoinedRank(Communicator comm, RendezvousService served) {
        this.comm = comm;
        this.served = served;
    }

    Communicator comm() {
        return comm;
    }

    static JoinedRank join(BarrierTaskContext ctx, JobSpec spec) {
        List<String> hosts = TaskHosts.of(ctx);
        int rank = ctx.partitionId();
        String host = hosts.get(rank);
        if (hosts.indexOf(host) == rank) {
            // An executor killed while its ranks set up shared memory leaves segments no rank unlinked; the launcher
            // removes those of dead processes before a job, and so does the first rank on each host here.
            SharedMemory.removeStaleSegments();
        }
        JobSecret secret = spec.secretFor(ctx.stageId(), ctx.stageAttemptNumber());
        RendezvousService server = rank == 0 ? RendezvousService.start(address(host), 0, secret) : null;
        try {
            String mine = ctx.stageAttemptNumber() + " " + (server == null ? "" : server.address().getPort());
            // The one Spark sync a job needs (it answers on a one-second poll): where rank 0 serves the store.
            String[] all = ctx.allGather(mine);
            String[] rank0 = all[0].split(" ");
            for (String other : all) {
                if (!other.split(" ")[0].equals(rank0[0])) {
                    // Spark runs one attempt's tasks together; anything else means a rank would join a dead job.
                    throw new IllegalStateException("barrier tasks of different stage attempts met: " + List.of(all));
                }
            }
            Map<String, String> env = WorkerEnvironment.forRank(rank, hosts)
                    .rendezvous(hosts.getFirst(), Integer.parseInt(rank0[1])).secret(secret)
                    .settings(spec.settingsFor(ctx.stageId(), ctx.stageAttemptNumber())).build();
            return new JoinedRank(Communicator.fromEnvironment(env), server);
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            throw e;
        }
    }

    private static InetAddress address(String host) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("rank 0's executor host " + host + " does not resolve on that host: set"
                    + " spark.driver.host / SPARK_LOCAL_IP so executors advertise a resolvable address", e);
        }
    }

    @Override
    public void close() {
        try {
            comm.close();
        } finally {
            if (served != null) {
                served.close();
            }
        }
    }
}
