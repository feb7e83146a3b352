package io.kolo.launcher.workers;

import io.kolo.Kolo;
import io.kolo.ReduceOp;
import io.kolo.elastic.Elastic;
import io.kolo.elastic.ObjectState;

import java.util.Map;

/**
 * An elastic program that calls a collective outside {@code Elastic.run}: {@code ElasticOutside before} an allreduce
 * before it, {@code ElasticOutside after} a barrier after it, {@code ElasticOutside commit} a commit after it (its
 * host check is an allreduce). Under an elastic launcher each must fail at once.
 */
public final class ElasticOutside {
    private ElasticOutside() {
    }

    public static void main(String[] args) {
        Kolo.init();
        try {
            if (args[0].equals("before")) {
                Kolo.allreduce(new float[]{1}, ReduceOp.SUM);
            }
            ObjectState state = new ObjectState(Map.of());
            Elastic.run(state, s -> Kolo.allreduce(new float[]{1}, ReduceOp.SUM));
            if (args[0].equals("commit")) {
                state.commit();
            }
            Kolo.barrier();
        } finally {
            Kolo.shutdown();
        }
    }
}
