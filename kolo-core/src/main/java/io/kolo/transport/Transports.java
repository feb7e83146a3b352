package io.kolo.transport;

import io.kolo.bootstrap.HostName;
import io.kolo.bootstrap.JobEnvironment;
import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.KoloSettings;
import io.kolo.bootstrap.StartWait;
import io.kolo.bootstrap.StoreKeys;
import io.kolo.launch.JobSecret;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Picks and builds a rank's transport from {@code KOLO_TRANSPORT}: shared memory between ranks of one host, TCP
 * between hosts ({@code auto}, the default, and {@code shm}), or TCP for every pair ({@code tcp}).
 *
 * <p>Ranks find their host mates through the rendezvous store: each publishes a host key ({@code host/<rank>}) made
 * of the host name, the kernel boot id and the identity of {@code /dev/shm}, so two containers of one machine that
 * do not share {@code /dev/shm} count as different hosts. Under {@code auto} a rank that cannot use {@code /dev/shm}
 * publishes a key of its own and so talks TCP to everyone, consistently on both ends of each pair.
 */
public final class Transports {
    /** Values of {@code KOLO_TRANSPORT}. */
    public enum Mode {
        AUTO, SHM, TCP
    }

    private Transports() {
    }

    /** Reads {@code KOLO_TRANSPORT} (default {@code auto}). */
    public static Mode mode(Map<String, String> env) {
        return Mode.valueOf(KoloSettings.TRANSPORT.from(env).toUpperCase(Locale.ROOT));
    }

    /** Reads {@code KOLO_SHM_RING_BYTES} (default {@link ShmTransport#DEFAULT_RING_BYTES}). */
    public static long ringBytes(Map<String, String> env) {
        return KoloSettings.SHM_RING_BYTES.from(env);
    }

    /** Reads {@code KOLO_SHM_SINGLE_COPY} (default {@code auto}): whether large messages may be read straight. */
    public static ShmTransport.SingleCopy singleCopy(Map<String, String> env) {
        return switch (KoloSettings.SHM_SINGLE_COPY.from(env)) {
            case "on" -> ShmTransport.SingleCopy.ALWAYS;
            case "off" -> ShmTransport.SingleCopy.NEVER;
            default -> ShmTransport.SingleCopy.AUTO;
        };
    }

    /** The name under which a job's shared-memory segments are created: derived from, but not revealing, its secret. */
    public static String jobTag(JobSecret secret) {
        byte[] mac = secret.mac("kolo shared-memory job tag".getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(mac, 0, 6);
    }

    /**
     * Connects this rank of {@code job} (size > 1) to every other rank, as {@code KOLO_TRANSPORT} asks.
     *
     * @param bindAddress where this rank's TCP listener binds and what it advertises to other hosts
     */
    public static Transport connect(JobEnvironment job, InetAddress bindAddress, KeyValueStore store,
                                    JobSecret secret) {
        Mode mode = mode(job.env());
        long ringBytes = ringBytes(job.env());
        ShmTransport.SingleCopy singleCopy = singleCopy(job.env());
        if (mode == Mode.TCP) {
            return tcp(job, bindAddress, store, secret);
        }
        if (mode == Mode.SHM && !ShmSegments.available()) {
            throw new IllegalArgumentException("KOLO_TRANSPORT=shm but " + ShmTransport.DIR + " is missing or not"
                    + " writable on this host; use KOLO_TRANSPORT=auto or tcp");
        }
        int[] hostRanks = hostRanks(job, store);
        if (hostRanks.length == 1) {
            return tcp(job, bindAddress, store, secret);
        }
        ShmTransport shm = ShmTransport.connect(job.rank(), job.size(), hostRanks, store, jobTag(secret), ringBytes,
                job.startTimeout(), job.timeout(), singleCopy);
        if (hostRanks.length == job.size()) {
            return shm;
        }
        try {
            return new HostRoutingTransport(shm, tcp(job, bindAddress, store, secret));
        } catch (RuntimeException e) {
            shm.close();
            throw e;
        }
    }

    private static Transport tcp(JobEnvironment job, InetAddress bindAddress, KeyValueStore store,
                                 JobSecret secret) {
        return TcpTransport.connect(job.rank(), job.size(), bindAddress, store, secret, job.startTimeout(),
                job.timeout());
    }

    /** The ranks that share this rank's host (sorted, including it), agreed through the store. */
    static int[] hostRanks(JobEnvironment job, KeyValueStore store) {
        String mine = ShmSegments.available() ? hostKey() : "no-shm/rank-" + job.rank();
        store.put(StoreKeys.host(job.rank()), mine);
        long deadline = System.nanoTime() + job.startTimeout().toNanos();
        List<String> hosts = StartWait.awaitEach(store, StoreKeys.HOSTS, job.size(), deadline, job.rank(),
                job.startTimeout(), "to publish their hosts");
        return IntStream.range(0, job.size()).filter(r -> mine.equals(hosts.get(r))).toArray();
    }

    /** Same value for processes that can map each other's files in {@code /dev/shm}. */
    static String hostKey() {
        StringBuilder key = new StringBuilder();
        key.append(HostName.local().orElse("unknown-host"));
        try {
            key.append('/').append(Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim());
        } catch (IOException | RuntimeException e) {
            // Not Linux: host name and /dev/shm identity still separate machines in practice.
        }
        try {
            key.append('/').append(Files.getAttribute(ShmTransport.DIR, "unix:dev"))
                    .append(':').append(Files.getAttribute(ShmTransport.DIR, "unix:ino"));
        } catch (IOException | RuntimeException e) {
            key.append("/shm-unknown");
        }
        return key.toString();
    }
}
