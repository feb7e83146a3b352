package io.kolo.launcher.elastic;

import io.kolo.launcher.job.RankEnvironment;
import io.kolo.launcher.job.RankMap;

import io.kolo.bootstrap.AdvertisedAddress;
import io.kolo.bootstrap.RankVariables;
import io.kolo.launch.JobSecret;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Map;

/**
 * The variables an elastic job's new worker starts with: its placement in the generation that starts it, its id, and
 * the address by which its host reaches the launcher's store.
 *
 * @param store        the address the launcher's store listens on
 * @param loopbackOnly every host is this one and the hosts never change: the store listens on loopback only
 */
record ElasticWorkerEnvironment(ElasticPlan plan, JobSecret secret, InetSocketAddress store, boolean loopbackOnly) {

    Map<String, String> of(String id, RankMap.Slot slot, int generation) {
        InetAddress dial = dialAddress(slot.host());
        RankVariables vars = RankEnvironment.koloVars(slot, new InetSocketAddress(dial, store.getPort()), secret,
                plan.startTimeoutSeconds());
        if (plan.networkInterface() != null) {
            vars.networkInterface(plan.networkInterface());
        }
        // Survivors wait for the next generation while the launcher waits up to the elastic timeout for slots.
        vars.elastic(id, generation, plan.elasticTimeout().toSeconds() + plan.startTimeoutSeconds());
        return vars.over(plan.exports());
    }

    private InetAddress dialAddress(String host) {
        if (loopbackOnly || plan.isLocal().test(host)) {
            return loopbackOnly || plan.networkInterface() == null ? InetAddress.getLoopbackAddress()
                    : store.getAddress();
        }
        if (plan.networkInterface() != null || plan.agent() != null) {
            // Through an rsh agent host names are opaque: the agent's connection tells the address (AgentOffice).
            return store.getAddress();
        }
        try {
            InetAddress route = AdvertisedAddress.routeTo(InetAddress.getByName(host));
            return route != null ? route : InetAddress.getLoopbackAddress();
        } catch (UnknownHostException e) {
            return InetAddress.getLoopbackAddress();
        }
    }
}
