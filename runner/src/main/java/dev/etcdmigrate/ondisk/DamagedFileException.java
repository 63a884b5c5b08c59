package dev.etcdmigrate.ondisk;

import java.io.IOException;

/** A reader met {@link Damage}: the file is not what its format says. Checked, so every caller decides what it means. */
public final class DamagedFileException extends IOException {

    private final Damage damage;

    public DamagedFileException(Damage damage) {
        super(damage.describe());
        this.damage = damage;
    }

    public Damage damage() {
        return damage;
    }
}
