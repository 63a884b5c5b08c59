package dev.etcdmigrate.decide;

import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.ondisk.Damage;
import java.util.List;

/**
 * The readers proved the data damaged: refused (exit 3) before any etcd runs on it, whatever the plan; the
 * message names each finding once (DamageExplanation adds what changed and the way back).
 */
public final class DamagedDataException extends RefusedException {
    private final List<Damage> damage;

    DamagedDataException(List<Damage> damage) {
        super("the data is damaged: "
                + String.join("; ", damage.stream().map(Damage::describe).toList())
                + " (the runner's own reading of the files), so no etcd is started on it");
        this.damage = List.copyOf(damage);
    }

    public List<Damage> damage() {
        return damage;
    }
}
