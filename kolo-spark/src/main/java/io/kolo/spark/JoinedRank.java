package io.kolo.spark;

import io.kolo.Communicator;
import io.kolo.bootstrap.JobSecret;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.RendezvousServer;
import io.kolo.transport.ShmSegments;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
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
    private final RendezvousServer served;

    private JoinedRank(Communicator comm, RendezvousServer served) {
        this.comm = comm;
        this.served = served;
    }

    Communicator comm() {
        return comm;
    }

    static JoinedRank join(BarrierTaskContext ctx, JobSpec spec) {
        List<String> hosts = new ArrayList<>();
        for (BarrierTaskInfo info : ctx.getTaskInfos()) {
            hosts.add(Placement.hostOf(info.address()));
        }
        Placement at = Placement.of(hosts, ctx.partitionId());
        if (at.localRank() == 0) {
            // An executor killed while its ranks set up shared memory leaves segments no rank unlinked; the launcher
            // removes those of dead processes before a job, and so does the first rank on each host here.
            ShmSegments.removeStale();
        }
        JobSecret secret = spec.secretFor(ctx.stageId(), ctx.stageAttemptNumber());
        RendezvousServer server = at.rank() == 0 ? RendezvousServer.start(address(at.host()), 0, secret) : null;
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
            Map<String, String> env = new HashMap<>(spec.settings());
            env.put(KoloSettings.RANK.name(), String.valueOf(at.rank()));
            env.put(KoloSettings.SIZE.name(), String.valueOf(at.size()));
            env.put(KoloSettings.LOCAL_RANK.name(), String.valueOf(at.localRank()));
            env.put(KoloSettings.LOCAL_SIZE.name(), String.valueOf(at.localSize()));
            env.put(KoloSettings.CROSS_RANK.name(), String.valueOf(at.crossRank()));
            env.put(KoloSettings.CROSS_SIZE.name(), String.valueOf(at.crossSize()));
            env.put(KoloSettings.HOSTNAME.name(), at.host());
            env.put(KoloSettings.RENDEZVOUS_ADDR.name(), hosts.getFirst());
            env.put(KoloSettings.RENDEZVOUS_PORT.name(), rank0[1]);
            env.put(KoloSettings.RENDEZVOUS_SERVER.name(), "launcher");
            env.put(KoloSettings.SECRET.name(), secret.toHex());
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
