package io.kolo.bench;

import java.util.List;

/**
 * Where {@code kolo bench} runs its ranks when they are given hosts ({@code -H} or {@code --hostfile}), and how the
 * Open MPI peer reaches the same hosts: {@code mpirun --host} with the same ranks per host, over TCP, restricted to
 * the same network interface and started over the same ssh.
 *
 * @param slots            {@code host:ranks} in rank order, e.g. {@code node-0:1,node-1:1} as a list
 * @param networkInterface the interface both sides use (Kolo's {@code --network-interface}), or null: any
 * @param sshAgent         the ssh client command line for mpirun's {@code plm_rsh_agent} (from
 *                         {@code KOLO_SSH_COMMAND}), or null: mpirun's own default
 * @param sshArgs          extra ssh arguments for mpirun's {@code plm_rsh_args} ({@code -p PORT}, {@code -i KEY})
 * @param bindTo           Kolo's {@code --bind-to} ({@code core}, {@code socket} or {@code none}), given to mpirun too so
 *                         that both place their ranks alike
 */
public record BenchHosts(List<String> slots, String networkInterface, String sshAgent, List<String> sshArgs,
                         String bindTo) {
    /** Validates and copies the lists. */
    public BenchHosts {
        if (slots.isEmpty()) {
            throw new IllegalArgumentException("no hosts");
        }
        slots = List.copyOf(slots);
        sshArgs = List.copyOf(sshArgs);
    }

    /** The hosts as mpirun's {@code --host} takes them: {@code node-0:1,node-1:1}. */
    public String hostList() {
        return String.join(",", slots);
    }

    /** Whether the ranks span more than one host (then no shared memory joins them all). */
    public boolean spansHosts() {
        return slots.size() > 1;
    }

    /** Whether no host runs more than one rank (Kolo's {@code auto} transport is then TCP everywhere). */
    public boolean oneRankPerHost() {
        return slots.stream().allMatch(s -> s.endsWith(":1"));
    }
}
