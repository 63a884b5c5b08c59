package dev.etcdmigrate.inspect;

import dev.etcdmigrate.log.Json;

/**
 * {@code inspect -o json}: the report as one JSON object, each record component a field, in declaration order
 * (docs/inspect.md). Renders only: it reads nothing.
 */
public final class InspectJson {

    private InspectJson() {}

    public static String render(InspectReport report) {
        return Json.object(report);
    }
}
