package io.kolo.launcher;

import io.kolo.launcher.job.Job;
import io.kolo.launcher.job.UsageException;
import io.kolo.launcher.node.NodeRun;

import picocli.CommandLine.Option;

import java.util.Map;

/**
 * The options of {@code kolo run} started once per node ({@code --nnodes}): a Kubernetes Indexed Job's pods,
 * {@code srun --ntasks-per-node=1}, or by hand. Each instance starts its node's ranks; node 0's also serves the
 * rendezvous store. See {@link NodeRun}.
 */
final class NodeOptions {
    @Option(names = "--nnodes", paramLabel = "N",
            description = "Per-node launcher: the job runs on N nodes, each starting its own kolo run.")
    Integer nnodes;

    @Option(names = "--node-rank", paramLabel = "R",
            description = "This node's index, 0 to N-1 (default: JOB_COMPLETION_INDEX of a Kubernetes Indexed Job,"
                    + " else SLURM_NODEID). Node 0 serves the rendezvous.")
    Integer nodeRank;

    @Option(names = "--rendezvous", paramLabel = "HOST[:PORT]",
            description = "Node 0's host and the port its kolo run serves the rendezvous on (default port 29500).")
    String rendezvous;

    @Option(names = {"--np-per-node", "-np-per-node"}, paramLabel = "S",
            description = "Ranks on each node (default: -np / N, else 1); ranks are R*S + local rank.")
    Integer perNode;

    boolean given() {
        return nnodes != null || nodeRank != null || rendezvous != null || perNode != null;
    }

    /** The node rank from the flag, else from the environment an Indexed Job or srun gives each node. */
    int nodeRank(Map<String, String> env) {
        if (nodeRank != null) {
            return nodeRank;
        }
        for (String var : new String[] {"JOB_COMPLETION_INDEX", "SLURM_NODEID"}) {
            String v = env.get(var);
            if (v != null && !v.isBlank()) {
                try {
                    return Integer.parseInt(v.strip());
                } catch (NumberFormatException e) {
                    throw new UsageException(var + "=" + v + " is not a node index; give --node-rank");
                }
            }
        }
        throw new UsageException("--nnodes needs --node-rank R (this node's index from 0 to " + (nnodes - 1) + ")");
    }
}
