package io.kolo;

import io.kolo.bootstrap.KeyValueStore;
import io.kolo.bootstrap.LazyLogger;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Calls to the job's store that a failure message can afford: answered within a bound, or given up on. The store may
 * be served on a host that stopped answering itself (rank 0's, without a launcher), and its client waits half a minute
 * before it gives up on an answer; a message must not.
 */
final class BoundedStore {
    private static final System.Logger LOG = LazyLogger.of(BoundedStore.class);

    /** What a bounded read found: the value, if any, and whether the store answered at all. */
    record Read(boolean answered, Optional<String> value) {
    }

    private BoundedStore() {
    }

    /** {@code key}'s value, read within {@code millis}. */
    static Read read(KeyValueStore store, String key, long millis) {
        Optional<Optional<String>> got = within(() -> store.tryGet(key), millis, key);
        return got.map(v -> new Read(true, v)).orElseGet(() -> new Read(false, Optional.empty()));
    }

    /** Sets {@code key} to {@code value} unless it is set, giving up after {@code millis}. */
    static void putIfAbsent(KeyValueStore store, String key, String value, long millis) {
        within(() -> store.putIfAbsent(key, value), millis, key);
    }

    private static <T> Optional<T> within(Supplier<T> call, long millis, String key) {
        CompletableFuture<T> done = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                done.complete(call.get());
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        try {
            return Optional.of(done.get(millis, TimeUnit.MILLISECONDS));
        } catch (ExecutionException | TimeoutException e) {
            LOG.log(System.Logger.Level.DEBUG, "no answer from the store for " + key, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }
}
