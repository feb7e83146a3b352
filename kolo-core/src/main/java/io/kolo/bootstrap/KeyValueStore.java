package io.kolo.bootstrap;

import io.kolo.KoloTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The job's rendezvous store: ranks publish and find addresses here, and failures are recorded here so
 * that every rank can name the rank that failed first. Served by the launcher, or by rank 0 when there
 * is no launcher; an in-memory implementation serves ranks that are threads of one JVM.
 *
 * <p>Keys used by Kolo: {@code addr/<rank>} (data-plane address {@code host:port}), {@code host/<rank>} (host key:
 * ranks with equal keys share memory), {@code shm/<leader>/file/<i>} and {@code shm/<leader>/mapped/<i>} (a host's
 * shared-memory segments, and "mapped every peer's segment"), {@code failure}
 * (first failure seen, {@code <rank>\t<message>}), {@code failed/<rank>} (cause recorded by whoever knows
 * it best, e.g. the launcher's "rank 2 exited with code 3").
 */
public interface KeyValueStore extends AutoCloseable {

    void put(String key, String value);

    /** Stores the value only if the key is absent; true if this call stored it. */
    boolean putIfAbsent(String key, String value);

    /** The value now, without waiting. */
    Optional<String> tryGet(String key);

    /**
     * Waits until the key is present.
     *
     * @throws io.kolo.KoloTimeoutException naming the key when it does not appear within {@code timeout}
     */
    String get(String key, Duration timeout);

    /**
     * Waits until every key {@code prefix + i}, for {@code i} from 0 to {@code count - 1}, is present, and returns
     * their values in that order. A remote store answers this in one round trip whatever {@code count} is, so that a
     * rank reading every other rank's entry (addresses, hosts) costs the store one request, not one per rank.
     *
     * @throws KoloTimeoutException naming a key still missing when they are not all present within {@code timeout}
     */
    default List<String> getEach(String prefix, int count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<String> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            values.add(get(prefix + i, Duration.ofNanos(Math.max(0, deadline - System.nanoTime()))));
        }
        return values;
    }

    /**
     * Throws when the job this view of the store belongs to can no longer form: an elastic launcher has published a newer
     * job ({@link GenerationReplacedException}). A rank waiting at start for a peer outside the store (a connection to
     * make or to accept) asks now and then, since a peer that died there says nothing; waits in the store notice by
     * themselves. Nothing to check for any other store.
     */
    default void checkStillForming() {
    }

    @Override
    void close();
}
