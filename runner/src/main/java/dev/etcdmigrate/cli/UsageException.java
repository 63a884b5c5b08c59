package dev.etcdmigrate.cli;

/** Bad command line or environment: the message says what was wrong; nothing was touched. */
public final class UsageException extends Exception {
    public UsageException(String message) {
        super(message);
    }
}
