package io.kolo.spark;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;

import java.util.ArrayList;
import java.util.List;

/**
 * The host of every barrier task, task {@code i} being rank {@code i}: what Kolo derives local and cross ranks from
 * ({@code WorkerEnvironment.forRank(rank, hosts)}). Spark places barrier tasks where it likes, so a host's ranks need
 * not be consecutive.
 */
final class TaskHosts {
    private TaskHosts() {
    }

    static List<String> of(BarrierTaskContext ctx) {
        List<String> hosts = new ArrayList<>();
        for (BarrierTaskInfo info : ctx.getTaskInfos()) {
            hosts.add(hostOf(info.address()));
        }
        return hosts;
    }

    /** The host part of a barrier task's address ("host:port", "[v6]:port" or a bare host). */
    static String hostOf(String address) {
        if (address.startsWith("[")) {
            int end = address.indexOf(']');
            return end > 0 ? address.substring(1, end) : address;
        }
        int colon = address.lastIndexOf(':');
        return colon > 0 && address.indexOf(':') == colon ? address.substring(0, colon) : address;
    }
}
