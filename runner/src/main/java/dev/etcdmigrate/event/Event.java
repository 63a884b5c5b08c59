package dev.etcdmigrate.event;

/**
 * What the runner did or decided, as data. Text logs, JSON logs and tests subscribe to these (see
 * {@code log.Log}); nothing here ever carries a key's value. Each event knows its kebab-case name
 * (the JSON "event" field) and the sentence an operator reads. The events live in a few files by
 * subject, each a sealed sub-interface listing its records in the order of the contract (events.golden).
 */
public sealed interface Event
        permits Event.Note,
                RunEvent,
                DecisionEvent,
                StepEvent,
                BackupEvent,
                EtcdEvent,
                KeysEvent,
                ProvisionEvent,
                RestoreEvent,
                RolloutEvent {

    enum Level {
        INFO,
        WARN,
        ERROR
    }

    /** The sentence the text log prints; JSON logs carry it as "message" next to the fields. */
    String message();

    default Level level() {
        return Level.INFO;
    }

    /** The JSON "event" name, part of the operator contract ({@link EventNames}). */
    default String name() {
        return EventNames.of(this);
    }

    /** A diary line with no fields of its own. */
    record Note(Level level, String message) implements Event {}
}
