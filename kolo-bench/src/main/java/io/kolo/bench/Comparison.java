package io.kolo.bench;

/**
 * A Kolo series set against a peer: per size, Kolo's bus bandwidth over the peer's (equivalently the peer's
 * time over Kolo's). Above 1 Kolo is faster.
 */
public record Comparison(String kolo, String peer) {
    public String label() {
        return kolo + " / " + peer;
    }

    /** The ratio at this size, or NaN when either side has no measurement there. */
    public double ratio(Report report, long bytes) {
        Series k = report.series(kolo);
        Series p = report.series(peer);
        Measurement km = k == null ? null : k.at(bytes);
        Measurement pm = p == null ? null : p.at(bytes);
        if (km == null || pm == null || km.avgSeconds() <= 0) {
            return Double.NaN;
        }
        return pm.avgSeconds() / km.avgSeconds();
    }

    /** The same on median times: steadier than the average when the machine is busy with other work. */
    public double medianRatio(Report report, long bytes) {
        Series k = report.series(kolo);
        Series p = report.series(peer);
        Measurement km = k == null ? null : k.at(bytes);
        Measurement pm = p == null ? null : p.at(bytes);
        if (km == null || pm == null || km.medianSeconds() <= 0) {
            return Double.NaN;
        }
        return pm.medianSeconds() / km.medianSeconds();
    }
}
