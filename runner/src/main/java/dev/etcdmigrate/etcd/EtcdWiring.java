package dev.etcdmigrate.etcd;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.AtomicFile;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.backend.BackendQuota;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.binary.BinaryCheck;
import dev.etcdmigrate.etcd.client.ClusterClient;
import dev.etcdmigrate.etcd.client.FirstUseHttpClient;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.client.PemTls;
import dev.etcdmigrate.etcd.server.ClusterPeers;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.etcd.server.ServingMember;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.step.StepContext;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Builds a run's etcd objects from its options: the binary questions asked before any step, and the steps'
 * context (the private etcd's settings, ports, quota, peers, HTTP client, and the adapter over them). The
 * run ({@code run.Migration}) says when; this says how, so the order of a run reads without the wiring.
 */
public final class EtcdWiring {

    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(10);
    /** The lease a key under TTL_KEYS_DIRECTORY gets when it had no TTL in v2 (the Kubernetes image's hour). */
    private static final Duration DEFAULT_TTL_KEY_LEASE = Duration.ofHours(1);

    private final RunConfig options;
    private final DataDir dataDir;
    private final BinDir binDir;
    private final Log log;
    private final Children children;
    private final Map<String, String> environment;
    /** The private etcds' HTTP client, made at its first request: by then the first private etcd is starting. */
    private final HttpClient http = new FirstUseHttpClient(GatewayClient::newHttpClient);

    public EtcdWiring(
            RunConfig options,
            DataDir dataDir,
            BinDir binDir,
            Log log,
            Children children,
            Map<String, String> environment) {
        this.options = options;
        this.dataDir = dataDir;
        this.binDir = binDir;
        this.log = log;
        this.children = children;
        this.environment = environment;
    }

    /** Remembered answers of earlier starts (a restart of an unchanged pod asks no binary again). */
    public BinaryCheck binaryCheck() throws IOException {
        Path file = dataDir.own().binaryChecks();
        List<String> lines = Files.isRegularFile(file) ? Files.readAllLines(file) : List.of();
        return new BinaryCheck(children).remembering(lines);
    }

    /**
     * Each program a step runs must be the release its name says; and the etcd this run ends in must accept
     * the arguments it will be exec'd with (and be the version its name says), before any step: found after
     * a migration, a rejected flag is a crash-looping pod.
     *
     * @param servingReleases what a cluster member serves as between the legs of a rollout across minors: each
     *     must accept the arguments after -- as the target does
     * @param catalogRelease the target's catalog entry, parsed only when a binary must actually be asked
     */
    public List<BinaryCheck.Question> binaryQuestions(
            List<Step> steps,
            List<Release> servingReleases,
            BinaryCheck binaries,
            Function<EtcdVersion, Optional<Release>> catalogRelease)
            throws MigrateException {
        List<BinaryCheck.Question> questions = new ArrayList<>();
        for (Asked asked : asked(steps, servingReleases, catalogRelease)) {
            Path path = asked.path().get();
            questions.add(
                    switch (asked) {
                        case Asked.Version v -> () -> binaries.expect(path, v.tool(), v.release());
                        case Asked.Accepts a -> {
                            List<String> args =
                                    a.release().map(r -> argsFor(r, a.runs())).orElseGet(options::finalEtcdArgs);
                            yield () -> binaries.targetAccepts(path, a.version(), a::release, args, environment);
                        }
                    });
        }
        return questions;
    }

    /**
     * Starts the processes of {@link #binaryQuestions} now, each on its own thread, while the run reads its data:
     * their answers are judged where the questions are asked, and a question the plan under the lock does not
     * ask again is only waited for ({@link BinaryCheck#awaitUnasked}). Logs nothing; a binary that is missing is
     * left to the checks to refuse.
     */
    public void startAsking(
            List<Step> steps,
            List<Release> servingReleases,
            BinaryCheck binaries,
            Function<EtcdVersion, Optional<Release>> catalogRelease) {
        for (Asked asked : asked(steps, servingReleases, catalogRelease)) {
            Path path;
            try {
                path = asked.path().get();
            } catch (MigrateException missing) {
                continue;
            }
            switch (asked) {
                case Asked.Version v -> binaries.startAsking(path, v.tool(), v.release());
                case Asked.Accepts a ->
                    binaries.startAsking(
                            path,
                            a.version(),
                            a.release()
                                    .map(r -> EtcdCommandLine.translate(
                                                    options.finalEtcdArgs(),
                                                    r.line().flagReplacements())
                                            .args())
                                    .orElseGet(options::finalEtcdArgs),
                            environment);
            }
        }
    }

    /** What a plan asks of the binaries: a step's program its version, an etcd that runs as the member its flags. */
    private sealed interface Asked {
        BinaryPath path();

        record Version(BinaryPath path, String tool, Release release) implements Asked {}

        /** {@code runs}: {@link #SERVING} between legs, {@link #TARGET} for the etcd the run ends in. */
        record Accepts(BinaryPath path, EtcdVersion version, Optional<Release> release, String runs) implements Asked {}
    }

    private interface BinaryPath {
        Path get() throws MigrateException;
    }

    private List<Asked> asked(
            List<Step> steps, List<Release> servingReleases, Function<EtcdVersion, Optional<Release>> catalogRelease) {
        List<Asked> asked = new ArrayList<>();
        EtcdVersion target = options.target().version();
        boolean askTarget = !options.noExec() || !options.etcdArgs().isEmpty();
        for (Step.Binary binary :
                steps.stream().flatMap(s -> s.binaries().stream()).distinct().toList()) {
            if (askTarget
                    && binary.tool().equals("etcd")
                    && binary.release().etcdVersion().equals(target)) {
                continue; // the target's own question below checks its version too: one process fewer
            }
            asked.add(new Asked.Version(
                    () -> binDir.tool(binary.tool(), binary.release().etcdVersion()), binary.tool(), binary.release()));
        }
        for (Release serving : servingReleases) {
            // a release the member serves between legs runs with the target's arguments, in its line's spelling
            asked.add(new Asked.Accepts(
                    () -> binDir.etcd(serving.etcdVersion()), serving.etcdVersion(), Optional.of(serving), SERVING));
        }
        if (askTarget) {
            asked.add(new Asked.Accepts(() -> binDir.etcd(target), target, catalogRelease.apply(target), TARGET));
        }
        return asked;
    }

    private static final String SERVING = "serving";
    private static final String TARGET = "target";

    /** Per release: the arguments after -- in its line's spelling, each rename logged once. */
    private final Map<String, List<String>> argsByRelease = new java.util.HashMap<>();

    /**
     * The arguments after {@code --} (with the data dir) as {@code release}'s etcd must get them: each flag its line
     * rejects but knows by another name (the catalog's {@code line.flagReplacements}: {@code --experimental-*} and
     * the graduated names or feature gates, both ways) in the line's own spelling, with its value. A flag the line
     * has no name for stays, and the line's etcd refuses it before anything changes.
     */
    public List<String> argsFor(Release release, String runs) {
        return argsByRelease.computeIfAbsent(release.version() + " " + runs, k -> {
            EtcdCommandLine.Translated translated = EtcdCommandLine.translate(
                    options.finalEtcdArgs(), release.line().flagReplacements());
            for (DecisionEvent.FlagTranslated f : translations(release, runs, translated)) log.emit(f);
            return translated.args();
        });
    }

    /** What {@link #argsFor} renames for {@code release}, as the plan lists it; logs nothing. */
    public List<DecisionEvent.FlagTranslated> translations(Release release, boolean serving) {
        String runs = serving ? SERVING : TARGET;
        return translations(
                release,
                runs,
                EtcdCommandLine.translate(
                        options.finalEtcdArgs(), release.line().flagReplacements()));
    }

    private static List<DecisionEvent.FlagTranslated> translations(
            Release release, String runs, EtcdCommandLine.Translated translated) {
        return translated.renamed().stream()
                .map(r -> new DecisionEvent.FlagTranslated(release.version(), runs, r.given(), r.as()))
                .toList();
    }

    /** The arguments the target etcd is exec'd with: {@link #argsFor} the target's release, or as given without one. */
    public List<String> targetArgs(Optional<Release> target) {
        return target.map(r -> argsFor(r, TARGET)).orElseGet(options::finalEtcdArgs);
    }

    /** Kept once every check passed, so a refusal leaves nothing of this run behind. */
    public void rememberChecks(BinaryCheck binaries) throws IOException {
        if (binaries.changed()) {
            AtomicFile.write(dataDir.own().binaryChecks(), String.join("\n", binaries.remembered()) + "\n");
        }
    }

    /**
     * The cluster as the rollout's rules see it: the client URLs this member advertises and, on the other members'
     * hosts, the same scheme and port (etcd's usual layout; the member list then adds every member's own), spoken to
     * with the member's own client TLS files (etcd's --cert-file, --key-file, --trusted-ca-file after --).
     */
    public ClusterClient clusterClient(Topology.Member member, Release line) throws MigrateException {
        Topology.ClientTls client = member.clientTls();
        List<URI> own = new ArrayList<>();
        for (String url : client.clientUrls()) own.add(URI.create(url));
        List<URI> seeds = new ArrayList<>(own);
        URI first = own.getFirst();
        // the other members' peer URLs, from --initial-cluster
        List<URI> peers = new ArrayList<>();
        for (String url : member.peers().otherPeerUrls()) peers.add(URI.create(url));
        for (URI peer : peers) {
            URI guess = URI.create(
                    first.getScheme() + "://" + peer.getRawAuthority().replaceFirst(":\\d+$", "") + ":"
                            + (first.getPort() < 0 ? 2379 : first.getPort()));
            if (!seeds.contains(guess)) seeds.add(guess);
        }
        try {
            HttpClient http = PemTls.httpClient(client.certFile(), client.keyFile(), client.trustedCaFile());
            // the other members' peer URLs answer GET /members (etcd's peer API) with every member's client URLs: asked
            // before any guess while no client URL answers yet (this member's own etcd is down)
            Topology.PeerTls peerTls = member.peerTls();
            HttpClient peerHttp = PemTls.httpClient(peerTls.certFile(), peerTls.keyFile(), peerTls.trustedCaFile());
            return new ClusterClient(http, seeds, line.line().jsonGateway()).askingPeers(peerHttp, peers);
        } catch (IOException | java.security.GeneralSecurityException e) {
            throw new dev.etcdmigrate.error.RefusedException("the member's client TLS files (etcd's --cert-file,"
                    + " --key-file, --trusted-ca-file) cannot be used to reach the cluster: " + e.getMessage()
                    + " (nothing was changed)");
        }
    }

    /** The real member at {@code release}, between two legs of a rollout (see {@link ServingMember}). */
    public ServingMember serve(Release release, String nextLeg) throws IOException, MigrateException {
        return ServingMember.start(
                release,
                binDir.etcd(release.etcdVersion()),
                argsFor(release, SERVING),
                environment,
                nextLeg,
                children,
                log);
    }

    /** What the steps run on: the adapter over private etcds configured from the options and etcd's own flags. */
    public StepContext stepContext(Backups backups) {
        HttpClient client = http;
        // a member rejoining its peers needs the real etcd's peer TLS flags too
        List<String> serverArgs = new ArrayList<>(options.serverExtraArgs());
        if (options.topology() instanceof Topology.Member member) {
            serverArgs.addAll(member.peerTls().args());
        }
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                binDir,
                options.name(),
                new ServerPorts(options.clientPort(), options.peerPort()),
                BackendQuota.withRequested(serverArgs, options.etcd()),
                options.startTimeout(),
                options.stopGrace(),
                environment,
                client);
        if (options.walDir().isPresent()) {
            log.emit(new DecisionEvent.WalDirElsewhere(options.walDir().get().toString()));
            settings = settings.withWalDir(
                    new PrivateEtcd.WalDir(dataDir.path(), options.walDir().get()));
        }
        Peers peers = options.topology().peers();
        if (options.topology() instanceof Topology.Member member) {
            log.emit(new DecisionEvent.ClusterMember(
                    member.size(), String.valueOf(peers.initialCluster()), String.valueOf(peers.listenPeerUrls())));
            settings = settings.inCluster(new ClusterPeers(
                    peers.initialCluster(),
                    peers.advertisePeerUrls(),
                    peers.listenPeerUrls(),
                    member.clientTls().advertiseClientUrls()));
        }
        EtcdAdapter etcd = new EtcdAdapter(
                settings,
                new EtcdAdapter.Member(options.name(), peers.initialCluster(), peers.advertisePeerUrls()),
                new ToolRunner(log, children),
                children,
                log,
                TOOL_TIMEOUT,
                dataDir.path());
        return new StepContext(
                etcd,
                dataDir,
                settings.walDirFor(dataDir.path()),
                backups,
                log,
                new StepContext.Conversion(options.ttlKeysDirectory(), DEFAULT_TTL_KEY_LEASE));
    }
}
