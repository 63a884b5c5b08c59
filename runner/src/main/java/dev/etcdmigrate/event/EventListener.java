package dev.etcdmigrate.event;

/** Subscribes to a run's events (a log format, a file, a test). Called on the emitting thread. */
@FunctionalInterface
public interface EventListener {
    void on(Event event);
}
