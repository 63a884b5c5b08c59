package dev.etcdmigrate.etcd.server;

import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/** The first of the line's v2 refusals (catalog) that a private etcd's output contained. */
final class V2RefusalWatch implements Consumer<String> {
    private final List<String> refusals;
    private volatile String seen;

    V2RefusalWatch(List<String> refusals) {
        this.refusals = refusals;
    }

    @Override
    public void accept(String line) {
        if (seen != null) return;
        for (String refusal : refusals) {
            if (line.contains(refusal)) {
                seen = refusal;
                return;
            }
        }
    }

    Optional<String> seen() {
        return Optional.ofNullable(seen);
    }
}
