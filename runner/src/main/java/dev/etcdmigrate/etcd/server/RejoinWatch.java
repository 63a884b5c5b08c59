package dev.etcdmigrate.etcd.server;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Reads a rejoining member's output and tells, within seconds, that it cannot get back into its
 * cluster, so the step fails with etcd's own words instead of at --start-timeout. A restarted member
 * of a healthy cluster hears its leader within about one election timeout (1 s by default); so when
 * no leader is known after {@code patience} and etcd has logged why (a TLS handshake with a peer that
 * failed, peers that cannot be reached), that is the verdict. Errors that nothing cures (the peer
 * address is not this host's, the port is taken) are a verdict at once.
 */
public final class RejoinWatch implements Consumer<String> {

    /** A substring of etcd's output (any 3.x logger) and what it means for the member. */
    /** What etcd logs ({@code fragment}), what it means, and its kind as events name it. */
    record Symptom(String kind, String fragment, String meaning, boolean definitive, boolean peersDown) {
        Symptom(String kind, String fragment, String meaning, boolean definitive) {
            this(kind, fragment, meaning, definitive, false);
        }
    }

    // Ordered by how much they explain: the first kind seen is the one reported.
    private static final List<Symptom> SYMPTOMS = List.of(
            new Symptom(
                    "address-not-local",
                    "bind: cannot assign requested address",
                    "its peer URL's address is not an address of this host",
                    true),
            new Symptom(
                    "port-taken", "bind: address already in use", "its peer port is already taken on this host", true),
            new Symptom(
                    "tls-unknown-ca",
                    "x509: certificate signed by unknown authority",
                    "a TLS handshake with a peer failed: the certificates are not signed by the CA the other side trusts"
                            + " (check --peer-trusted-ca-file on this member and the peers)",
                    false),
            new Symptom(
                    "tls-wrong-name",
                    "x509: certificate is valid for",
                    "a TLS handshake with a peer failed: a certificate does not name the address it is used on",
                    false),
            new Symptom(
                    "tls-rejected",
                    "tls: bad certificate",
                    "a TLS handshake with a peer failed: the peers reject this member's certificate",
                    false),
            new Symptom(
                    "tls-untrusted-ca",
                    "tls: unknown certificate authority",
                    "a TLS handshake with a peer failed: the peers do not trust the CA of this member's certificate",
                    false),
            new Symptom("tls-failed", "remote error: tls", "a TLS handshake with a peer failed", false),
            new Symptom(
                    "peers-refuse",
                    "connection refused",
                    "its peers refuse connections: too few members are running for a quorum",
                    false,
                    true),
            new Symptom("no-route", "no route to host", "its peers cannot be reached over the network", false, true),
            new Symptom("peers-silent", "i/o timeout", "its peers do not answer over the network", false, true),
            new Symptom(
                    "peers-unreachable", "failed to reach the peer url", "its peers cannot be reached", false, true));

    private static final int QUOTE = 400;

    private final Duration patience;
    /** For peers that are not running (yet): kubelets restart the members of an all-at-once edit up to ~20 s apart. */
    private final Duration peersDownPatience;

    private final LongSupplier clock;
    private final long start;
    private Runnable onVerdict = () -> {};
    private boolean leader;
    private long leaderlessSince;
    private int worst = Integer.MAX_VALUE;
    private String worstLine = "";
    private boolean notified;

    /** For a private etcd that rejoins nothing (one-member cluster): never a verdict. */
    public static RejoinWatch disabled() {
        return new RejoinWatch(null, null, System::nanoTime);
    }

    /**
     * patience: how long without a leader a failed handshake with a peer is tolerated; peersDownPatience: the same
     * for peers that do not run (refused, unreachable), which may be restarting together with this member.
     */
    public RejoinWatch(Duration patience, Duration peersDownPatience) {
        this(patience, peersDownPatience, System::nanoTime);
    }

    RejoinWatch(Duration patience, Duration peersDownPatience, LongSupplier clock) {
        this.patience = patience;
        this.peersDownPatience = peersDownPatience;
        this.clock = clock;
        this.start = clock.getAsLong();
        this.leaderlessSince = start;
    }

    /** Called once, from the output thread, when a verdict is first reached (e.g. to stop the etcd). */
    public synchronized RejoinWatch onVerdict(Runnable action) {
        this.onVerdict = action;
        return this;
    }

    @Override
    public void accept(String line) {
        Runnable notify = null;
        synchronized (this) {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.contains("elected leader")) {
                leader = true;
            } else if (lower.contains("lost leader")) {
                leader = false;
                leaderlessSince = clock.getAsLong();
            }
            for (int i = 0; i < Math.min(worst, SYMPTOMS.size()); i++) {
                if (lower.contains(SYMPTOMS.get(i).fragment())) {
                    worst = i;
                    worstLine = line.length() > QUOTE ? line.substring(0, QUOTE) + "..." : line;
                    break;
                }
            }
            if (!notified && verdictNow().isPresent()) {
                notified = true;
                notify = onVerdict;
            }
        }
        if (notify != null) notify.run();
    }

    /** Why the member cannot rejoin, quoting etcd; empty while it may still get in. */
    public synchronized Optional<String> verdict() {
        return verdictNow();
    }

    /** The verdict as data: the symptom's kind, whether it alone decided, how long there was no leader, etcd's line. */
    public record Finding(String kind, boolean definitive, long leaderlessSeconds, String etcdLine) {}

    public synchronized Optional<Finding> finding() {
        if (verdictNow().isEmpty()) return Optional.empty();
        Symptom symptom = SYMPTOMS.get(worst);
        long leaderless = leader
                ? 0
                : Duration.ofNanos(clock.getAsLong() - leaderlessSince).toSeconds();
        return Optional.of(new Finding(symptom.kind(), symptom.definitive(), leaderless, worstLine));
    }

    private Optional<String> verdictNow() {
        if (patience == null || worst == Integer.MAX_VALUE) {
            return Optional.empty();
        }
        Symptom symptom = SYMPTOMS.get(worst);
        if (symptom.definitive()) {
            return Optional.of(symptom.meaning() + " (etcd: " + worstLine + ")");
        }
        long leaderless = clock.getAsLong() - leaderlessSince;
        Duration wait = symptom.peersDown() ? peersDownPatience : patience;
        if (leader || leaderless < wait.toNanos()) {
            return Optional.empty();
        }
        return Optional.of("no raft leader after "
                + Duration.ofNanos(leaderless).toSeconds() + " s: " + symptom.meaning() + " (etcd: " + worstLine + ")");
    }
}
