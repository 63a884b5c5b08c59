package dev.etcdmigrate.error;

/** An exception as words for a message: never a raw "null" (a ConnectException from the HTTP client has no message). */
public final class Reason {

    private Reason() {}

    /** The exception's message, else its type and its cause's message, else its type. */
    public static String of(Throwable e) {
        if (e == null) return "no detail";
        String message = e.getMessage();
        if (message != null && !message.isBlank()) return message;
        String type = e.getClass().getSimpleName();
        Throwable cause = e.getCause();
        if (cause != null
                && cause != e
                && cause.getMessage() != null
                && !cause.getMessage().isBlank()) {
            return type + ": " + cause.getMessage();
        }
        return type;
    }
}
